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
  photo of a table). Only whole cards are taken from a window. The grid search below then
  runs as for a frame the size of a window (its blobs looked for in the windows).
* **Grid.** When the cards found are under :data:`ZOOM_BELOW_PX` across in the working image
  (the median of their short sides), or when :data:`FAR_BLOBS` or more small bright
  card-shaped blobs (:func:`small_blobs`) lie off the cards found, each beside another
  (:data:`NEIGHBOUR`; more than :data:`MAX_BLOBS` in all are a texture), the region round
  them and the small cards (their bounding box grown by :data:`GROW` card lengths each way)
  is searched again in overlapping windows (:func:`grid`) at the factor that brings them to
  about :data:`ZOOM_TO_PX` across. Taken from a window: whole cards of about their size
  (:data:`FINER_SIZE`: not a speck, not a printed cell round a card). Only the cards found
  too small, and the quads that two or more blobs lie on (over several cards), are *loose*:
  a card found finer replaces the same loose one, a loose quad that two or more cards found
  finer lie on is dropped, and so is a loose one in a searched window that was not found
  there again; the cards found at a good size stand as found. (A tomwhite 27-card table in
  a 6,000 x 4,017 frame three times its size, saved as PNG: 0 cards before, 27 after, 0.4 s;
  each reviewed photo of 1,280 px or more shrunk to a third in a frame of its own size: 778
  -> 856 of 892 cards found, false 26 -> 4. A version that searched every large photo with
  no card found took a desk's part for a card and cost 1.5 s per such photo; one that let
  the finer cards replace any card lost near cards and added specks: a review.)

A card found again is one already found when :data:`SAME_CARD` of its area or more lies on
that one, or that one's on it (a quad over two cards found is neither of them, and no card).

