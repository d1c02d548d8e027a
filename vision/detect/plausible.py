"""Plausibility of the detections against the rest of the scene.

The network judges each piece of paper alone. Card-shaped things that are not SET cards pass it:
a receipt or an envelope with grey print, the white label of a card box (coloured marks on
white), a small white patch, a patch of washed-out carpet. What gives them away is the scene:
SET cards of one table share a size (modulo perspective) and their ink is coloured (red, green,
purple). Three rules, each judged against the scene's other detections, so a lone card, a
greyscale photo or a table of washed-out cards keeps all its cards:

1. Colourless ink (:func:`colourless`): no coloured ink at all (:func:`vision.colour.symbol_colours`
   finds none) while the other detections' ink is clearly coloured.
2. Blank and grainy (:func:`textured`): no ink at all, and what should be the card's paper is
   grainy throughout, far more than the other detections' paper. A card's paper is smooth (or
   it has its symbols: a worn card); a patch of carpet, cloth or wood grain is not, and in a
   photo washed out towards white such a patch is bright and pale enough to pass for paper.
3. Size (:func:`size_ratios`): far smaller than the scene's cards where it lies. The scene's card
   size is a plane fitted to the cube root of the detections' image areas over their image
   positions: for equal cards lying on one plane, seen through a pinhole camera, the image area
   at image point p is ``k (a.p + b)^3`` (the cube of the plane-to-image homography's denominator),
   so its cube root is exactly linear in p, with any camera tilt.

The thresholds were set for the older contour detector (deleted, #33) on the synthetic stress
scenes (``scripts/eval_synthetic.py``, 8 scenes of box, paper, printed_cloth_clutter, cards_1,
tilt_45, tilt_45_dim, checked_cloth) and on the 120 reviewed real photos
(``scripts/eval_detection.py``), on its working image (the frame shrunk to a long side near 640
px, :data:`vision.detect.learned_find.WORK_LONG_SIDE`); the figures behind each threshold are at
its definition. Kept unchanged after the learned finder, where it raised precision on the
leave-source-out folds (``models/README.md``, "What each step did").

Cost: 3.7-5 ms wall (5-8 ms CPU) for 12-14 detections of a 1080p or 1600 x 1200 frame on a loaded
2-core machine: the ink crops (warp and white balance) take about
half, :func:`vision.colour.symbol_colours` a third, the size fit well under 1 ms. A scene of one
card pays nothing. The colour rule needs the other detections to be mostly coloured (a median):
one card beside two grey sheets keeps the sheets.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.colour import symbol_colours
from vision.detect.geometry import quad_area
from vision.warp import warp_cards

__all__ = ["colourless", "paper_texture", "plausible", "size_ratios", "textured"]

#: Ink chroma (CIELAB, :func:`vision.colour.symbol_colours`) under which a detection shows no
#: coloured ink. Synthetic grey-printed paper and blank patches measure 0.0-0.03 (no ink pixel
#: at all); the faintest real or synthetic cards in a coloured scene 1.3 (a card in deep shadow,
#: synthetic ``shadow``), 4.6 (a washed-out purple card, nakkstar123 IMG_6052); real cards
#: measuring under 1 (glare-washed purple, pclewis) sit in scenes whose other cards' median is at
#: most 13.6. Bounds from 0.5 to 1.2 drop and keep the same detections (0.1 lets one sheet through).
GREY_CHROMA: Final = 0.5
#: Median ink chroma of the other detections from which a scene counts as coloured. Synthetic
#: scenes with a colourless false positive: 39.6-58.3; real photos holding a real card under
#: 2.5: 11.9-17.1 (IMG_6057, pclewis glare); real per-photo medians: quartiles 26, 31, 38.
#: Bounds from 20 to 30 give the same result (35 keeps a real wood patch, koff IMG08, at 33.3).
COLOURED_SCENE: Final = 25.0
#: Smallest area of a detection over the scene's card area at its place (leave-one-out fit,
#: :func:`size_ratios`). Synthetic false positives off the cards (box labels, clutter): 0.22-0.36
#: whole; real cards: 0.69 and up (angle.jpg, a steep table; set-5-random-tilt, 5 cards: 0.72),
#: synthetic cards 0.89 and up (at a 45-degree tilt the areas span 0.47-2.47 of the median, the
#: fit takes that out). Bounds from 0.4 to 0.6 drop and keep the same detections.
MIN_SIZE: Final = 0.5
#: The same for a detection cut by the frame edge (partial), whose visible area is only part of
#: a card: real cut cards measure 0.41 (maormagori IMG_6439, cut by a third) and 0.61; cut
#: synthetic box labels 0.17-0.39. Bounds from 0.3 to 0.35 give the same result (0.27 lets a cut
#: label through, 0.38 drops one more); the middle keeps the real cut card's margin.
MIN_SIZE_PARTIAL: Final = 0.33
#: Fewest detections agreeing with a plane fit of the card size (else the median is used):
#: each is judged by a fit on the others, which needs more than the plane's 3 parameters.
MIN_FIT: Final = 5
#: Scale (Gaussian sigma, working px) that splits the working image into the smooth layer
#: (symbols, shading) and the grain (:func:`paper_texture`).
TEXTURE_SIGMA: Final = 1.5
#: Grain (median absolute difference from the smooth layer, grey levels) from which a blank
#: detection's paper can count as textured (:func:`textured`), and the ratio to the lower
#: quartile of the other detections' grain from which it does. Measured on the 122 photos with
#: reviewed corners, as taken and under the alterations of ``scripts/eval_robustness.py`` (and
#: washed 30 to 50 %, noise of 3 and 5 levels), quads without measurable ink: real cards (glare,
#: washed out) grain 1.8 at most and ratio 2.6 at most (grain 3.7 under noise of 8 levels, ratio
#: 1.3), but a far card's dotted faint outlines at JPEG quality 50 (omega697
#: ``cards_13_wide_shot``) grain 2.8, ratio 5.5; blank patches of carpet beside the cards in
#: washed-out photos grain 2.9 to 9.7, ratio 5.3 to 25. The bounds keep a margin above the card.
TEXTURE_MIN: Final = 4.0
TEXTURE_RATIO: Final = 7.5
#: Smallest reference grain: rendered or very clean photos measure 0.01, where any texture would
#: be a large ratio.
TEXTURE_FLOOR: Final = 0.5
#: Crop size (width, height) for the ink measurement, warped from the working image.
CROP: Final = (64, 100)


def plausible(
    small: npt.NDArray[np.uint8],
    quads: npt.NDArray[np.float64],
    partial: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """(N,) bool: each detection is plausibly a SET card of this scene.

    Colourless and textured detections are dropped first; the size is then judged against the
    rest.

    Args:
        small: (h, w, 3) uint8 BGR working image.
        quads: (N, 4, 2) float64 detections in working px, corners in any order.
        partial: (N,) bool, the detection is cut by the frame edge.
    """
    chroma = ink_chroma(small, quads)
    keep = ~colourless(small, quads, chroma) & ~textured(small, quads, chroma)
    bound = np.where(partial[keep], MIN_SIZE_PARTIAL, MIN_SIZE)
    idx = np.flatnonzero(keep)
    keep[idx] = size_ratios(quads[idx]) >= bound
    return keep


def ink_chroma(
    small: npt.NDArray[np.uint8], quads: npt.NDArray[np.float64]
) -> npt.NDArray[np.float32]:
    """(N,) float32 CIELAB chroma of each detection's ink against its paper: the quad warped from
    the working image to a :data:`CROP` crop, white-balanced on its own paper
    (:func:`vision.warp.warp_cards`), measured by :func:`vision.colour.symbol_colours` (0 where
    no pixel is ink).

    Args:
        small: (h, w, 3) uint8 BGR working image.
        quads: (N, 4, 2) float64 detections in working px, corners in any order.
    """
    if len(quads) == 0:
        return np.zeros(0, np.float32)
    return symbol_colours(warp_cards(small, _short_first(quads), size=CROP)).chroma


def colourless(
    small: npt.NDArray[np.uint8],
    quads: npt.NDArray[np.float64],
    chroma: npt.NDArray[np.float32] | None = None,
) -> npt.NDArray[np.bool_]:
    """(N,) bool: the detection's ink has no colour (chroma under :data:`GREY_CHROMA`) while
    the median ink chroma of the other detections is at least :data:`COLOURED_SCENE`.

    Args:
        small: (h, w, 3) uint8 BGR working image.
        quads: (N, 4, 2) float64 detections in working px, corners in any order.
        chroma: their :func:`ink_chroma`, if measured already.
    """
    n = len(quads)
    if n < 2:
        return np.zeros(n, dtype=bool)
    if chroma is None:
        chroma = ink_chroma(small, quads)
    return (chroma < GREY_CHROMA) & (_median_of_others(chroma) >= COLOURED_SCENE)


def textured(
    small: npt.NDArray[np.uint8],
    quads: npt.NDArray[np.float64],
    chroma: npt.NDArray[np.float32] | None = None,
) -> npt.NDArray[np.bool_]:
    """(N,) bool: the detection is a blank, grainy patch: no ink at all (:func:`ink_chroma`
    under :data:`GREY_CHROMA`), and its "paper" grainy (:func:`paper_texture` at least
    :data:`TEXTURE_MIN`) and :data:`TEXTURE_RATIO` times the lower quartile of the other
    detections' (at least :data:`TEXTURE_FLOOR`). False for N < 3 (no scene to judge by) and
    where the paper cannot be measured.

    Both are needed: a worn card's paper can be as grainy as a carpet's (nakkstar123, grain 4.2,
    8.4 times its table's), but it has its symbols; a card washed out by glare can show no ink,
    but its paper is smooth. The carpet patches measure chroma 0 (no pixel of ink).

    Args:
        small: (h, w, 3) uint8 BGR working image.
        quads: (N, 4, 2) float64 detections in working px, corners in any order.
        chroma: their :func:`ink_chroma`, if measured already.
    """
    n = len(quads)
    out = np.zeros(n, dtype=bool)
    if n < 3:
        return out
    if chroma is None:
        chroma = ink_chroma(small, quads)
    if not (chroma < GREY_CHROMA).any():  # the common case: every detection has its ink
        return out
    grain = paper_texture(small, quads)
    for i in np.flatnonzero((grain >= TEXTURE_MIN) & (chroma < GREY_CHROMA)):
        others = np.delete(grain, i)
        others = others[np.isfinite(others)]
        if len(others) >= 2:
            ref = max(float(np.percentile(others, 25)), TEXTURE_FLOOR)
            out[i] = grain[i] >= TEXTURE_RATIO * ref
    return out


def paper_texture(
    small: npt.NDArray[np.uint8], quads: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """(N,) float64 grain of each detection's paper, in grey levels: the median absolute
    difference between the grey image and its smooth layer (Gaussian, :data:`TEXTURE_SIGMA`)
    over the paper inside the quad (its middle 80 %, without the symbols: the parts darker than
    the paper's 90th percentile by more than max(10, 6 %) in the smooth layer, filled and grown by
    2 px, so stripes inside an outline do not count). NaN where under 20 paper pixels are left.

    Sensor noise raises every detection's grain alike; a carpet, a cloth or wood grain raises only
    that of a quad lying on it.

    Args:
        small: (h, w, 3) uint8 BGR working image.
        quads: (N, 4, 2) float64 detections in working px, corners in any order.
    """
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    out = np.full(len(quads), np.nan)
    grow = np.ones((3, 3), np.uint8)
    pad = int(np.ceil(3 * TEXTURE_SIGMA)) + 1  # the smooth layer of the box needs its margin
    for i, quad in enumerate(np.asarray(quads, dtype=np.float64)):
        centre = quad.mean(axis=0)
        inner = np.round(centre + 0.8 * (quad - centre)).astype(np.int32)
        x0, y0 = np.clip(inner.min(axis=0) - pad, 0, [w, h])
        x1, y1 = np.clip(inner.max(axis=0) + pad + 1, 0, [w, h])
        if x1 - x0 < 5 or y1 - y0 < 5:
            continue
        box = grey[y0:y1, x0:x1].astype(np.float32)
        layer = cv2.GaussianBlur(box, (0, 0), TEXTURE_SIGMA)
        mask = np.zeros(box.shape, np.uint8)
        cv2.fillPoly(mask, [inner - np.array([x0, y0], np.int32)], 1)
        inside = mask > 0
        levels = layer[inside]
        if len(levels) < 20:
            continue
        sample = levels[::3]  # every third pixel: the same level to 0.1
        k = int(0.9 * (len(sample) - 1))
        p90 = float(np.partition(sample, k)[k])
        ink = ((layer < p90 - max(10.0, 0.06 * p90)) & inside).astype(np.uint8)
        outlines, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cv2.drawContours(ink, outlines, -1, 1, thickness=-1)
        paper = inside & (cv2.dilate(ink, grow, iterations=2) == 0)
        grain = np.abs(box - layer)[paper]
        if len(grain) >= 20:
            out[i] = float(np.partition(grain, len(grain) // 2)[len(grain) // 2])
    return out


def _median_of_others(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """(N,) for N >= 2: the median of all the values but each one, as ``np.median`` of
    ``np.delete(values, i)`` gives it (the mean of the two middle values for an even count, in
    float32), from one sort; NaN values are left to that loop."""
    n = len(values)
    if np.isnan(values).any():
        return np.array([np.median(np.delete(values, i)) for i in range(n)])
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)

    def without(j: int) -> npt.NDArray[np.float32]:  # item j of the others, sorted
        return ranked[np.where(rank > j, j, j + 1)]

    m = n - 1
    if m % 2:
        return without(m // 2)
    return (without(m // 2 - 1) + without(m // 2)) / 2


def size_ratios(quads: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(N,) each detection's area over the scene's card area at its place (1.0 for N < 2).

    The scene's card area: with more than :data:`MIN_FIT` detections, a plane fitted by least
    squares to ``cbrt(area)`` over the quad centres (see the module text), each detection judged
    by the fit without it (its leave-one-out prediction, from the fit's hat matrix: one small
    patch at the edge of a table would tilt the plane towards itself), refitted three times on
    the detections within a factor ``1 / MIN_SIZE`` of it (the first fit on those within 4x of
    the median area). With fewer detections, or fewer than :data:`MIN_FIT` agreeing, the median
    area of the other detections.

    Args:
        quads: (N, 4, 2) float64 corners in pixels.
    """
    n = len(quads)
    if n < 2:
        return np.ones(n)
    root = np.cbrt(quad_area(quads))
    ratio = (root / np.median(root)) ** 3
    inliers = (ratio > 0.25) & (ratio < 4.0)
    if n > MIN_FIT and inliers.sum() >= MIN_FIT:
        centres = quads.mean(axis=1)
        design = np.c_[np.ones(n), centres / max(float(np.abs(centres).max()), 1.0)]
        for _ in range(3):
            fit = design[inliers]
            pinv = np.linalg.pinv(fit)  # (3, M)
            pred = design @ (pinv @ root[inliers])
            hat = np.einsum("mk,km->m", fit, pinv)  # leverage of each point in the fit
            resid = root[inliers] - pred[inliers]
            pred[inliers] = root[inliers] - resid / np.maximum(1.0 - hat, 0.05)
            ratio = (root / np.maximum(pred, 1e-9)) ** 3
            inliers = (ratio > MIN_SIZE) & (ratio < 1.0 / MIN_SIZE)
            if inliers.sum() < MIN_FIT:
                break
        else:
            return ratio
    return np.array([(root[i] / np.median(np.delete(root, i))) ** 3 for i in range(n)])


def _short_first(quads: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """(N, 4, 2) float32 corners in cyclic order about their centre, edge 0-1 a short one: all an
    ink crop needs (which short edge is on top, or a mirror image, changes no colour), at a
    twentieth of :func:`vision.detect.geometry.order_corners`' cost."""
    offset = quads - quads.mean(axis=1, keepdims=True)
    order = np.argsort(np.arctan2(offset[..., 1], offset[..., 0]), axis=1)
    q = np.take_along_axis(quads, order[..., None], axis=1)
    side = np.linalg.norm(q - np.roll(q, -1, axis=1), axis=2)  # side i: corner i to i + 1
    long_first = side[:, 0] + side[:, 2] > side[:, 1] + side[:, 3]
    return np.where(long_first[:, None, None], np.roll(q, -1, axis=1), q).astype(np.float32)
