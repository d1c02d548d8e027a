"""A dataset as Label Studio tasks, and a corrected Label Studio export back into it.

Label Studio (https://labelstud.io) imports a JSON list of tasks; each task's ``data`` names the
image, and its ``predictions`` (pre-labels, shown for a person to accept or correct) or
``annotations`` (finished labels) hold a ``result`` list of regions
(https://labelstud.io/guide/predictions, https://labelstud.io/guide/export#Label-Studio-JSON-format).
Here every card is one region:

* a ``polygonlabels`` result (``from_name`` ``"card"``): its 4 corners, TL, TR, BR, BL portrait,
  as percentages of the image's width and height (Label Studio's unit), with ``score`` (the
  model's confidence) in predictions;
* per-region ``choices`` results with the same ``id`` (``from_name`` ``count``, ``colour``,
  ``shape``, ``fill``, and ``partial``), as the labelling config :data:`LABEL_CONFIG` asks.

A photo a person checked is written as an annotation, the others as predictions. The export of
a project (Export -> JSON) is the same list with each task's ``annotations`` filled in; importing
it takes each task's latest annotation that was not cancelled (skipped). Region ids ``cardK`` are
the card's place on its photo when written: a card whose reading a person left as it was keeps
the model's confidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np

from vision.cards import ATTRIBUTES
from vision.dataset.records import (
    CORNER_DECIMALS,
    LabelledCard,
    LabelledPhoto,
    card_attributes,
    card_from_attributes,
)

__all__ = [
    "CARD_REGION",
    "LABEL_CONFIG",
    "LOCAL_FILES_PREFIX",
    "from_export",
    "local_files_url",
    "to_tasks",
]

#: ``from_name`` of the card polygons (and the one label they carry).
CARD_REGION: Final = "card"
#: ``from_name`` of the per-region choice marking a card cut by the edge or mostly covered.
PARTIAL: Final = "partial"
#: ``to_name``: the image tag of :data:`LABEL_CONFIG`.
IMAGE: Final = "image"
#: How Label Studio serves a file from its local-files storage: this prefix and the path below
#: ``LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT`` (https://labelstud.io/guide/storage#Local-storage).
LOCAL_FILES_PREFIX: Final = "/data/local-files/?d="


def _choices(name: str, values: Iterable[str], *, single: bool = True) -> str:
    kind = "single" if single else "multiple"
    options = "".join(f'<Choice value="{v}"/>' for v in values)
    return (
        f'  <Choices name="{name}" toName="{IMAGE}" perRegion="true" choice="{kind}" '
        f'showInline="true">{options}</Choices>\n'
    )


#: The Label Studio labelling config (Settings -> Labeling Interface -> Code) that the tasks fit.
LABEL_CONFIG: Final = (
    "<View>\n"
    f'  <Image name="{IMAGE}" value="${IMAGE}" zoom="true"/>\n'
    f'  <PolygonLabels name="{CARD_REGION}" toName="{IMAGE}" strokeWidth="2" pointSize="small">'
    f'<Label value="{CARD_REGION}"/></PolygonLabels>\n'
    + "".join(_choices(name, [str(v.value) for v in kind]) for name, kind in ATTRIBUTES)
    + _choices(PARTIAL, [PARTIAL], single=False)
    + "</View>\n"
)


def local_files_url(path: Path) -> str:
    """The URL of ``path`` in Label Studio's local-files storage with the document root ``/``
    (``LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT=/``): the absolute path without its first slash."""
    return LOCAL_FILES_PREFIX + quote(path.resolve().as_posix().lstrip("/"))


def _percent(value: float, size: int) -> float:
    return float(value) / size * 100.0


def _regions(photo: LabelledPhoto, with_scores: bool) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for k, card in enumerate(photo.cards):
        region = f"card{k}"
        common = {
            "id": region,
            "to_name": IMAGE,
            "original_width": int(photo.width),
            "original_height": int(photo.height),
            "image_rotation": 0,
        }
        points = [[_percent(x, photo.width), _percent(y, photo.height)] for x, y in card.corners]
        polygon: dict[str, Any] = {
            **common,
            "from_name": CARD_REGION,
            "type": "polygonlabels",
            "value": {"points": points, "closed": True, "polygonlabels": [CARD_REGION]},
        }
        if with_scores and card.confidence is not None:
            polygon["score"] = float(card.confidence)
        result.append(polygon)
        choices = {name: [str(v)] for name, v in card_attributes(card.card).items()}
        if card.partial:
            choices[PARTIAL] = [PARTIAL]
        for name, chosen in choices.items():
            result.append(
                {**common, "from_name": name, "type": "choices", "value": {"choices": chosen}}
            )
    return result


def to_tasks(
    photos: Iterable[LabelledPhoto], image_url: Callable[[LabelledPhoto], str]
) -> list[dict[str, Any]]:
    """The Label Studio import file (a list of tasks) of ``photos``.

    Args:
        photos: the dataset's photos.
        image_url: the URL Label Studio loads each photo from (:func:`local_files_url`).
    """
    import vision

    tasks = []
    for photo in photos:
        task: dict[str, Any] = {"data": {IMAGE: image_url(photo), "setvision_file": photo.file}}
        if photo.checked:
            task["annotations"] = [{"result": _regions(photo, False), "ground_truth": False}]
        else:
            scores = [c.confidence for c in photo.cards if c.confidence is not None]
            task["predictions"] = [
                {
                    "model_version": f"setvision {vision.__version__}",
                    "score": float(min(scores)) if scores else 0.0,
                    "result": _regions(photo, True),
                }
            ]
        tasks.append(task)
    return tasks


def from_export(
    tasks: Any,
    known: dict[str, LabelledPhoto],
    file_of: Callable[[str], str],
    size_of: Callable[[str], tuple[int, int]],
) -> list[LabelledPhoto]:
    """The photos a person labelled in a Label Studio export (JSON, a list of tasks).

    Each task with an annotation that was not cancelled gives one photo, checked, its cards
    from the latest such annotation; tasks without one are left out (nothing was decided).

    Args:
        tasks: the parsed export.
        known: the dataset's photos by ``file``: a card keeps its old confidence when its
            reading is the one the model gave (region ``cardK``, the K-th card when written).
        file_of: the dataset's ``file`` of a photo from the task's image URL, for tasks that
            carry no ``setvision_file`` (made outside setvision).
        size_of: a photo's (width, height) from its ``file``, for a photo the dataset lacks
            whose regions do not say it.

    Raises:
        ValueError: naming the task and region that cannot be read.
    """
    if not isinstance(tasks, list):
        raise ValueError("not a Label Studio JSON export: expected a list of tasks")
    photos = []
    for n, task in enumerate(tasks, start=1):
        name = f"task {task.get('id', n)}" if isinstance(task, dict) else f"task {n}"
        if not isinstance(task, dict):
            raise ValueError(f"{name}: expected an object, got {type(task).__name__}")
        try:
            photo = _photo(task, known, file_of, size_of)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            what = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise ValueError(f"{name}: {what}") from None
        if photo is not None:
            photos.append(photo)
    return photos


def _photo(
    task: dict[str, Any],
    known: dict[str, LabelledPhoto],
    file_of: Callable[[str], str],
    size_of: Callable[[str], tuple[int, int]],
) -> LabelledPhoto | None:
    done = [a for a in task.get("annotations") or [] if not a.get("was_cancelled", False)]
    if not done:
        return None
    data = task["data"]
    file = data.get("setvision_file") or file_of(str(data[IMAGE]))
    result = done[-1]["result"]  # Label Studio lists a task's annotations oldest first
    old = known.get(file)
    regions = [r for r in result if r.get("from_name") == CARD_REGION]
    if old is not None:
        width, height = old.width, old.height
    elif regions and "original_width" in regions[0]:
        width, height = int(regions[0]["original_width"]), int(regions[0]["original_height"])
    else:
        width, height = size_of(file)
    choices: dict[str, dict[str, Any]] = {}
    for item in result:
        if item.get("type") == "choices":
            picked = item["value"]["choices"]
            choices.setdefault(item["id"], {})[item["from_name"]] = picked[0] if picked else None
    scores = _prediction_scores(task)
    cards = []
    for region in regions:
        corners = _corners(region, width, height)
        chosen = choices.get(region["id"], {})
        card = card_from_attributes({k: v for k, v in chosen.items() if k != PARTIAL})
        confidence = None
        before = _old_card(old, region["id"])
        if before is not None and before.card == card:
            confidence = before.confidence
        elif region["id"] in scores and scores[region["id"]][0] == card:
            confidence = scores[region["id"]][1]
        cards.append(
            LabelledCard(
                corners=corners,
                card=card,
                partial=chosen.get(PARTIAL) == PARTIAL,
                confidence=confidence,
                checked=True,
            )
        )
    return LabelledPhoto(file=file, width=width, height=height, cards=tuple(cards), checked=True)


def _corners(region: dict[str, Any], width: int, height: int) -> np.ndarray:
    value = region["value"]
    kind = region.get("type")
    if kind == "polygonlabels":
        points = np.asarray(value["points"], np.float64)
        if points.shape != (4, 2):
            raise ValueError(
                f"region {region['id']}: a card has 4 corners, this polygon {len(points)}"
            )
    elif kind == "rectanglelabels":  # drawn as a box: x, y the top-left, turned about it
        x, y, w, h = (float(value[k]) for k in ("x", "y", "width", "height"))
        turn = math.radians(float(value.get("rotation", 0.0)))
        local = np.array([[0, 0], [w * width, 0], [w * width, h * height], [0, h * height]])
        rotation = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
        pixels = local / 100.0 @ rotation.T + [x / 100.0 * width, y / 100.0 * height]
        return np.round(pixels, CORNER_DECIMALS)
    else:
        raise ValueError(f"region {region.get('id')}: a {kind} region; cards are polygons")
    pixels = points / 100.0 * [width, height]
    return np.round(pixels, CORNER_DECIMALS)


def _old_card(old: LabelledPhoto | None, region: str) -> LabelledCard | None:
    if old is None or not region.startswith("card") or not region[4:].isdigit():
        return None
    k = int(region[4:])
    return old.cards[k] if k < len(old.cards) else None


def _prediction_scores(task: dict[str, Any]) -> dict[str, tuple[Any, float]]:
    """Region id -> (the card the latest prediction read there, its score)."""
    predictions = task.get("predictions") or []
    if not predictions or not isinstance(predictions[-1], dict):
        return {}
    result = predictions[-1].get("result") or []
    read: dict[str, dict[str, Any]] = {}
    scores: dict[str, float] = {}
    for item in result:
        if item.get("type") == "choices" and item["value"].get("choices"):
            read.setdefault(item["id"], {})[item["from_name"]] = item["value"]["choices"][0]
        elif item.get("from_name") == CARD_REGION and "score" in item:
            scores[item["id"]] = float(item["score"])
    out = {}
    for region, score in scores.items():
        chosen = {k: v for k, v in read.get(region, {}).items() if k != PARTIAL}
        try:
            out[region] = (card_from_attributes(chosen), score)
        except ValueError:
            continue
    return out


def file_from_url(url: str) -> Path | None:
    """The absolute path a local-files URL (:func:`local_files_url`) names; None for others."""
    parts = urlsplit(url)
    if parts.path.rstrip("/") != "/data/local-files":
        return None
    found = parse_qs(parts.query).get("d")
    return Path("/" + found[0]) if found else None
