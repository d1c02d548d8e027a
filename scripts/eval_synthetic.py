#!/usr/bin/env python3
"""Stress-test detection and reading on rendered tables, one hard condition at a time.

Every condition renders the same seeded scenes (``vision.render.render_table``: cards, layout and
deck edition fixed per scene number; the camera, table or light changed) and feeds each one as a
JPEG through the whole ``setvision photo`` pipeline (``vision.pipeline.process_photo``, shipped
classifier). Detections are scored like ``scripts/eval_detection.py`` (polygon IoU >= 0.85,
``vision.evaluation``); a card is read right when it is found and all four attributes are right; a
table is right when every card is found and read right and nothing else is reported.

The default scene is a 12-card grid on wood at 1600 x 1200 (cards about 0.1 of the long side, as in
the annotated photos), a camera 10-20 degrees off vertical, light sensor noise, JPEG quality 90.
Each condition changes one factor; a few combine two. Every card a condition costs is put in one
failure class: ``missed`` (nothing covers it), ``merged`` (one quad over it and a neighbour),
``wrong quad`` (a quad over part of it, IoU < 0.85), ``misread`` (found, read wrong); detections
matching no card are ``extra quad on a card`` or ``false positive off the cards`` (a distractor,
the background).

The classifier is trained partly on crops of this renderer, so card accuracy here is optimistic;
the learned detector is trained on this renderer's tables too (other seeds), so its figures here
are optimistic as well.

    python scripts/eval_synthetic.py                          # table, about 2 minutes
    python scripts/eval_synthetic.py --only tilt_45 --only light --save /tmp/synth
    python scripts/eval_synthetic.py --scenes-per-condition 8 --seed 1 --json > synth.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "scripts"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from eval_detection import draw_failure  # noqa: E402
from script_args import at_least  # noqa: E402

from vision.cards import Card, full_deck  # noqa: E402
from vision.evaluation import (  # noqa: E402
    CardTruth,
    DetectionScore,
    PhotoTruth,
    match_quads,
    polygon_area,
    polygon_intersection,
    score_photo,
    summarise,
)
from vision.pipeline import Table, process_photo  # noqa: E402
from vision.render import apply_camera, apply_effects, render_table  # noqa: E402
from vision.warp import CROP_WIDTH  # noqa: E402

#: Fraction of a true card's area a wrong quad must cover to be blamed for it.
COVER: Final = 0.3
#: A card more than this share covered by cards on top of it need not be found (``partial``, as
#: the covered cards of the annotated heaps).
MAX_COVERED: Final = 0.25
#: Light sensor noise of every scene unless a condition says otherwise (grey levels).
BASE_NOISE: Final = 1.5


@dataclass(frozen=True)
class Condition:
    """One way of rendering and photographing the seeded scenes.

    Attributes:
        name: short name (``--only``).
        group: the factor varied (``--only`` takes it too).
        cards: cards on the table.
        size: frame (width, height).
        scene: extra ``render_table`` keywords (background, tilt_deg, distractors, ...).
        effects: ``apply_effects`` keywords; ``glare_at`` is set to a random card's centre.
        jpeg: JPEG quality of the photo handed to the pipeline.
        camera: ``apply_camera`` strength (its random mix of effects) instead of ``effects``.
    """

    name: str
    group: str
    cards: int = 12
    size: tuple[int, int] = (1600, 1200)
    scene: dict[str, Any] = field(default_factory=dict)
    effects: dict[str, float] = field(default_factory=lambda: {"noise": BASE_NOISE})
    jpeg: int = 90
    camera: float = 0.0

    def render_key(self) -> str:
        """What the clean render depends on (conditions sharing it share the render)."""
        return repr((self.cards, self.size, sorted(self.scene.items())))


def _c(name: str, group: str, **kw: Any) -> Condition:
    """A condition; keywords that are not :class:`Condition` fields go to ``render_table``."""
    fields = {k: kw.pop(k) for k in ("cards", "size", "effects", "jpeg", "camera") if k in kw}
    return Condition(name, group, scene=kw, **fields)


_DIM = {"exposure": 0.4, "noise": 4.0}
_BRIGHT = {"exposure": 1.1, "noise": BASE_NOISE}  # a white desk near the card paper's white
#: The conditions, in report order.
CONDITIONS: Final[tuple[Condition, ...]] = (
    _c("default", "default"),
    _c("dark_felt", "background", background="dark_felt"),
    _c("light_wood", "background", background="light_wood"),
    _c("white_desk", "background", background="white_desk"),
    _c("checked_cloth", "background", background="checked"),
    _c("printed_cloth", "background", background="print"),
    _c("tilt_0", "tilt", tilt_deg=0.0),
    _c("tilt_30", "tilt", tilt_deg=30.0),
    _c("tilt_45", "tilt", tilt_deg=45.0),
    _c("turn_30", "rotation", turn=np.radians(30.0)),
    _c("turn_45", "rotation", turn=np.radians(45.0)),
    _c("loose", "rotation", layout="loose"),
    _c("cards_1", "count", cards=1, margin=0.22),
    _c("cards_3", "count", cards=3),
    _c("cards_15", "count", cards=15),
    _c("cards_21", "count", cards=21),
    _c("touching", "touching", touching=True),
    _c("overlap", "touching", layout="loose", spacing=0.55),
    _c("paper", "distractors", distractors=3, distractor_kinds=("paper",)),
    _c("phone", "distractors", distractors=3, distractor_kinds=("phone",)),
    _c("box", "distractors", distractors=3, distractor_kinds=("box",)),
    _c("sticky_notes", "distractors", distractors=3, distractor_kinds=("note",)),
    _c("fingers", "distractors", fingers=3),
    _c("warm", "light", effects={"warm": 0.35, "noise": BASE_NOISE}),
    _c("dim", "light", effects=_DIM),
    _c("shadow", "light", effects={"shadow": 0.5, "noise": BASE_NOISE}),
    _c("glare", "light", effects={"glare": 180.0, "noise": BASE_NOISE}),
    _c("overexposed", "light", effects={"exposure": 1.4, "noise": BASE_NOISE}),
    _c("blur", "camera", effects={"blur": 2.5, "noise": BASE_NOISE}),
    _c("motion_blur", "camera", effects={"motion": 8.0, "noise": BASE_NOISE}),
    _c("noise", "camera", effects={"noise": 10.0}),
    _c("jpeg_35", "camera", jpeg=35),
    _c("phone_random", "camera", camera=0.7),
    _c("720p", "size", size=(1280, 720)),
    _c("1080p", "size", size=(1920, 1080)),
    _c("12mp", "size", size=(4000, 3000)),
    _c("touching_white_desk", "combined", touching=True, background="white_desk"),
    _c("white_desk_bright", "combined", background="white_desk", effects=_BRIGHT),
    _c("touching_tilt_45", "combined", touching=True, tilt_deg=45.0),
    _c("tilt_45_dim", "combined", tilt_deg=45.0, effects=_DIM),
    _c(
        "printed_cloth_clutter",
        "combined",
        background="print",
        distractors=3,
        distractor_kinds=("paper", "phone", "box", "note"),
    ),
    _c("cards_21_720p", "combined", cards=21, size=(1280, 720)),
)


def select(names: Sequence[str] | None) -> list[Condition]:
    """The conditions named (by name or group), all when ``names`` is empty or None.

    Raises:
        ValueError: for a name that is neither.
    """
    if not names:
        return list(CONDITIONS)
    known = {c.name for c in CONDITIONS} | {c.group for c in CONDITIONS}
    unknown = sorted(set(names) - known)
    if unknown:
        raise ValueError(f"unknown condition {unknown}; expected one of {sorted(known)}")
    return [c for c in CONDITIONS if c.name in names or c.group in names]


@dataclass(frozen=True)
class SceneResult:
    """One rendered scene through the pipeline.

    Attributes:
        truth: the true cards' corners as a photo for ``vision.evaluation``.
        score: its detection score.
        read_right: true cards found and read right on all four attributes.
        failures: cards (or detections) lost per failure class.
        card_width: median true card short side / frame long side.
        photo: (H, W, 3) uint8 BGR, the decoded JPEG the pipeline read.
        found: (M, 4, 2) float32, the pipeline's card corners.
    """

    truth: PhotoTruth
    score: DetectionScore
    read_right: int
    failures: Counter[str]
    card_width: float
    photo: npt.NDArray[np.uint8]
    found: npt.NDArray[np.float32]

    @property
    def table_right(self) -> bool:
        """Every card found and read right, nothing else reported."""
        return self.score.perfect and self.read_right == self.score.n_truth


def render_clean(
    cond: Condition, seed: int, index: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], list[Card]]:
    """Scene ``index``: (H, W, 3) uint8 frame with no camera effects, (N, 4, 2) corners, cards."""
    rng = np.random.default_rng([seed, index])
    deck = full_deck()
    cards = [deck[i] for i in rng.choice(len(deck), cond.cards, replace=False)]
    scene = {"background": "wood", **cond.scene}
    frame, corners = render_table(cards, rng, size=cond.size, strength=0.0, **scene)
    return frame, corners, cards


def photograph(
    cond: Condition,
    frame: npt.NDArray[np.uint8],
    corners: npt.NDArray[np.float32],
    seed: int,
    index: int,
) -> bytes:
    """The JPEG a camera under ``cond`` makes of a clean ``frame`` with cards at ``corners``."""
    rng = np.random.default_rng([seed, index, 1])
    unit = float(np.median(np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1))) / CROP_WIDTH
    if cond.camera > 0:
        shot = apply_camera(frame, rng, cond.camera, perspective=False, unit=unit)
    else:
        at = corners[int(rng.integers(len(corners)))].mean(axis=0)
        extra = {"glare_at": (float(at[0]), float(at[1]))} if "glare" in cond.effects else {}
        shot = apply_effects(frame, rng, unit=unit, **cond.effects, **extra)
    ok, buf = cv2.imencode(".jpg", shot, [cv2.IMWRITE_JPEG_QUALITY, cond.jpeg])
    assert ok
    return buf.tobytes()


def failure_classes(
    truth: npt.NDArray[np.float32],
    found: npt.NDArray[np.float32],
    matches: list[tuple[int, int, float]],
    read: dict[int, bool],
    partial: npt.NDArray[np.bool_] | None = None,
) -> Counter[str]:
    """Blame every lost card, and every detection matching none, on one failure class.

    Args:
        truth: (N, 4, 2) true corners.
        found: (M, 4, 2) detected corners.
        matches: ``vision.evaluation.match_quads(truth, found)``.
        read: for each matched true card, whether it was read right.
        partial: (N,) bool, cards that need not be found (mostly covered); a card and a
            detection over one of them cost nothing.
    """
    out: Counter[str] = Counter()
    matched_f = {f for _, f, _ in matches}
    spare = [f for f in range(len(found)) if f not in matched_f]
    areas = [polygon_area(q) for q in truth]
    cover = {
        (t, f): polygon_intersection(truth[t], found[f]) / areas[t]
        for t in range(len(truth))
        for f in spare
    }
    partial = np.zeros(len(truth), dtype=bool) if partial is None else partial
    blamed = {f for f in spare for t in np.flatnonzero(partial) if cover[t, f] >= COVER}
    for t in range(len(truth)):
        if partial[t]:
            continue
        if t in read:
            if not read[t]:
                out["misread"] += 1
            continue
        over = [f for f in spare if cover[t, f] >= COVER]
        if not over:
            out["missed"] += 1
            continue
        f = max(over, key=lambda g: cover[t, g])
        blamed.add(f)
        merged = any(cover[u, f] >= COVER for u in range(len(truth)) if u != t)
        out["merged" if merged else "wrong quad"] += 1
    for f in spare:
        if f in blamed:
            continue
        on_card = any(cover[t, f] * areas[t] >= 0.1 * polygon_area(found[f]) for t in
                      range(len(truth)))  # fmt: skip
        out["extra quad on a card" if on_card else "false positive off the cards"] += 1
    return out


def covered_share(
    corners: npt.NDArray[np.float32], size: tuple[int, int]
) -> npt.NDArray[np.float64]:
    """(N,) share of each card's area under the cards drawn after it (``render_table`` draws
    them in order, later ones on top), from masks at a quarter of the frame (width, height)."""
    w, h = (size[0] + 3) // 4, (size[1] + 3) // 4
    on_top = np.zeros((h, w), np.uint8)
    out = np.zeros(len(corners))
    for i in range(len(corners) - 1, -1, -1):
        card = np.zeros((h, w), np.uint8)
        cv2.fillPoly(card, [np.rint(corners[i] / 4.0).astype(np.int32)], 1)
        area = np.count_nonzero(card)
        out[i] = np.count_nonzero(card & on_top) / max(area, 1)
        on_top |= card
    return out


def run_scene(
    cond: Condition,
    seed: int,
    index: int,
    classifier: Any,
    clean: Callable[[Condition, int, int], tuple] = render_clean,
) -> SceneResult:
    """Render, photograph and read scene ``index`` of ``cond``; score detections and readings.

    ``clean`` makes the clean render (a cache may stand in for :func:`render_clean`).
    """
    frame, corners, cards = clean(cond, seed, index)
    jpeg = photograph(cond, frame, corners, seed, index)
    table: Table = process_photo(jpeg, classifier, draw=False).table
    height, width = frame.shape[:2]
    partial = covered_share(corners, (width, height)) > MAX_COVERED
    truth = PhotoTruth(
        path=f"{cond.name}/{index}",
        width=width,
        height=height,
        cards=tuple(CardTruth(q, partial=bool(p)) for q, p in zip(corners, partial)),
        source=cond.name,
    )
    found = np.asarray(table.corners, np.float32).reshape(-1, 4, 2)
    matches = match_quads(list(corners), list(found))
    read = {t: table.cards[f] == cards[t] for t, f, _ in matches if not partial[t]}
    short = np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    return SceneResult(
        truth=truth,
        score=score_photo(truth, found),
        read_right=sum(read.values()),
        failures=failure_classes(corners, found, matches, read, partial),
        card_width=float(np.median(short)) / max(width, height),
        photo=cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR),
        found=found,
    )


def evaluate(
    conditions: Sequence[Condition],
    scenes: int,
    seed: int,
    classifier: Any,
    save: Path | None = None,
) -> dict[str, Any]:
    """Run every scene of every condition.

    Clean renders shared by several conditions (the light and camera conditions share the
    default's) are made once. With ``save``, every scene that is not right is drawn there
    (``draw_failure`` of ``scripts/eval_detection.py``: truth green, missed red, detections blue,
    false positives magenta).

    Returns:
        JSON-ready figures: per condition and overall, plus the run time in seconds.
    """
    start = time.perf_counter()
    uses = Counter(c.render_key() for c in conditions)
    cache: dict[tuple[str, int], tuple] = {}

    def clean(cond: Condition, seed: int, index: int) -> tuple:
        key = (cond.render_key(), index)
        if uses[key[0]] == 1:
            return render_clean(cond, seed, index)
        if key not in cache:
            cache[key] = render_clean(cond, seed, index)
        return cache[key]

    out: dict[str, Any] = {"scenes_per_condition": scenes, "seed": seed, "conditions": {}}
    all_scores, all_fail = [], Counter()
    totals = {"cards": 0, "read_right": 0, "tables": 0, "tables_right": 0}
    for cond in conditions:
        t0 = time.perf_counter()
        results = [run_scene(cond, seed, i, classifier, clean) for i in range(scenes)]
        uses[cond.render_key()] -= 1
        if not uses[cond.render_key()]:
            for i in range(scenes):
                cache.pop((cond.render_key(), i), None)
        scores = [r.score for r in results]
        fail = sum((r.failures for r in results), Counter())
        cards = sum(s.n_truth for s in scores)
        read_right = sum(r.read_right for r in results)
        tables_right = sum(r.table_right for r in results)
        out["conditions"][cond.name] = {
            "group": cond.group,
            "card_width": round(float(np.median([r.card_width for r in results])), 3),
            "detection": summarise(scores).to_json(),
            "card_accuracy": round(read_right / cards, 4),
            "table_accuracy": round(tables_right / scenes, 4),
            "failures": dict(fail.most_common()),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        all_scores += scores
        all_fail += fail
        for k, v in (("cards", cards), ("read_right", read_right), ("tables", scenes),
                     ("tables_right", tables_right)):  # fmt: skip
            totals[k] += v
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            for i, r in enumerate(results):
                if not r.table_right:
                    drawn = draw_failure(r.photo, r.truth, r.found, r.score)
                    cv2.imwrite(str(save / f"{cond.name}_{i}.jpg"), drawn)
    out["overall"] = {
        "detection": summarise(all_scores).to_json(),
        "card_accuracy": round(totals["read_right"] / max(totals["cards"], 1), 4),
        "table_accuracy": round(totals["tables_right"] / max(totals["tables"], 1), 4),
        "failures": dict(all_fail.most_common()),
    }
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def print_table(result: dict[str, Any]) -> None:
    """One row per condition of :func:`evaluate`'s result, then the overall row."""
    head = (
        f"{'condition':22s} {'group':11s} {'card/W':>6s} {'cards':>5s} {'recall':>7s} "
        f"{'prec':>7s} {'perfect':>7s} {'c.med':>5s} {'c.p95':>5s} {'read':>7s} {'tables':>6s}  "
        "failures (cards or detections)"
    )
    print(head)
    n = result["scenes_per_condition"]
    rows = list(result["conditions"].items()) + [("overall", result["overall"])]
    for name, r in rows:
        d = r["detection"]
        if name == "overall":
            print("-" * len(head))
        fails = ", ".join(f"{k} {v}" for k, v in r["failures"].items())
        med, p95 = d["corner_median"], d["corner_p95"]
        print(
            f"{name:22s} {r.get('group', ''):11s} {r.get('card_width', ''):>6} "
            f"{d['truth']:5d} {100 * d['recall']:6.1f}% {100 * d['precision']:6.1f}% "
            f"{d['perfect_photos']:3d}/{d['photos'] if name == 'overall' else n:<3d} "
            f"{med:5.1f} {p95:5.1f} {100 * r['card_accuracy']:6.1f}% "
            f"{100 * r['table_accuracy']:5.0f}%  {fails}"
        )
    print(f"{result['seconds']} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes-per-condition", type=at_least(1), default=4, metavar="N")
    parser.add_argument("--seed", type=at_least(0), default=0)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--only", action="append", metavar="CONDITION", help="a condition or group (repeatable)"
    )
    parser.add_argument("--save", type=Path, help="draw every scene that is not right here")
    args = parser.parse_args(argv)
    if args.save is not None and args.save.exists() and not args.save.is_dir():
        # Checked now: the drawing (and its FileExistsError) came after every scene had run.
        parser.error(f"argument --save: {args.save} is not a folder")
    from vision.classify import CardClassifier

    try:
        conditions = select(args.only)
    except ValueError as error:
        parser.error(str(error))
    result = evaluate(conditions, args.scenes_per_condition, args.seed, CardClassifier(), args.save)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
