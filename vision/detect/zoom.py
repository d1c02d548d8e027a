"""Searching again, at a finer scale, where the working image is too coarse for the cards.

The detector searches a frame shrunk by an integer factor k that brings its long side near
:data:`vision.detect.masks.WORK_LONG_SIDE` px (:func:`vision.detect.masks.shrink`). Where the
cards are small next to the photo's long side they come out too small there to be found:
the 12 cards of a 960 x 720 webcam photo (tomwhite) widened to 4,800 x 720 with empty table
were 14 px across in the working image, and none was found; centred on a 4,000 x 3,000 canvas,
16 px, and 11 of 12 were found (measured; found by a new user's trial). Two more searches, each
of a part of the frame at that part's own, finer scale:

* **Windows.** A frame whose long side is over :data:`ELONGATED` times its short side (a
  panorama, not a 20:9 or 21:9 phone photo) in which no card was found, or only cards under
  :data:`ZOOM_BELOW_PX` across in the working image, is also searched in overlapping windows
  of 4:3 along its long side (:data:`MAX_WINDOWS` at most; a strip that needs more is not a
  photo of a table). Only whole cards are taken from a window.
* **Zoom.** When the cards found are under :data:`ZOOM_BELOW_PX` across in the working image
  (the median of their short sides), the region round them (their bounding box grown by
  :data:`GROW` card lengths each way) is searched again; a card cut by one of the region's
  inner edges is left out.

A card found again is one already found when :data:`SAME_CARD` of its area or more lies on
that one, or that one's on it (a quad over two cards found is neither of them, and no card).

Neither search runs on the 120 annotated photos with cards (datasets/detection): their cards
measure 42 px or more across in the working image, and none is longer than 16:9. (A review
found the first version, which searched windows in every frame over 2:1, 2 to 13 times slower
on photos cropped to 2.05-2.15:1, and a charger port on a desk photo taken for a card.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

from vision.detect.masks import WORK_LONG_SIDE
from vision.detect.result import CardDetections
from vision.detect.second_look import overlap_share

__all__ = [
    "ELONGATED",
    "GROW",
    "MAX_WINDOWS",
    "SAME_CARD",
    "ZOOM_BELOW_PX",
    "search_finer",
    "windows",
]

#: Long side over short side beyond which a frame may be searched in windows (16:9 is 1.78,
#: the widest phone photos 21:9, 2.33).
ELONGATED: Final = 2.5
#: Most windows searched in one frame (a 720 x 10,000 panorama needs 14).
MAX_WINDOWS: Final = 24
#: Median short side, in working-image pixels, of the cards found under which the region round
#: them is searched again (the annotated photos: 42 px or more; the panorama above: 14).
ZOOM_BELOW_PX: Final = 30.0
#: How far the zoomed region reaches past the cards found, in their median long side.
GROW: Final = 1.0
#: Share of a card's area on one already found from which it is that card.
SAME_CARD: Final = 0.5

Search = Callable[[npt.NDArray[np.uint8]], CardDetections]


def _factor(height: int, width: int) -> int:
    """The working image's shrink factor for a frame of this size (as
    :func:`vision.detect.masks.shrink` chooses it)."""
    return max(1, min(int(max(height, width) / WORK_LONG_SIDE), min(height, width) // 16))


def windows(height: int, width: int) -> list[tuple[int, int, int, int]]:
    """Overlapping 4:3 windows ``(x0, y0, x1, y1)`` along the long side of a frame, each as
    long as 4/3 of the short side, evenly spaced from one end to the other with each pair
    overlapping by a third of a window or more; the whole frame when it is not longer than
    4:3."""
    long, short = max(height, width), min(height, width)
    size = min(long, round(short * 4 / 3))
    if size >= long:
        return [(0, 0, width, height)]
    gaps = -(-(long - size) * 3 // (2 * size))  # ceil: each step at most 2/3 of a window
    starts = [round(i * (long - size) / gaps) for i in range(gaps + 1)]
    if width >= height:
        return [(s, 0, s + size, height) for s in starts]
    return [(0, s, width, s + size) for s in starts]


def search_finer(
    frame: npt.NDArray[np.uint8], found: CardDetections, search: Search
) -> CardDetections:
    """``found`` with the cards the window and zoom searches add (see the module).

    Args:
        frame: (H, W, 3) uint8 BGR, the frame ``found`` was found on.
        found: the cards found in the whole frame (frame pixels).
        search: the detector for one frame or part of it (its cards in that part's pixels).

    Returns:
        ``found`` itself when neither search runs or adds a card; else ``found`` and the cards
        added after it, in frame pixels.
    """
    h, w = frame.shape[:2]
    k = _factor(h, w)
    if k == 1:
        return found
    out = found
    if max(h, w) > ELONGATED * min(h, w) and (len(found) == 0 or _small(found, k)):
        boxes = windows(h, w)
        if len(boxes) <= MAX_WINDOWS:
            for box in boxes:
                out = _merge(out, _inside(search(_cut(frame, box)), box, (h, w)).whole())
    if len(out) and _small(out, k):
        long = _median_sides(out)[1]
        x0, y0 = np.floor(out.corners.reshape(-1, 2).min(axis=0) - GROW * long)
        x1, y1 = np.ceil(out.corners.reshape(-1, 2).max(axis=0) + GROW * long)
        box = (max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1)))
        bh, bw = box[3] - box[1], box[2] - box[0]
        if min(bh, bw) >= 16 and _factor(bh, bw) < k:
            out = _merge(out, _inside(search(_cut(frame, box)), box, (h, w)))
    return out


def _median_sides(found: CardDetections) -> tuple[float, float]:
    """The median over the cards found of their shortest and of their longest side, px."""
    sides = np.linalg.norm(found.corners - np.roll(found.corners, -1, axis=1), axis=2)
    return float(np.median(sides.min(axis=1))), float(np.median(sides.max(axis=1)))


def _small(found: CardDetections, k: int) -> bool:
    """The cards found measure under :data:`ZOOM_BELOW_PX` across in the working image (the
    median of their short sides, frame pixels over ``k``)."""
    return _median_sides(found)[0] / k < ZOOM_BELOW_PX


def _cut(frame: npt.NDArray[np.uint8], box: tuple[int, int, int, int]) -> npt.NDArray[np.uint8]:
    x0, y0, x1, y1 = box
    return np.ascontiguousarray(frame[y0:y1, x0:x1])


def _inside(
    got: CardDetections, box: tuple[int, int, int, int], frame_size: tuple[int, int]
) -> CardDetections:
    """A part's cards in frame pixels, less those cut by one of the part's inner edges (an
    edge that is not the frame's)."""
    x0, y0, x1, y1 = box
    h, w = frame_size
    keep = []
    for i, quad in enumerate(got.corners):
        if got.partial[i]:
            low, high = quad.min(axis=0), quad.max(axis=0)
            margin = 2.0
            if (
                (x0 > 0 and low[0] <= margin)
                or (y0 > 0 and low[1] <= margin)
                or (x1 < w and high[0] >= x1 - x0 - 1 - margin)
                or (y1 < h and high[1] >= y1 - y0 - 1 - margin)
            ):
                continue
        keep.append(i)
    index = np.array(keep, dtype=np.intp)
    shift = np.array([x0, y0], np.float32)
    return CardDetections(got.corners[index] + shift, got.scores[index], got.partial[index])


def _merge(found: CardDetections, more: CardDetections) -> CardDetections:
    """``found`` and the cards of ``more`` that are not already in it (nor twice in ``more``)."""
    corners = list(found.corners)
    added = []
    for i, quad in enumerate(more.corners):
        if corners and (
            overlap_share(quad, np.array(corners)) >= SAME_CARD
            or any(overlap_share(other, quad[None]) >= SAME_CARD for other in corners)
        ):
            continue
        corners.append(quad)
        added.append(i)
    if not added:
        return found
    index = np.array(added, dtype=np.intp)
    return CardDetections(
        np.concatenate([found.corners, more.corners[index]]),
        np.concatenate([found.scores, more.scores[index]]),
        np.concatenate([found.partial, more.partial[index]]),
    )
