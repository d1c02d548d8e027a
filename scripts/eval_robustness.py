"""How readings hold up when a photo is re-saved, darker, warm-lit, blurred, smaller or noisy.

Every labelled photo of ``scripts/evaluate.py`` is altered in one way and read again by the whole
``setvision photo`` pipeline, each photo by the cross-validation classifier that never saw its
source (``--cv``, as ``evaluate.py --cv``; the models are trained on demand and cached by
``scripts/eval_classifier.py``) or by the shipped model. For each alteration it prints how many
found cards are read wrong, the confidences of those misreads, and, for a few thresholds, how many
right readings would be flagged uncertain and how many misreads would not: the question is
whether an error is at least reported, not only how many there are.

Alterations (:data:`ALTERATIONS`):

* light and encoding: ``jpeg95`` and ``jpeg50`` (re-encoded at JPEG quality 95, or 50 as a
  messaging app may send it), ``dark60`` (every channel x 0.6:
  a dim room), ``warm`` (blue x 0.75, green x 0.95, red x 1.1: tungsten light), ``magenta``
  and ``green`` (strong casts, :data:`MAGENTA_GAINS`, :data:`GREEN_GAINS`, clipped),
  ``gamma05`` (shadows lifted, gamma 0.5), ``dark20`` (every channel x 0.2: underexposed) and
  ``bright140`` (every channel x 1.4, clipped: overexposed, the paper and light inks burnt out)
  and ``washed50`` (every pixel blended 50 % with white, :data:`WASH`: flat light or haze; the
  table pales with the cards);
* camera: ``blur`` (defocus: a Gaussian blur of sigma 0.1 % of the photo's long side, 4 px on a
  12 MP photo), ``small`` (resized so the long side is :data:`SMALL_SIDE` px: a far or
  low-resolution camera; smaller photos are left as they are), ``noise`` (Gaussian sensor noise
  of standard deviation 8 grey levels per channel, seeded);
* geometry: ``rot90``, ``rot180``, ``rot270`` (turned clockwise, losslessly: a phone held
  another way up without EXIF orientation) and ``mirror`` (flipped left to right): a reader
  should find and read the same cards however the table is turned;
* ``none`` (the photo's own pixels, losslessly: the reference for the flag rates).

Cards are matched to the truth by identity (an assignment maximising agreeing attributes, as
``evaluate.py``), so a true card left without a reading was not found; a false detection can
take its place and then counts as a misread.

Usage::

    .venv/bin/python scripts/eval_robustness.py --cv [--no-table-colour]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

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

#: Long side (px) of the ``small`` alteration: a 1280x960 webcam frame or a far phone shot.
SMALL_SIDE = 960
#: Defocus of the ``blur`` alteration: Gaussian sigma as a fraction of the long side.
BLUR_SIGMA = 0.001
#: Standard deviation (8-bit grey levels) of the ``noise`` alteration.
NOISE_SD = 8.0


#: Channel gains (BGR) of the ``warm`` alteration: tungsten light.
WARM_GAINS = (0.75, 0.95, 1.1)


def warm(image: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 BGR photo under warm light: each channel times :data:`WARM_GAINS`."""
    return np.clip(image.astype(np.float32) * np.array(WARM_GAINS), 0, 255).astype(np.uint8)


