#!/usr/bin/env python3
"""Measure the card detector on real photos: the annotated sources (corners,
``datasets/detection``) and webrew (the photographer's axis-aligned boxes,
``../shared/datasets/table_boxes.csv``).

    python scripts/eval_detector.py                      # the learned model in models/
    python scripts/eval_detector.py --cv                 # each source by a model that never saw it
    python scripts/eval_detector.py --cv --no-refine     # what a stage after the network adds

Annotated photos: recall and precision at polygon IoU >= 0.85 and >= 0.5, corner error after
the best cyclic alignment (px), photos complete (every required card found, nothing else);
partial cards (cut by the frame or mostly covered) need not be found. webrew: a detection
matches a box when its axis-aligned bounds overlap the box at IoU >= 0.5 (optimal assignment).

With ``--cv`` each annotated source is read by the model of its fold in
``build/detector_cv/fold<i>/`` (``scripts/train_detector.py --leave-out`` with the fold's
sources, see :data:`train_detector.FOLDS`); webrew, which no model trains on, by the shipped one.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from train_detector import CV_ROOT, FOLDS  # noqa: E402

from vision.data import shared_datasets  # noqa: E402
from vision.detect.learned import CardSegmenter  # noqa: E402
from vision.evaluation import load_annotations, score_photo, summarise  # noqa: E402
from vision.io import load_image  # noqa: E402

SHIPPED = REPO / "models" / "card_detector.onnx"


#: Options of :func:`vision.detect.learned_find.find_cards_learned` (``--no-scene-check``,
#: ``--no-refine``).
LEARNED_OPTIONS: dict[str, bool] = {}


def learned_detector(model: Path) -> Any:
    """A function frame -> (N, 4, 2) corners, with the learned model and the geometry
    :func:`vision.detect.learned_find.find_cards_learned` applies."""
    from vision.detect.learned_find import find_cards_learned

    segmenter = CardSegmenter(model)
    return lambda frame: find_cards_learned(frame, segmenter, **LEARNED_OPTIONS).corners


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, M) IoU of boxes (x0, y0, x1, y1)."""
    x0 = np.maximum(a[:, None, 0], b[None, :, 0])
    y0 = np.maximum(a[:, None, 1], b[None, :, 1])
    x1 = np.minimum(a[:, None, 2], b[None, :, 2])
    y1 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9)


