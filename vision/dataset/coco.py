"""A dataset as COCO JSON (``annotations.json``), the file every other format is made from.

The layout is COCO's object-detection and keypoint format (https://cocodataset.org/#format-data),
which pycocotools, torchvision, CVAT, Roboflow and FiftyOne read:

* ``images``: ``id``, ``file_name`` (relative to the dataset folder), ``width``, ``height``, and
  ``checked`` (a person checked the whole photo, no card missing), and ``note`` if any;
* ``categories``: the 81 cards, id ``Card.index + 1``, named by their label ("2 red open
  ovals"), each with ``count``, ``colour``, ``shape``, ``fill`` and the corner keypoints'
  names; plus :data:`UNREAD_CATEGORY` for a card whose face was not read (partly hidden);
* ``annotations``: one per card: ``segmentation`` (its outline, one polygon of 4 points),
  ``bbox`` ``[x, y, w, h]`` and ``area`` (both within the photo), ``keypoints`` (the corners,
  TL, TR, BR, BL portrait, visibility 2, or 1 for a corner outside the photo), ``attributes``
  (the four attributes and ``partial``, CVAT's place for them), ``score`` (the model's
  confidence, null once a person changed the reading) and ``checked``.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any, Final

import numpy as np

from vision.cards import Card, full_deck
from vision.dataset.records import (
    LabelledCard,
    LabelledPhoto,
    card_attributes,
    card_from_attributes,
)
from vision.evaluation import polygon_intersection

__all__ = [
    "COCO_FORMAT_VERSION",
    "KEYPOINT_NAMES",
    "UNREAD_CATEGORY",
    "category_id",
    "from_coco",
    "to_coco",
]

#: Version of this layout, in ``info.setvision_format``: a later setvision that changes it can
#: still read older files.
COCO_FORMAT_VERSION: Final = 1
#: The keypoints of every category: the card's corners in portrait order.
KEYPOINT_NAMES: Final = ("top_left", "top_right", "bottom_right", "bottom_left")
#: The corners joined round the card (COCO's ``skeleton``, 1-based keypoint numbers).
SKELETON: Final = ((1, 2), (2, 3), (3, 4), (4, 1))
#: Category id of a card whose face was not read (81 cards take ids 1..81).
UNREAD_CATEGORY: Final = 82
#: COCO keypoint visibility: 2 labelled and visible, 1 labelled but not visible (here: outside
#: the photo, a corner of a card cut by its edge).
VISIBLE, OUTSIDE = 2, 1


def category_id(card: Card | None) -> int:
    """The COCO category of ``card``: ``card.index + 1`` (1..81), or :data:`UNREAD_CATEGORY`."""
    return UNREAD_CATEGORY if card is None else card.index + 1


def _categories() -> list[dict[str, Any]]:
    common: dict[str, Any] = {"supercategory": "card", "keypoints": list(KEYPOINT_NAMES)}
    common["skeleton"] = [list(pair) for pair in SKELETON]
    out = [
        {"id": category_id(card), "name": card.label, **common, **card_attributes(card)}
        for card in full_deck()
    ]
    out.append({"id": UNREAD_CATEGORY, "name": "card (not read)", **common})
    return sorted(out, key=lambda c: c["id"])


def _annotation(card: LabelledCard, number: int, image_id: int, photo: LabelledPhoto) -> dict:
    quad = card.corners
    frame = np.array(
        [[0, 0], [photo.width, 0], [photo.width, photo.height], [0, photo.height]], np.float64
    )
    low = np.clip(quad.min(axis=0), 0, [photo.width, photo.height])
    high = np.clip(quad.max(axis=0), 0, [photo.width, photo.height])
    inside = (quad[:, 0] >= 0) & (quad[:, 0] <= photo.width)
    inside &= (quad[:, 1] >= 0) & (quad[:, 1] <= photo.height)
    keypoints: list[float] = []
    for (x, y), seen in zip(quad.tolist(), inside, strict=True):
        keypoints += [x, y, VISIBLE if seen else OUTSIDE]
    size = np.round(high - low, 2)
    return {
        "id": number,
        "image_id": image_id,
        "category_id": category_id(card.card),
        "segmentation": [[round(v, 2) for v in quad.ravel().tolist()]],
        "area": round(polygon_intersection(quad, frame), 2),
        "bbox": [round(float(low[0]), 2), round(float(low[1]), 2), float(size[0]), float(size[1])],
        "iscrowd": 0,
        "keypoints": keypoints,
        "num_keypoints": 4,
        "attributes": {**card_attributes(card.card), "partial": bool(card.partial)},
        "score": None if card.confidence is None else round(float(card.confidence), 4),
        "checked": bool(card.checked),
    }


def to_coco(photos: Iterable[LabelledPhoto], *, description: str = "") -> dict[str, Any]:
    """The COCO JSON object of ``photos`` (ids: images and annotations numbered from 1)."""
    import vision

    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for image_id, photo in enumerate(photos, start=1):
        images.append(
            {
                "id": image_id,
                "file_name": photo.file,
                "width": int(photo.width),
                "height": int(photo.height),
                "checked": bool(photo.checked),
                **({"note": photo.note} if photo.note else {}),
            }
        )
        for card in photo.cards:
            annotations.append(_annotation(card, len(annotations) + 1, image_id, photo))
    today = datetime.date.today().isoformat()
    return {
        "info": {
            "description": description or "SET cards, labelled with setvision",
            "version": "1.0",
            "date_created": today,
            "contributor": f"setvision {vision.__version__}",
            "setvision_format": COCO_FORMAT_VERSION,
        },
        "licenses": [],
        "images": images,
        "annotations": annotations,
        "categories": _categories(),
    }


def from_coco(data: Any) -> list[LabelledPhoto]:
    """The photos of a COCO object written by :func:`to_coco` (or edited by a person).

    The corners come from ``keypoints`` (else from the ``segmentation`` polygon of 4 points),
    the card from ``attributes`` (else from ``category_id``).

    Raises:
        ValueError: naming the image or annotation that is not as expected.
    """
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise ValueError("not a COCO file: expected an object with an 'images' list")
    version = data.get("info", {}).get("setvision_format", COCO_FORMAT_VERSION)
    if isinstance(version, int) and version > COCO_FORMAT_VERSION:
        raise ValueError(
            f"written by a newer setvision (format {version}; this one reads up to "
            f"{COCO_FORMAT_VERSION}): update setvision"
        )
    cards: dict[Any, list[LabelledCard]] = {}
    for n, entry in enumerate(data.get("annotations", [])):
        try:
            cards.setdefault(entry["image_id"], []).append(_card(entry))
        except (KeyError, TypeError, ValueError) as error:
            what = f"missing {error}" if isinstance(error, KeyError) else str(error)
            number = entry.get("id", n + 1) if isinstance(entry, dict) else n + 1
            raise ValueError(f"annotation {number}: {what}") from None
    photos = []
    for n, image in enumerate(data["images"]):
        try:
            photos.append(
                LabelledPhoto(
                    file=str(image["file_name"]),
                    width=int(image["width"]),
                    height=int(image["height"]),
                    cards=tuple(cards.pop(image["id"], [])),
                    checked=bool(image.get("checked", False)),
                    note=str(image.get("note", "")),
                )
            )
        except (KeyError, TypeError, ValueError) as error:
            what = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise ValueError(f"image {n + 1}: {what}") from None
    if cards:
        raise ValueError(f"annotations name images that are not there: ids {sorted(cards)[:5]}")
    return photos


def _card(entry: dict[str, Any]) -> LabelledCard:
    if entry.get("keypoints"):
        points = np.asarray(entry["keypoints"], np.float64).reshape(-1, 3)[:, :2]
    else:
        points = np.asarray(entry["segmentation"][0], np.float64).reshape(-1, 2)
    if points.shape != (4, 2):
        raise ValueError(f"expected the card's 4 corners, got {len(points)} points")
    attributes = dict(entry.get("attributes") or {})
    card = card_from_attributes(attributes)
    category = entry.get("category_id")
    if card is None and isinstance(category, int) and 1 <= category <= 81:
        card = Card.from_index(category - 1)
    score = entry.get("score")
    return LabelledCard(
        corners=points,
        card=card,
        partial=bool(attributes.get("partial", False)),
        confidence=None if score is None else float(score),
        checked=bool(entry.get("checked", False)),
    )
