"""Searching again, at a finer scale, where the working image is too coarse for the cards.

The detector searches a frame shrunk by an integer factor k that brings its long side near
:data:`vision.detect.masks.WORK_LONG_SIDE` px (:func:`vision.detect.masks.shrink`). Where the
cards are small next to the photo's long side they come out too small there to be found:
the 12 cards of a 960 x 720 webcam photo (tomwhite) widened to 4,800 x 720 with empty table
were 14 px across in the working image, and none was found; centred on a 4,000 x 3,000 canvas,
16 px, and 11 of 12 were found (measured; found by a new user's trial). Two more searches, each
of a part of the frame at that part's own, finer scale:

* **Windows.** A frame whose long side is over :data:`ELONGATED` times its short side (a
  panorama) is also searched in overlapping windows of 4:3 along its long side.
* **Zoom.** When the cards found are under :data:`ZOOM_BELOW_PX` across in the working image
  (the median of their short sides), the region round them (their bounding box grown by
  :data:`GROW` card lengths each way) is searched again.

A card found again is the one already found when :data:`SAME_CARD` of its area or more lies
on it. A window's card cut by one of the window's inner edges is left out (the windows
overlap by a third of their length, so a card cut by one lies whole in the next).

Neither search runs on the 120 annotated photos with cards (datasets/detection): their cards
measure 42 px or more across in the working image, and none is longer than 16:9.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

from vision.detect.masks import WORK_LONG_SIDE
from vision.detect.result import CardDetections
from vision.detect.second_look import _overlap_share

__all__ = ["ELONGATED", "GROW", "SAME_CARD", "ZOOM_BELOW_PX", "search_finer", "windows"]

#: Long side over short side beyond which a frame is also searched in windows (16:9 is 1.78).
ELONGATED: Final = 2.0
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
    wide as the short side allows, a third of a window apart at most, the last one flush with
    the frame's end; the whole frame when it is not longer than 4:3."""
    long, short = max(height, width), min(height, width)
    size = min(long, round(short * 4 / 3))
    if size >= long:
        return [(0, 0, width, height)]
    step = max(1, (2 * size) // 3)
    starts = list(range(0, long - size, step)) + [long - size]
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
    if max(h, w) > ELONGATED * min(h, w):
        for box in windows(h, w):
            out = _merge(out, _inside(search(_cut(frame, box)), box, (h, w)))
    if len(out):
        sides = np.linalg.norm(out.corners - np.roll(out.corners, -1, axis=1), axis=2)
        short, long = float(np.median(sides.min(axis=1))), float(np.median(sides.max(axis=1)))
        if short / k < ZOOM_BELOW_PX:
            x0, y0 = np.floor(out.corners.reshape(-1, 2).min(axis=0) - GROW * long)
            x1, y1 = np.ceil(out.corners.reshape(-1, 2).max(axis=0) + GROW * long)
            box = (max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1)))
            bh, bw = box[3] - box[1], box[2] - box[0]
            if min(bh, bw) >= 16 and _factor(bh, bw) < k:
                out = _merge(out, _inside(search(_cut(frame, box)), box, (h, w)))
    return out


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
        if corners and _overlap_share(quad, np.array(corners)) >= SAME_CARD:
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