def webrew_boxes(root: Path) -> dict[str, np.ndarray]:
    """The webrew table photos' boxes: path -> (N, 4) x0, y0, x1, y1."""
    boxes: dict[str, list[list[float]]] = defaultdict(list)
    with (root / "table_boxes.csv").open() as f:
        for row in csv.DictReader(f):
            if "/tables/" in row["path"]:
                boxes[row["path"]].append([float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax")])
    return {p: np.asarray(b) for p, b in sorted(boxes.items())}


def surface(frame: np.ndarray) -> str:
    """``"light"`` (webrew's white paper sheet) or ``"dark"`` (its wooden floor): the frame's
    median grey against mid-grey (the sheet fills most of a frame, the floor shows round it;
    on the floor the cards cover well under half of it). The photographer did not say which."""
    return "light" if np.median(frame.mean(axis=2)) > 128 else "dark"


def webrew_row(per_photo: list[dict[str, Any]]) -> dict[str, Any]:
    truth_n = sum(p["boxes"] for p in per_photo)
    tp = sum(p["hits"] for p in per_photo)
    fp = sum(p["found"] - p["hits"] for p in per_photo)
    return {
        "photos": len(per_photo),
        "boxes": truth_n,
        "recall": tp / truth_n if truth_n else 1.0,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "complete": sum(p["hits"] == p["boxes"] == p["found"] for p in per_photo),
    }


def eval_webrew(detect: Any, root: Path) -> dict[str, Any]:
    per_photo = []
    for path, boxes in webrew_boxes(root).items():
        frame = load_image(root / path)
        corners = np.asarray(detect(frame)).reshape(-1, 4, 2)
        found = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
        hits = 0
        if len(found) and len(boxes):
            iou = box_iou(boxes, found)
            rows, cols = linear_sum_assignment(-iou)
            hits = int((iou[rows, cols] >= 0.5).sum())
        per_photo.append({"path": path, "surface": surface(frame), "boxes": len(boxes),
                          "found": len(found), "hits": hits})  # fmt: skip
    return {
        **webrew_row(per_photo),
        "by_surface": {
            kind: webrew_row([p for p in per_photo if p["surface"] == kind])
            for kind in ("dark", "light")
        },
        "per_photo": per_photo,
    }


def eval_annotated(detect_for: Any, sources: list[str] | None) -> dict[str, Any]:
    root = shared_datasets(required=True)
    by_source: dict[str, list[Any]] = defaultdict(list)
    loose: dict[str, list[Any]] = defaultdict(list)
    for truth in load_annotations(REPO / "datasets" / "detection"):
        if sources and truth.source not in sources:
            continue
        corners = detect_for(truth.source)(load_image(root / truth.path))
        by_source[truth.source].append(score_photo(truth, corners))
        loose[truth.source].append(score_photo(truth, corners, threshold=0.5))

    def row(strict: list[Any], lenient: list[Any]) -> dict[str, Any]:
        s, s5 = summarise(strict), summarise(lenient)
        return {
            "photos": s.photos, "cards": s.truth, "recall": s.recall, "precision": s.precision,
            "recall_iou50": s5.recall, "precision_iou50": s5.precision,
            "complete": s.perfect_photos, "corner_median": s.corner_median,
            "corner_p95": s.corner_p95,
        }  # fmt: skip

    out = {source: row(by_source[source], loose[source]) for source in sorted(by_source)}
    if by_source:
        out["all"] = row(
            [x for v in by_source.values() for x in v], [x for v in loose.values() for x in v]
        )
    return out


def recipe_of(meta: dict[str, Any]) -> str:
    """What made a model (its JSON's ``training``), less what only picks its fold and where
    it went: the leave-source-out models and the shipped one must share it."""
    t = meta["training"]
    versions = "".join(f"{k}={t[k]} " for k in ("render_mix", "augment") if k in t)
    return (
        f"steps={t['steps']} batch={t['batch']} crop={t['crop']} "
        f"rendered={t['rendered_tables']} {versions}real_share={t['real_share']} seed={t['seed']}"
    )


def record(root: Path) -> None:
    """models/card_detector_eval.json: each annotated source by its fold's model, and the
    shipped model on webrew (never trained on) and on the annotated photos (trained on)."""
    import hashlib

    shipped_meta = json.loads(SHIPPED.with_suffix(".json").read_text())
    recipe = recipe_of(shipped_meta)
    models = {}
    for i, fold in enumerate(FOLDS):
        model = CV_ROOT / f"fold{i}" / "card_detector.onnx"
        meta = json.loads(model.with_suffix(".json").read_text())
        if recipe_of(meta) != recipe or sorted(fold) != sorted(
            meta["training"]["left_out_sources"]
        ):
            sys.exit(f"eval_detector: {model} is not the shipped recipe without {fold}")
        det = learned_detector(model)
        models.update({source: det for source in fold})
    shipped = learned_detector(SHIPPED)
    report = {
        "recipe": recipe,
        "cv": {"annotated": eval_annotated(models.__getitem__, None)},
        "shipped": {
            "sha256": hashlib.sha256(SHIPPED.read_bytes()).hexdigest(),
            "webrew": {k: v for k, v in eval_webrew(shipped, root).items() if k != "per_photo"},
            "annotated_trained_on": eval_annotated(lambda source: shipped, None)["all"],
        },
    }
    out = SHIPPED.with_name("card_detector_eval.json")
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=SHIPPED)
    parser.add_argument("--cv", action="store_true", help="leave-source-out models")
    parser.add_argument("--cv-root", type=Path, default=CV_ROOT,
                        help="where the fold<i>/ models are (with --cv)")  # fmt: skip
    parser.add_argument("--sources", default="", help="annotated sources, comma-separated")
    parser.add_argument("--no-webrew", action="store_true")
    parser.add_argument("--no-scene-check", action="store_true",
                        help="keep what vision.detect.plausible would drop")  # fmt: skip
    parser.add_argument("--no-refine", action="store_true",
                        help="corners unsnapped (no vision.detect.refine)")  # fmt: skip
    parser.add_argument("--no-annotated", action="store_true")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument(
        "--record",
        action="store_true",
        help="measure the leave-source-out models and the shipped one and write "
        "models/card_detector_eval.json (the baselines of tests/test_learned_detector.py)",
    )
    args = parser.parse_args()
    root = shared_datasets(required=True)
    if args.no_scene_check:
        LEARNED_OPTIONS["check_scene"] = False
    if args.no_refine:
        LEARNED_OPTIONS["refine_corners"] = False
    if args.record:
        record(root)
        return
    t0 = time.time()
    if args.cv:
        models = {}
        for i, fold in enumerate(FOLDS):
            model = args.cv_root / f"fold{i}" / "card_detector.onnx"
            if not model.exists():
                sys.exit(
                    f"eval_detector: {model} is missing: train it with "
                    f"scripts/train_detector.py --leave-out {','.join(fold)} --out {model}"
                )
            det = learned_detector(model)
            models.update({source: det for source in fold})
        detect_for = models.__getitem__
        one = learned_detector(args.model)
    else:
        one = learned_detector(args.model)
        detect_for = lambda source: one  # noqa: E731
    report: dict[str, Any] = {"detector": "learned", "cv": args.cv}
    if not args.no_annotated:
        sources = [s for s in args.sources.split(",") if s] or None
        report["annotated"] = eval_annotated(detect_for, sources)
        print(f"{'source':<12} {'photos':>6} {'cards':>5} {'recall':>7} {'prec':>7} "
              f"{'rec@.5':>7} {'prec@.5':>7} {'complete':>8} {'corner med/p95':>15}")  # fmt: skip
        for source, r in report["annotated"].items():
            print(f"{source:<12} {r['photos']:>6} {r['cards']:>5} {r['recall']:>7.1%} "
                  f"{r['precision']:>7.1%} {r['recall_iou50']:>7.1%} "
                  f"{r['precision_iou50']:>7.1%} {r['complete']:>8} "
                  f"{r['corner_median']:>7.1f}/{r['corner_p95']:<7.1f}")  # fmt: skip
    if not args.no_webrew:
        w = eval_webrew(one, root)
        report["webrew"] = w
        print(
            f"webrew boxes (IoU >= 0.5): {w['photos']} photos, {w['boxes']} boxes, recall "
            f"{w['recall']:.1%}, precision {w['precision']:.1%}, complete {w['complete']}"
        )
        for kind, r in w["by_surface"].items():
            print(f"  {kind} surface: {r['photos']} photos, recall {r['recall']:.1%}, precision "
                  f"{r['precision']:.1%}, complete {r['complete']}")  # fmt: skip
    print(f"({time.time() - t0:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
