"""How readings hold up when a photo is re-saved, darker or under warm light.

Every labelled photo of ``scripts/evaluate.py`` is altered in one way and read again by the whole
``setvision photo`` pipeline, each photo by the cross-validation classifier that never saw its
source (``--cv``, as ``evaluate.py --cv``; the models are trained on demand and cached by
``scripts/eval_classifier.py``) or by the shipped model. For each alteration it prints how many
found cards are read wrong, the confidences of those misreads, and, for a few thresholds, how many
right readings would be flagged uncertain and how many misreads would not: the question is
whether an error is at least reported, not only how many there are.

Alterations: ``jpeg95`` (re-encoded at JPEG quality 95), ``dark60`` (every channel x 0.6: a dim
room), ``warm`` (blue x 0.75, green x 0.95, red x 1.1: tungsten light), and ``none`` (the photo's
own pixels, losslessly: the reference for the flag rates).

Usage::

    .venv/bin/python scripts/eval_robustness.py --cv [--no-table-colour]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import evaluate  # noqa: E402

from vision.classify import CardClassifier  # noqa: E402
from vision.data import shared_datasets  # noqa: E402
from vision.io import load_image  # noqa: E402
from vision.pipeline import process_photo  # noqa: E402


def _png(image: np.ndarray) -> bytes:
    return cv2.imencode(".png", image)[1].tobytes()


ALTERATIONS: dict[str, Callable[[np.ndarray], bytes]] = {
    "jpeg95": lambda im: cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes(),
    "dark60": lambda im: _png((im.astype(np.float32) * 0.6).astype(np.uint8)),
    "none": _png,
    "warm": lambda im: _png(
        np.clip(im.astype(np.float32) * np.array([0.75, 0.95, 1.1]), 0, 255).astype(np.uint8)
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cv", action="store_true", help="cross-validation models (see above)")
    parser.add_argument(
        "--cv-steps", type=int, default=None,
        help="steps of the CV models (default: the shipped model's, train_classifier.STEPS)",
    )  # fmt: skip
    parser.add_argument("--only", choices=sorted(ALTERATIONS), action="append")
    parser.add_argument(
        "--no-table-colour", action="store_true",
        help="ablation: the model's colour alone, without the table-level ink clustering",
    )  # fmt: skip
    args = parser.parse_args(argv)
    root = shared_datasets()
    if root is None:
        print("the shared datasets are needed (../shared/datasets or $SETVISION_DATA)")
        return 1
    truths = evaluate.load_truth(root)
    shipped = CardClassifier()
    models: dict[str, CardClassifier] = {}
    if args.cv:
        from eval_classifier import cv_models
        from train_classifier import STEPS

        steps = args.cv_steps or STEPS
        models = {s: CardClassifier(p) for s, p in cv_models(steps, 0, train=False).items()}
        for model in models.values():  # fitted on these models' readings, stored with the shipped
            model.temperatures = shipped.temperatures
    for name in args.only or sorted(ALTERATIONS):
        right: list[float] = []
        wrong: list[tuple[float, str]] = []
        for truth in truths:
            data = ALTERATIONS[name](load_image(root / truth.path))
            table = process_photo(
                data, models.get(truth.source, shipped), draw=False,
                table_level_colour=not args.no_table_colour,
            ).table  # fmt: skip
            keep = evaluate.outside_partial(table.corners, truth.partial)
            pred = [table.cards[i] for i in keep]
            _, pairs = evaluate.match(pred, truth.cards)
            for p, t in pairs:
                confidence = float(table.confidences[keep[p]])
                if pred[p] == truth.cards[t]:
                    right.append(confidence)
                else:
                    label = f"{pred[p].label} (truth {truth.cards[t].label})"
                    wrong.append((confidence, f"{truth.path} #{keep[p] + 1} {label}"))
        r = np.array(right)
        w = np.array([c for c, _ in wrong])
        print(f"{name}: {len(r) + len(w)} cards found, {len(w)} read wrong")
        for threshold in (0.6, 0.7, 0.8, 0.9, 0.95):
            print(
                f"  uncertain below {threshold}: {int((r < threshold).sum())} right readings "
                f"flagged ({100 * float((r < threshold).mean()) if len(r) else 0:.1f}%), "
                f"{int((w >= threshold).sum())} misreads not flagged"
            )
        for confidence, what in sorted(wrong, reverse=True):
            print(f"  {confidence:.2f}  {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
