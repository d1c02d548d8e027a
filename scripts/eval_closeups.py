#!/usr/bin/env python3
"""Measure card detection on close-ups: windows of a few cards cut from the reviewed photos.

A user photographing three cards ("is this a SET?") sends a close-up, not a table. Each reviewed
photo of ``datasets/detection/`` with two cards or more gives ``--per-photo`` windows round a
card chosen at random (2 to 3.6 card sizes across, clipped by the photo), resized so that the
long side is 350 to 550 px (a phone crop, a message thumbnail); the whole cards inside a window
are its truth. A card counts as found when a detection's centre lies within a quarter of the
card's size of its centre (one detection per card). Seeded: the same windows on every run.

Measured 2026-12-01 with the older contour detector (deleted, #33; seed 0, 2 per photo): 201
close-ups, 292 of 305 whole cards found (95.7%), 12 close-ups missing a card, all pclewis;
``--enlarge-to 640``: 293 (96.1%), 11: the photo's size was not the cause, the slant was (a
crop's centre is not the camera's). With its candidates scored under cameras off the image's
centre too: 299 (98.0%), 5 close-ups missing a card, all pclewis.

    python scripts/eval_closeups.py [-v] [--per-photo 2] [--seed 0] [--enlarge-to PX]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "scripts") not in sys.path:
    sys.path.insert(0, str(REPO / "scripts"))

from script_args import at_least  # noqa: E402

#: A window spans this many card sizes (the square root of the card's area), log-uniform.
WINDOW_CARDS = (2.0, 3.6)
#: Long side of a close-up (px), uniform.
LONG_SIDE = (350.0, 550.0)
#: A detection finds a card when its centre is this share of the card's size from the card's.
CENTRE_SHARE = 0.25


def closeup(
    image: npt.NDArray[np.uint8], cards: npt.NDArray[np.float64], rng: np.random.Generator
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64]]:
    """One close-up of ``image`` round a random card of ``cards`` ((N, 4, 2) corners in pixels).

    Returns:
        The resized window, BGR uint8, and (K, 4, 2) float64 corners of the cards wholly inside
        it, in its pixels (K may be 0 where the window clips every card).
    """
    h, w = image.shape[:2]
    sizes = np.sqrt(np.abs([cv2.contourArea(q.astype(np.float32)) for q in cards]))
    i = int(rng.integers(len(cards)))
    half = 0.5 * sizes[i] * float(np.exp(rng.uniform(*np.log(WINDOW_CARDS))))
    centre = cards[i].mean(axis=0)
    x0, y0 = np.maximum(np.floor(centre - half), 0).astype(int)
    x1, y1 = np.minimum(np.ceil(centre + half), [w, h]).astype(int)
    window = image[y0:y1, x0:x1]
    scale = rng.uniform(*LONG_SIDE) / max(window.shape[:2])
    shrink = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    window = cv2.resize(window, None, fx=scale, fy=scale, interpolation=shrink)
    inside = [
        (q - [x0, y0]) * scale
        for q in cards
        if (q[:, 0] >= x0).all() and (q[:, 0] < x1).all()
        and (q[:, 1] >= y0).all() and (q[:, 1] < y1).all()
    ]  # fmt: skip
    return window, np.array(inside, np.float64).reshape(-1, 4, 2)


def found_cards(truth: npt.NDArray[np.float64], detected: npt.NDArray[np.float64]) -> int:
    """How many of the ``truth`` cards (K, 4, 2) have a detection of ``detected`` (M, 4, 2)
    centred within :data:`CENTRE_SHARE` of their size (each detection counts once)."""
    used: set[int] = set()
    found = 0
    for quad in truth:
        if len(detected) == 0:
            break
        gaps = np.linalg.norm(detected.mean(axis=1) - quad.mean(axis=0), axis=1)
        gaps[list(used)] = np.inf
        j = int(np.argmin(gaps))
        size = np.sqrt(abs(cv2.contourArea(quad.astype(np.float32))))
        if gaps[j] < CENTRE_SHARE * size:
            found += 1
            used.add(j)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-photo", type=at_least(1), default=2, help="close-ups per photo")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--enlarge-to", type=at_least(1), default=None, metavar="PX",
        help="enlarge each close-up (by a whole factor) to a long side of at least PX first",
    )  # fmt: skip
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list close-ups missing a card"
    )
    args = parser.parse_args(argv)

    from vision.data import shared_datasets
    from vision.detect import find_cards
    from vision.evaluation import load_annotations
    from vision.io import load_image

    root = shared_datasets(required=False)
    if root is None:
        parser.exit(2, "eval_closeups.py: error: the shared datasets (../shared) are not there\n")
    photos = load_annotations(REPO / "datasets" / "detection", reviewed_only=True)
    rng = np.random.default_rng(args.seed)
    shots = truth_total = found_total = missing = 0
    for photo in (p for p in photos if len(p.cards) >= 2):
        image = load_image(root / photo.path)
        cards = np.array([c.corners for c in photo.cards], np.float64)
        for _ in range(args.per_photo):
            window, truth = closeup(image, cards, rng)
            if len(truth) == 0:
                continue
            factor = 1
            if args.enlarge_to and max(window.shape[:2]) < args.enlarge_to:
                factor = int(np.ceil(args.enlarge_to / max(window.shape[:2])))
                window = cv2.resize(
                    window, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC
                )
            detected = (np.asarray(find_cards(window).corners, np.float64) + 0.5) / factor - 0.5
            found = found_cards(truth, detected.reshape(-1, 4, 2))
            shots, truth_total, found_total = (
                shots + 1,
                truth_total + len(truth),
                found_total + found,
            )
            if found < len(truth):
                missing += 1
                if args.verbose:
                    size = f"{window.shape[1]}x{window.shape[0]}"
                    print(f"  {photo.path}: {found} of {len(truth)} found ({size})")
    share = 100.0 * found_total / max(truth_total, 1)
    print(
        f"{shots} close-ups, {truth_total} whole cards: {found_total} found ({share:.1f}%), "
        f"{missing} close-ups missing a card"
    )


if __name__ == "__main__":
    main()
