#!/usr/bin/env python3
"""End to end on webrew, the shared source nothing here was built or tuned on: ``setvision
photo``'s readings against the photographer's boxes and codes.

webrew's tables carry a box and a code per card (``../shared/datasets/table_boxes.csv``), with
many squiggles coded as diamonds (``noisy``), so a card is judged on count, colour and fill only.
Each detection is matched to a box (axis-aligned bounds, IoU >= 0.5, optimal assignment) and
per photo and overall this reports:

* found: boxes matched by a detection;
* read right: boxes matched and read right (count, colour, fill);
* misread: matched but read wrong, and of those the ones not flagged uncertain (the harm: a
  wrong card said with confidence);
* extra: detections matching no box;
* tables right: every box found and read right, nothing extra.

Usage::

    nice .venv/bin/python scripts/eval_webrew.py [--detector-model FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval_detector import box_iou, surface  # noqa: E402
from script_args import at_least  # noqa: E402

from vision.data import shared_datasets  # noqa: E402

#: The attributes judged: webrew's shape codes are unreliable (datasets README).
JUDGED = ("count", "colour", "fill")


def webrew_cards(root: Path) -> dict[str, list[dict[str, Any]]]:
    """path -> the photographer's cards: ``box`` (x0, y0, x1, y1) and the judged attributes."""
    cards: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with (root / "table_boxes.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            if "/tables/" in row["path"]:
                box = [float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax")]
                cards[row["path"]].append({"box": box, **{a: row[a] for a in JUDGED}})
    return dict(sorted(cards.items()))


def score_photo(table: Any, truth: list[dict[str, Any]]) -> dict[str, int]:
    """Counts for one recognised table (:class:`vision.table.Table`) against its boxes."""
    boxes = np.asarray([c["box"] for c in truth], np.float64).reshape(-1, 4)
    corners = np.asarray(table.corners, np.float64).reshape(-1, 4, 2)
    found = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
    pairs: list[tuple[int, int]] = []
    if len(found) and len(boxes):
        iou = box_iou(boxes, found)
        rows, cols = linear_sum_assignment(-iou)
        pairs = [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if iou[r, c] >= 0.5]
    right = misread = unflagged = 0
    for t, d in pairs:
        card = table.cards[d]
        said = {"count": str(card.count.value), "colour": card.colour.name.lower(),
                "fill": card.fill.name.lower()}  # fmt: skip
        if all(said[a] == truth[t][a] for a in JUDGED):
            right += 1
        else:
            misread += 1
            unflagged += not bool(table.uncertain[d])
    return {"boxes": len(boxes), "found": len(pairs), "right": right, "misread": misread,
            "unflagged": unflagged, "extra": len(found) - len(pairs)}  # fmt: skip


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    total = {k: sum(r[k] for r in rows) for k in ("boxes", "found", "right", "misread",
                                                    "unflagged", "extra")}  # fmt: skip
    n = max(total["boxes"], 1)
    return {
        "photos": len(rows),
        **total,
        "found_share": total["found"] / n,
        "right_share": total["right"] / n,
        "tables_right": sum(r["right"] == r["boxes"] and r["extra"] == 0 for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--detector-model",
        type=Path,
        default=None,
        help="the card detector .onnx, with its .json beside it (default: the packaged one)",
    )
    parser.add_argument("--limit", type=at_least(0), default=0, help="photos (0: all)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)

    from vision.classify import CardClassifier
    from vision.errors import SetVisionError
    from vision.io import load_image
    from vision.pipeline import process_photo

    try:
        root = shared_datasets(required=True)
    except SetVisionError as error:
        parser.error(str(error))
    classifier = CardClassifier()
    options: dict[str, Any] = {}
    if args.detector_model is not None:
        from vision.detect.learned_find import LearnedDetector

        options["detector"] = LearnedDetector(str(args.detector_model))
    photos = list(webrew_cards(root).items())[: args.limit or None]
    rows = []
    t0 = time.time()
    for k, (path, truth) in enumerate(photos, 1):
        table = process_photo(root / path, classifier, draw=False, **options).table
        rows.append({"path": path, "surface": surface(load_image(root / path)),
                     **score_photo(table, truth)})  # fmt: skip
        print(f"\r{k}/{len(photos)} photos", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    report = {"all": summary(rows)}
    for kind in ("dark", "light"):
        report[kind] = summary([r for r in rows if r["surface"] == kind])
    print(f"{'photos':<8} {'n':>3} {'boxes':>5} {'found':>6} {'right':>6} {'misread':>7} "
          f"{'unflagged':>9} {'extra':>5} {'tables':>6}")  # fmt: skip
    for name, r in report.items():
        print(f"{name:<8} {r['photos']:>3} {r['boxes']:>5} {r['found_share']:>6.1%} "
              f"{r['right_share']:>6.1%} {r['misread']:>7} {r['unflagged']:>9} {r['extra']:>5} "
              f"{r['tables_right']:>6}")  # fmt: skip
    print(f"({time.time() - t0:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps({**report, "per_photo": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
