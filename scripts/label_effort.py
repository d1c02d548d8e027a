#!/usr/bin/env python3
"""How long ``setvision label`` takes to pre-label the webrew photos, and how much a person then
has to do on the review page to make them right.

Pre-labels the first ``--photos`` webrew tables that carry the photographer's boxes
(``table_boxes.csv``) with the library code under ``setvision label`` (timed), matches each
pre-label to a box (IoU of the axis-aligned boxes at least 0.5, one to one), and counts what the
review page would need, by its key map (``vision/dataset/review.html``):

* a photo whose pre-labels are all right: 1 key (Enter);
* a card read wrong: a click on it and one key per wrong attribute (count, colour, fill;
  webrew's shapes are noisy, so shape is not counted);
* a card pre-labelled that is none (or twice): a click and ``x``;
* a card missed: ``a`` (a card of the median size at the pointer), 4 corner drags, 4 keys.

Usage::

    nice .venv/bin/python scripts/label_effort.py --photos 20
"""

from __future__ import annotations

import argparse
import collections
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from script_args import at_least  # noqa: E402

from vision.data import shared_datasets  # noqa: E402
from vision.dataset.prelabel import prelabel  # noqa: E402
from vision.dataset.records import LabelledPhoto, card_attributes  # noqa: E402

#: Attributes checked against webrew's codes (its shapes are noisy: datasets README).
CHECKED: tuple[str, ...] = ("count", "colour", "fill")
MATCH_IOU = 0.5


def box_iou(a: np.ndarray, b: np.ndarray) -> float:
    low, high = np.maximum(a[:2], b[:2]), np.minimum(a[2:], b[2:])
    inter = float(np.prod(np.clip(high - low, 0, None)))
    union = float(np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2])) - inter
    return inter / union if union > 0 else 0.0


def effort(photo: LabelledPhoto, boxes: list[dict[str, str]]) -> collections.Counter:
    """What the review page needs to make ``photo``'s pre-labels match ``boxes``."""
    from scipy.optimize import linear_sum_assignment

    found = [np.r_[c.corners.min(axis=0), c.corners.max(axis=0)] for c in photo.cards]
    truth = [np.array([float(b[k]) for k in ("xmin", "ymin", "xmax", "ymax")]) for b in boxes]
    iou = np.array([[box_iou(t, f) for f in found] for t in truth]).reshape(len(truth), -1)
    rows, cols = linear_sum_assignment(-iou) if iou.size else ([], [])
    pairs = [(r, c) for r, c in zip(rows, cols) if iou[r, c] >= MATCH_IOU]
    out: collections.Counter = collections.Counter(keys=1)  # Enter
    for r, c in pairs:
        read = card_attributes(photo.cards[c].card)
        wrong = [a for a in CHECKED if str(read.get(a)) != boxes[r][a]]
        if wrong:
            out.update(misread=1, clicks=1, keys=len(wrong))
    missed = len(truth) - len(pairs)
    extra = len(found) - len(pairs)
    out.update(missed=missed, keys=5 * missed, drags=4 * missed)
    out.update(extra=extra, clicks=extra, keys=extra)
    out.update(cards=len(truth), right=0 if (missed or extra or out["misread"]) else 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=at_least(1), default=20, help="webrew photos to label")
    args = parser.parse_args(argv)
    root = shared_datasets()
    assert root is not None
    boxes: dict[str, list[dict[str, str]]] = collections.defaultdict(list)
    with open(root / "table_boxes.csv", newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["path"].startswith("tables/webrew/tables/"):
                boxes[row["path"]].append(row)
    names = sorted(boxes)[: args.photos]
    paths = [root / name for name in names]
    start = time.perf_counter()
    labelled = list(prelabel(paths, names))
    seconds = time.perf_counter() - start
    total: collections.Counter = collections.Counter()
    for item, name in zip(labelled, names, strict=True):
        assert item.labelled is not None, item.error
        got = effort(item.labelled, boxes[name])
        total.update(got)
        print(f"{name}: {dict(got)}")
    n = len(names)
    print(f"pre-labelled {n} photos in {seconds:.1f} s ({seconds / n:.2f} s a photo, with the "
          "models' loading)")  # fmt: skip
    print(
        f"{total['right']} of {n} photos right as pre-labelled (1 key each); {total['cards']} "
        f"cards: {total['misread']} misread, {total['missed']} missed, {total['extra']} extra"
    )
    print(f"to make all {n} right: {total['keys']} keys, {total['clicks']} clicks, "
          f"{total['drags']} corner drags ({total['keys'] / n:.1f} keys a photo)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