Neither search runs on the 122 annotated photos (datasets/detection): their cards measure 42
px or more across in the working image, none is longer than 16:9, and none has blobs enough
off its cards. (A review found the first version, which searched windows in every frame over
2:1, 2 to 13 times slower on photos cropped to 2.05-2.15:1, and a charger port on a desk
photo taken for a card.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.geometry import quad_area
from vision.detect.masks import WORK_LONG_SIDE, calmed, shrink
from vision.detect.result import CardDetections
from vision.detect.second_look import overlap_share

__all__ = [
    "ELONGATED",
    "BLOB_AREA",
    "BLOB_CONTEXT",
    "BLOB_FILL",
    "BLOB_RATIO",
    "BLOB_STEP",
    "FAR_BLOBS",
    "FINER_SIZE",
    "MAX_BLOBS",
    "NEIGHBOUR",
    "GROW",
    "MAX_WINDOWS",
    "SAME_CARD",
    "ZOOM_BELOW_PX",
    "ZOOM_TO_PX",
    "grid",
    "search_finer",
    "small_blobs",
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
#: Short side, in working-image pixels, that the finer search brings the small cards found to
#: (or nearer: the factor is an integer).
ZOOM_TO_PX: Final = 50.0
#: Small card-shaped blobs (:func:`small_blobs`) off the cards found from which a frame that is
#: not a panorama is searched again finer round them: a far table (a 6,000 x 4,000 frame round
#: a 27-card table whose cards measure 18 px across in the working image: no card found, or a
#: quad over four of them; measured). Without it every large photo with no card was searched
#: again (1.5 s, and a false card on omega697's desk at 1,500 x 1,000); that desk at
#: 2,000 x 1,500 still has 3 such blobs, and the grid finds nothing there.
FAR_BLOBS: Final = 3
#: More blobs than this are a texture (floor tiles, a sheet of labels: hundreds), not a table
#: (27 cards at the most in the shared photos; a review's tiled and labelled frames were
#: searched in 16 windows for 2 s and more).
MAX_BLOBS: Final = 45
#: Distance between neighbouring blobs' centres, in their long side, within which they count
#: as a table's cards (cards dealt side by side: 1.1 to 1.3 apart).
NEIGHBOUR: Final = 2.0
#: Short side of a card found finer, as shares of the median short side of the blobs and
#: small cards that started the search: a speck, or a printed cell round a card, is not taken.
FINER_SIZE: Final = (0.6, 1.6)
#: Blob areas, working-image pixels: cards 7 to 25 px across (the detector's own smallest,
#: vision.detect.candidates.MIN_CARD_AREA, is 500: about 18 x 28 px).
BLOB_AREA: Final = (75.0, 1000.0)
#: Side of the box mean a blob is brighter than, working-image pixels.
BLOB_CONTEXT: Final = 61
#: Grey levels a blob's darkest channel stands above its surroundings.
BLOB_STEP: Final = 25
#: Share of its smallest enclosing rectangle a blob's outline fills.
BLOB_FILL: Final = 0.8
#: Long over short side of a blob's rectangle (a card: 89 / 57 = 1.56).
BLOB_RATIO: Final = (1.25, 1.95)
#: How far the zoomed region reaches past the cards found, in their median long side (1 left
#: the far-table copies of koff, on a white sheet, searched round 4 of their 12 cards only:
#: 8 of 12 found; 2: 12 of 12 in four of five; measured before the finer cards replaced the
#: coarser ones).
GROW: Final = 2.0
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
    frame: npt.NDArray[np.uint8],
    found: CardDetections,
    search: Search,
    working: npt.NDArray[np.uint8] | None = None,
) -> CardDetections:
    """``found`` with the cards the window and grid searches add (see the module).

    Args:
        frame: (H, W, 3) uint8 BGR, the frame ``found`` was found on.
        found: the cards found in the whole frame (frame pixels).
        search: the detector for one frame or part of it (its cards in that part's pixels).
        working: the working image the whole-frame search looked at (the frame shrunk by its
            working factor, :func:`vision.detect.masks.shrink`, and smoothed when noisy,
            :func:`vision.detect.masks.calmed`), where small card-shaped blobs are looked
            for; None: made here the same way when needed.

    Returns:
        ``found`` itself when no search runs or changes it; else the cards of ``found`` that
        stand, and the cards added, in frame pixels.
    """
    h, w = frame.shape[:2]
    k = _factor(h, w)
    if k == 1:
        return found
    blobs = None
    if max(h, w) > ELONGATED * min(h, w) and (len(found) == 0 or _small(found, k)):
        boxes = windows(h, w)
        if len(boxes) <= MAX_WINDOWS:
            seen = []
            for box in boxes:
                part = _cut(frame, box)
                found = _merge(found, _inside(search(part), box, (h, w)).whole())
                seen.append(_window_blobs(part) + np.array(box[:2], np.float32))
            # the cards are now as small as a window's working image sees them: searched finer
            # again below when that is still too coarse (a far table in a long panorama)
            x0, y0, x1, y1 = boxes[0]
            k = _factor(y1 - y0, x1 - x0)
            if k == 1:
                return found
            blobs = _distinct(np.concatenate(seen))
    if blobs is None:
        if working is None:
            working = calmed(shrink(frame)[0])
        blobs = small_blobs(working) * np.float32(k)
    if len(blobs) > MAX_BLOBS:  # a texture (tiles, a sheet of labels), not a table
        blobs = blobs[:0]
    # the quads over cards (two blobs or more on one) and the cards too small in the working
    # image: these the finer search may replace or drop; the others stand as found
    over = np.array([_held(quad, blobs) >= 2 for quad in found.corners], np.bool_)
    tiny = _short_sides(found.corners) / k < ZOOM_BELOW_PX
    cards = found.corners[~over]
    free = _clustered(blobs[[not _same_as_one(blob, cards) for blob in blobs]])
    if len(free) < FAR_BLOBS and not (len(found) and _small(found, k)):
        return found
    sized = np.concatenate([free, found.corners[tiny & ~over]])
    if not len(sized):
        return found
    quads = np.concatenate([sized, found.corners[over]])
    short, long = _median_sides_of(sized)
    x0, y0 = np.floor(quads.reshape(-1, 2).min(axis=0) - GROW * long)
    x1, y1 = np.ceil(quads.reshape(-1, 2).max(axis=0) + GROW * long)
    region = (max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1)))
    if min(region[2] - region[0], region[3] - region[1]) < 16:
        return found
    # the factor that brings those cards to ZOOM_TO_PX across, and never coarser than k - 1
    finer = max(1, min(k - 1, int(short / ZOOM_TO_PX)))
    boxes = grid(region, finer)
    while len(boxes) > MAX_WINDOWS:
        finer += 1
        boxes = grid(region, finer)
    if finer >= k:
        return found
    out, loose = found, over | tiny
    again = []
    for box in boxes:
        got = _inside(search(_cut(frame, box)), box, (h, w))
        # only cards of the size that started the search (a speck, a printed cell round a
        # card, a card the whole-frame search found at a good size are not what it is for)
        sides = _short_sides(got.corners)
        alike = (sides >= FINER_SIZE[0] * short) & (sides <= FINER_SIZE[1] * short)
        got = CardDetections(got.corners[alike], got.scores[alike], got.partial[alike])
        out, loose = _merge(out, got, loose)
        again.append(got.corners)
    # a loose quad lying in a window searched finer that was not found there again is no card
    # (a printed grid's cell, a quad across two cards; koff's far copies)
    seen = np.concatenate(again)
    keep = np.array(
        [
            not loose[i] or _same(quad, seen) or not any(_within(quad, box) for box in boxes)
            for i, quad in enumerate(out.corners)
        ],
        np.bool_,
    )
    if keep.all():
        return out
    return CardDetections(out.corners[keep], out.scores[keep], out.partial[keep])