def dark(image: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 BGR photo in a dim room: every channel x 0.6 (truncated)."""
    return (image.astype(np.float32) * 0.6).astype(np.uint8)


#: Channel gains (BGR) of the ``magenta`` and ``green`` casts (a new user's trial, 2026-12-01:
#: purple cards on one-colour tables read red or green at 99 % and more).
MAGENTA_GAINS = (1.15, 0.75, 1.15)
GREEN_GAINS = (0.8, 1.2, 0.8)


def gains(image: np.ndarray, bgr: tuple[float, float, float]) -> np.ndarray:
    """(H, W, 3) uint8 BGR photo with each channel times its gain (clipped)."""
    return np.clip(image.astype(np.float32) * np.array(bgr), 0, 255).astype(np.uint8)


def gamma(image: np.ndarray, g: float = 0.5) -> np.ndarray:
    """(H, W, 3) uint8 BGR photo through ``255 (x / 255) ** g`` (0.5: shadows lifted)."""
    lut = np.clip(255.0 * (np.arange(256) / 255.0) ** g, 0, 255).astype(np.uint8)
    return cv2.LUT(image, lut)


#: Share of white blended into every pixel by ``washed50`` (a photo washed out by flat light or
#: haze: paper, ink and table all pale towards white together).
WASH = 0.5


def washed(image: np.ndarray, share: float = WASH) -> np.ndarray:
    """(H, W, 3) uint8 BGR photo blended with white: ``(1 - share) x + share 255``, rounded."""
    return np.round(image.astype(np.float32) * (1.0 - share) + 255.0 * share).astype(np.uint8)


def _png(image: np.ndarray) -> bytes:
    return cv2.imencode(".png", image)[1].tobytes()


#: The identity mapping: the altered photo's pixels are the original's.
SAME: Final = np.eye(3)


def _same(encoded: bytes) -> tuple[bytes, np.ndarray]:
    return encoded, SAME


def _small(image: np.ndarray) -> tuple[bytes, np.ndarray]:
    height, width = image.shape[:2]
    scale = SMALL_SIDE / max(height, width)
    if scale >= 1.0:
        return _png(image), SAME
    size = (max(round(width * scale), 1), max(round(height * scale), 1))
    back = np.diag([1.0 / scale, 1.0 / scale, 1.0])
    return _png(cv2.resize(image, size, interpolation=cv2.INTER_AREA)), back


def _noise(image: np.ndarray) -> bytes:
    rng = np.random.default_rng(0)  # the same noise for every run
    noisy = image.astype(np.float32) + rng.normal(0.0, NOISE_SD, image.shape).astype(np.float32)
    return _png(np.clip(np.rint(noisy), 0, 255).astype(np.uint8))


def _blur(image: np.ndarray) -> bytes:
    return _png(cv2.GaussianBlur(image, (0, 0), BLUR_SIGMA * max(image.shape[:2])))


def _turned(image: np.ndarray, how: str) -> tuple[bytes, np.ndarray]:
    """The photo turned (``rot90`` clockwise, ``rot180``, ``rot270``) or mirrored left to right
    (``mirror``), losslessly, and the 3x3 mapping of the turned photo's pixel centres (x, y, 1)
    back to the original's."""
    height, width = image.shape[:2]
    w, h = width - 1.0, height - 1.0
    turned, back = {
        # turned (x', y') = (h - y, x): the original (x, y) = (y', h - x')
        "rot90": (cv2.ROTATE_90_CLOCKWISE, [[0, 1, 0], [-1, 0, h], [0, 0, 1]]),
        "rot180": (cv2.ROTATE_180, [[-1, 0, w], [0, -1, h], [0, 0, 1]]),
        # turned (x', y') = (y, w - x): the original (x, y) = (w - y', x')
        "rot270": (cv2.ROTATE_90_COUNTERCLOCKWISE, [[0, -1, w], [1, 0, 0], [0, 0, 1]]),
        "mirror": (None, [[-1, 0, w], [0, 1, 0], [0, 0, 1]]),
    }[how]
    out = cv2.flip(image, 1) if turned is None else cv2.rotate(image, turned)
    return _png(out), np.array(back, dtype=np.float64)


def to_original(points: np.ndarray, back: np.ndarray) -> np.ndarray:
    """Points (..., 2) in an altered photo's pixels mapped into the original photo's by the
    alteration's 3x3 ``back`` mapping (float32, same shape)."""
    pts = np.asarray(points, dtype=np.float64)
    flat = pts.reshape(-1, 2) @ back[:2, :2].T + back[:2, 2]
    return flat.reshape(pts.shape).astype(np.float32)


#: Name -> function from a (H, W, 3) uint8 BGR photo to (encoded photo bytes, 3x3 float64
#: mapping of the encoded photo's pixel coordinates (x, y, 1) to the original's; see
#: :func:`to_original`).
ALTERATIONS: dict[str, Callable[[np.ndarray], tuple[bytes, np.ndarray]]] = {
    "jpeg95": lambda im: _same(
        cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    ),
    "jpeg50": lambda im: _same(
        cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 50])[1].tobytes()
    ),
    "dark60": lambda im: _same(_png(dark(im))),
    "none": lambda im: _same(_png(im)),
    "warm": lambda im: _same(_png(warm(im))),
    "blur": lambda im: _same(_blur(im)),
    "small": _small,
    "noise": lambda im: _same(_noise(im)),
    "magenta": lambda im: _same(_png(gains(im, MAGENTA_GAINS))),
    "green": lambda im: _same(_png(gains(im, GREEN_GAINS))),
    "gamma05": lambda im: _same(_png(gamma(im, 0.5))),
    "dark20": lambda im: _same(_png(gains(im, (0.2, 0.2, 0.2)))),
    "bright140": lambda im: _same(_png(gains(im, (1.4, 1.4, 1.4)))),
    "washed50": lambda im: _same(_png(washed(im))),
    "rot90": lambda im: _turned(im, "rot90"),
    "rot180": lambda im: _turned(im, "rot180"),
    "rot270": lambda im: _turned(im, "rot270"),
    "mirror": lambda im: _turned(im, "mirror"),
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
        from eval_classifier import cv_classifiers
        from train_classifier import STEPS

        models = cv_classifiers(args.cv_steps or STEPS, 0, shipped)
    for name in args.only or sorted(ALTERATIONS):
        right: list[float] = []
        wrong: list[tuple[float, str]] = []
        missed = total = 0
        lost: list[str] = []  # photos with true cards left without a reading
        for truth in truths:
            data, back = ALTERATIONS[name](load_image(root / truth.path))
            table = process_photo(
                data, models.get(truth.source, shipped), draw=False,
                table_level_colour=not args.no_table_colour,
            ).table  # fmt: skip
            corners = to_original(table.corners, back)
            keep = evaluate.outside_partial(corners, truth.partial, truth.whole)
            pred = [table.cards[i] for i in keep]
            _, pairs = evaluate.match(pred, truth.cards)
            total += len(truth.cards)
            missed += len(truth.cards) - len(pairs)
            if len(pairs) < len(truth.cards):
                lost.append(f"{truth.path} ({len(truth.cards) - len(pairs)})")
            for p, t in pairs:
                confidence = float(table.confidences[keep[p]])
                if pred[p] == truth.cards[t]:
                    right.append(confidence)
                else:
                    label = f"{pred[p].label} (truth {truth.cards[t].label})"
                    wrong.append((confidence, f"{truth.path} #{keep[p] + 1} {label}"))
        r = np.array(right)
        w = np.array([c for c, _ in wrong])
        print(
            f"{name}: {total} true cards, {missed} not found, {len(r) + len(w)} found, "
            f"{len(w)} read wrong"
        )
        for threshold in (0.6, 0.7, 0.8, 0.9, 0.95):
            print(
                f"  uncertain below {threshold}: {int((r < threshold).sum())} right readings "
                f"flagged ({100 * float((r < threshold).mean()) if len(r) else 0:.1f}%), "
                f"{int((w >= threshold).sum())} misreads not flagged"
            )
        for confidence, what in sorted(wrong, reverse=True):
            print(f"  {confidence:.2f}  {what}")
        if lost:
            print(f"  not found in: {', '.join(lost)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