def grid(region: tuple[int, int, int, int], factor: int) -> list[tuple[int, int, int, int]]:
    """Overlapping windows ``(x0, y0, x1, y1)`` covering ``region`` (frame pixels), each of the
    region's shape and small enough to be searched at a shrink factor of ``factor`` or less
    (long side under ``(factor + 1)`` x :data:`WORK_LONG_SIDE` px), evenly spaced along each
    side with each pair of neighbours overlapping by a third of a window or more (a card
    cut by one window lies whole in the next); the region itself when it is that small."""
    x0, y0, x1, y1 = region
    width, height = x1 - x0, y1 - y0
    limit = (factor + 1) * WORK_LONG_SIDE - 1
    scale = min(1.0, limit / max(width, height))
    size_x, size_y = max(1, int(width * scale)), max(1, int(height * scale))

    def starts(length: int, size: int) -> list[int]:
        if size >= length:
            return [0]
        gaps = -(-(length - size) * 3 // (2 * size))  # ceil: each step at most 2/3 of a window
        return [round(i * (length - size) / gaps) for i in range(gaps + 1)]

    return [
        (x0 + sx, y0 + sy, x0 + sx + size_x, y0 + sy + size_y)
        for sy in starts(height, size_y)
        for sx in starts(width, size_x)
    ]


def small_blobs(working: npt.NDArray[np.uint8]) -> np.ndarray:
    """Bright card-shaped blobs too small for the detector in a working image: a far table's
    cards (see :data:`FAR_BLOBS`).

    A blob is a region brighter in its darkest channel than its surroundings (a box mean
    :data:`BLOB_CONTEXT` px across) by :data:`BLOB_STEP` grey levels or more, whose outline
    fills :data:`BLOB_FILL` of its smallest enclosing rectangle, with that rectangle's sides in
    a card's ratio (:data:`BLOB_RATIO`) and its area from :data:`BLOB_AREA` [0] to [1] px.

    Args:
        working: (h, w, 3) uint8 BGR working image.

    Returns:
        (M, 4, 2) float32 corners of the blobs' rectangles, working-image pixels.
    """
    dark = cv2.min(cv2.min(working[..., 0], working[..., 1]), working[..., 2])  # numpy: 25x slower
    context = cv2.blur(dark, (BLOB_CONTEXT, BLOB_CONTEXT))
    mask = cv2.compare(cv2.subtract(dark, context), BLOB_STEP, cv2.CMP_GE)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    x, y, bw, bh, pixels = (stats[1:, i] for i in range(5))
    # a blob's box holds its rectangle (up to twice its area when turned 45 degrees)
    maybe = np.flatnonzero(
        (bw * bh >= BLOB_AREA[0]) & (bw * bh <= 2 * BLOB_AREA[1]) & (pixels >= BLOB_AREA[0] / 2)
    )
    out = []
    for i in maybe:
        patch = (labels[y[i] : y[i] + bh[i], x[i] : x[i] + bw[i]] == i + 1).astype(np.uint8)
        contours, _ = cv2.findContours(patch, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        contour = max(contours, key=cv2.contourArea) + np.array([x[i], y[i]], np.int32)
        area = cv2.contourArea(contour)
        if not BLOB_AREA[0] <= area <= BLOB_AREA[1]:
            continue
        (cx, cy), (a, b), angle = cv2.minAreaRect(contour)
        if a * b <= 0 or area < BLOB_FILL * a * b:
            continue
        if not BLOB_RATIO[0] <= max(a, b) / min(a, b) <= BLOB_RATIO[1]:
            continue
        out.append(cv2.boxPoints(((cx, cy), (a, b), angle)))
    return np.array(out, np.float32).reshape(-1, 4, 2)


def _median_sides(found: CardDetections) -> tuple[float, float]:
    """The median over the cards found of their shortest and of their longest side, px."""
    return _median_sides_of(found.corners)


def _median_sides_of(quads: np.ndarray) -> tuple[float, float]:
    """The median over quads (N, 4, 2) of their shortest and of their longest side, px."""
    sides = np.linalg.norm(quads - np.roll(quads, -1, axis=1), axis=2)
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


def _merge(
    found: CardDetections, more: CardDetections, loose: npt.NDArray[np.bool_] | None = None
) -> CardDetections | tuple[CardDetections, npt.NDArray[np.bool_]]:
    """``found`` and the cards of ``more`` that are not already in it (nor twice in ``more``).

    Without ``loose`` every card of ``found`` stands. With ``loose`` ((N,) bool over ``found``:
    cards found at a coarser scale that ``more``, found finer, may replace), a loose quad that
    two or more cards of ``more`` lie on (each with :data:`SAME_CARD` of its area on it and
    under half its size: a quad over several cards) is dropped, and a card in both is
    ``more``'s; returns the cards and their ``loose`` flags (those added: True).
    """
    keep = np.ones(len(found), np.bool_)
    if loose is not None:
        keep = np.array(
            [
                not loose[i] or (_held(quad, more.corners) < 2 and not _same(quad, more.corners))
                for i, quad in enumerate(found.corners)
            ],
            np.bool_,
        ).reshape(-1)
        found = CardDetections(found.corners[keep], found.scores[keep], found.partial[keep])
    corners = list(found.corners)
    added = []
    for i, quad in enumerate(more.corners):
        if _same(quad, np.array(corners, np.float32).reshape(-1, 4, 2)):
            continue
        corners.append(quad)
        added.append(i)
    index = np.array(added, dtype=np.intp)
    merged = found
    if added:
        merged = CardDetections(
            np.concatenate([found.corners, more.corners[index]]),
            np.concatenate([found.scores, more.scores[index]]),
            np.concatenate([found.partial, more.partial[index]]),
        )
    if loose is None:
        return merged
    return merged, np.concatenate([loose[keep], np.ones(len(added), np.bool_)])


def _within(quad: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Every corner of ``quad`` (4, 2) lies in ``box`` ``(x0, y0, x1, y1)``."""
    x0, y0, x1, y1 = box
    return bool(((quad >= (x0, y0)) & (quad <= (x1 - 1, y1 - 1))).all())


def _same(quad: np.ndarray, others: np.ndarray) -> bool:
    """``quad`` is one of ``others`` (N, 4, 2): :data:`SAME_CARD` of its area or more lies on
    one, or one's on it."""
    near = others[_touching(quad, others)]
    return len(near) > 0 and (
        overlap_share(quad, near) >= SAME_CARD
        or any(overlap_share(other, quad[None]) >= SAME_CARD for other in near)
    )


def _same_as_one(quad: np.ndarray, others: np.ndarray) -> bool:
    """:data:`SAME_CARD` of ``quad``'s area or more lies on one of ``others`` (N, 4, 2)."""
    near = others[_touching(quad, others)]
    return len(near) > 0 and overlap_share(quad, near) >= SAME_CARD


def _held(quad: np.ndarray, others: np.ndarray) -> int:
    """How many of ``others`` (N, 4, 2) lie on ``quad`` with :data:`SAME_CARD` of their area
    or more and are under half its area."""
    near = others[_touching(quad, others)]
    if not len(near):
        return 0
    area = float(quad_area(quad[None])[0])
    smaller = near[quad_area(near) < 0.5 * area]
    return sum(1 for other in smaller if overlap_share(other, quad[None]) >= SAME_CARD)


def _touching(quad: np.ndarray, others: np.ndarray) -> npt.NDArray[np.bool_]:
    """(N,) bool: the bounding boxes of ``others`` (N, 4, 2) and ``quad``'s overlap (a cheap
    test before the polygons' own)."""
    if not len(others):
        return np.zeros(0, np.bool_)
    low, high = quad.min(axis=0), quad.max(axis=0)
    return ((others.min(axis=1) <= high) & (others.max(axis=1) >= low)).all(axis=1)


def _clustered(quads: np.ndarray) -> np.ndarray:
    """The quads (N, 4, 2) with another one's centre within :data:`NEIGHBOUR` of their long
    side from their own: a table's cards lie side by side; a lone light switch or label, or a
    few scattered round a photo's edges, are not a table (a review's 8 white rectangles round
    the annotated photos' edges started the search on every photo: 10 times slower)."""
    if len(quads) < 2:
        return quads[:0]
    centres = quads.mean(axis=1)
    longs = np.linalg.norm(quads - np.roll(quads, -1, axis=1), axis=2).max(axis=1)
    apart = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(apart, np.inf)
    return quads[apart.min(axis=1) <= NEIGHBOUR * longs]


def _window_blobs(part: npt.NDArray[np.uint8]) -> np.ndarray:
    """:func:`small_blobs` of a window, in the window's pixels."""
    working, k = shrink(part)
    return small_blobs(calmed(working)) * np.float32(k)


def _distinct(quads: np.ndarray) -> np.ndarray:
    """``quads`` (N, 4, 2) less those that are one already kept (:func:`_same`): a blob seen in
    two overlapping windows, once."""
    kept: list[np.ndarray] = []
    for quad in quads:
        if not _same(quad, np.array(kept, np.float32).reshape(-1, 4, 2)):
            kept.append(quad)
    return np.array(kept, np.float32).reshape(-1, 4, 2)


def _short_sides(quads: np.ndarray) -> npt.NDArray[np.float64]:
    """(N,) the shortest side of each quad (N, 4, 2), px."""
    if not len(quads):
        return np.zeros(0)
    return np.linalg.norm(quads - np.roll(quads, -1, axis=1), axis=2).min(axis=1)
