"""A second look for cards the first search missed: on a sharpened copy of the frame.

The detector's thresholds (edge strengths, step sizes) were set on photos as taken. A slightly
defocused photo, a noisy one, a warm-lit or heavily compressed one softens the edges of some
cards under them, and those cards are lost while their neighbours are found
(``scripts/eval_detection.py --alter blur``: 97.1 % recall against 99.8 % as taken). Searching
a sharpened copy instead finds most of them, but on photos as taken it finds other things
(a box lid printed with SET symbols, a patch of a mouse mat) and loses cards (98.5 % recall:
measured). So the copy is searched as well, not instead, and only what it adds is kept:

1. Only when the first search left coloured ink on paper off every card it found: blobs of
   symbol size (:data:`SYMBOL_AREA` of a card) whose channels spread by :data:`INK_CHROMA`
   grey levels at least (SET inks are red, green and purple), off the found cards and a
   margin round them, in a surround as bright as paper (:data:`PAPER_SHARE`). 23 of the 122
   annotated photos as taken qualify; the others are returned as they were found (the check
   costs about 2 ms).
2. The copy: the working image through a 3 x 3 median (sensor noise is not sharpened into
   edges) and an unsharp mask of sigma :data:`SHARPEN_SIGMA` px, amount 1.
3. A card the copy's search finds is added when it lies off the cards already found (at most
   :data:`MAX_OVERLAP` of its area on one of them), scores as a card on the working image as
   it was (paper, symbols and shape: :data:`MIN_SECOND_SCORE`), and has the size of the
   cards found (:data:`AREA_RANGE` of their median area). Its corners come from the working
   image (not refined at full resolution).

Measured on the 122 annotated photos (``scripts/eval_detection.py --alter NAME``; cards found /
false positives of 1,069 cards, before -> after): as taken 1,067 / 1 -> the same; defocus
1,038 / 7 -> 1,048 / 7; warm light 1,047 / 8 -> 1,051 / 8; JPEG quality 50 1,046 / 8 ->
1,048 / 10; sensor noise 1,034 / 11 -> 1,035 / 13; darkened to 60 % 1,060 / 4 -> 1,060 / 5;
960 px and JPEG 95 unchanged. The 1,500 negative chips: 20 false positives, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.geometry import aspect_score, quad_area
from vision.detect.result import CardDetections
from vision.detect.scoring import probe_scores

__all__ = ["second_look", "sharpened", "unexplained_ink"]

#: Channel spread (max minus min of B, G, R, grey levels, working image) of a symbol's ink.
INK_CHROMA: Final = 40
#: A blob of ink this large, as a share of the found cards' median area, is a symbol's size.
SYMBOL_AREA: Final = (0.01, 0.6)
#: The surround of a symbol of a missed card is paper: its darkest channel at least this share
#: of the found cards' paper (their brighter quarter; a card in shadow is ~half as bright).
PAPER_SHARE: Final = 0.5
#: The found cards are blanked with this margin (scaled about each card's centre).
SURROUND: Final = 1.15
#: Unsharp mask sigma, working-image pixels (the frame's long side shrunk to 640-1279 px).
SHARPEN_SIGMA: Final = 1.5
#: Largest share of a new card's area lying on one card already found.
MAX_OVERLAP: Final = 0.15
#: Least score (aspect x paper x content, on the frame as it was) of a card added.
MIN_SECOND_SCORE: Final = 0.8
#: A card added has this share of the found cards' median area.
AREA_RANGE: Final = (0.5, 2.0)


def unexplained_ink(small: npt.NDArray[np.uint8], quads: np.ndarray) -> bool:
    """Whether the working image holds coloured ink of a symbol's size on paper off the found
    cards: a blob whose channels spread by :data:`INK_CHROMA` at least, of :data:`SYMBOL_AREA`
    of a card, whose surround (off the found cards) is paper: at least :data:`PAPER_SHARE` as
    bright, in its darkest channel, as the found cards' paper (a sliver of a wooden table seen
    between cards, a coloured object on the table, are not on paper).

    Args:
        small: (h, w, 3) uint8 BGR working image.
        quads: (N, 4, 2) found cards in working-image pixels, N >= 1.
    """
    blue, green, red = cv2.split(small)
    white = cv2.min(cv2.min(blue, green), red)
    spread = cv2.subtract(cv2.max(cv2.max(blue, green), red), white)
    _, ink = cv2.threshold(spread, INK_CHROMA, 1, cv2.THRESH_BINARY)
    quads = np.asarray(quads, dtype=np.float64)
    centres = quads.mean(axis=1, keepdims=True)
    covered = np.zeros_like(ink)
    cv2.fillPoly(covered, [q.round().astype(np.int32) for q in quads], 1)
    on_cards = white[(covered > 0) & (ink == 0)]
    if on_cards.size == 0:  # no paper to compare with
        return False
    paper = float(np.percentile(on_cards, 75))
    around = centres + SURROUND * (quads - centres)
    cv2.fillPoly(covered, [q.round().astype(np.int32) for q in around], 1)
    ink[covered > 0] = 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    areas = stats[1:, cv2.CC_STAT_AREA]
    card = float(np.median(quad_area(quads)))
    lo, hi = SYMBOL_AREA
    h, w = ink.shape
    for label in np.flatnonzero((areas >= lo * card) & (areas <= hi * card)) + 1:
        x, y, bw, bh = stats[label, :4]
        pad = max(2, int(max(bw, bh)) // 2)
        x0, y0 = max(0, x - pad), max(0, y - pad)
        x1, y1 = min(w, x + bw + pad), min(h, y + bh + pad)
        # The surround: the blob's box grown by half its size, less the blob, other ink and
        # the found cards.
        ring = (labels[y0:y1, x0:x1] != label) & (covered[y0:y1, x0:x1] == 0)
        ring &= spread[y0:y1, x0:x1] <= INK_CHROMA
        if ring.sum() >= areas[label - 1] and np.median(white[y0:y1, x0:x1][ring]) >= (
            PAPER_SHARE * paper
        ):
            return True
    return False


def sharpened(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """(H, W, 3) uint8: ``image`` through a 3 x 3 median, then an unsharp mask (amount 1) of
    sigma :data:`SHARPEN_SIGMA` px."""
    calm = cv2.medianBlur(image, 3)
    return cv2.addWeighted(calm, 2.0, cv2.GaussianBlur(calm, (0, 0), SHARPEN_SIGMA), -1.0, 0)


def overlap_share(quad: np.ndarray, found: np.ndarray) -> float:
    """Largest share of ``quad``'s area lying on one of ``found`` (convex hulls)."""
    area = float(quad_area(quad[None])[0])
    if area <= 0:
        return 1.0
    hull = cv2.convexHull(quad.astype(np.float32))
    best = 0.0
    for other in found:
        inter, _ = cv2.intersectConvexConvex(hull, cv2.convexHull(other.astype(np.float32)))
        best = max(best, float(inter) / area)
    return best


def second_look(
    small: npt.NDArray[np.uint8],
    balanced: npt.NDArray[np.uint8],
    k: int,
    found: CardDetections,
    search: Callable[[npt.NDArray[np.uint8]], CardDetections],
) -> CardDetections:
    """``found`` with the cards a search of a sharpened copy adds (see the module).

    Args:
        small: (h, w, 3) uint8 BGR working image of the frame ``found`` was found on (the
            frame shrunk by ``k``: :func:`vision.detect.masks.shrink`).
        balanced: ``small`` as the search saw it: colour-balanced and brightened
            (:func:`~vision.detect.masks.balance`, :func:`~vision.detect.masks.brighten`).
        k: the shrink factor (frame pixels per working pixel).
        found: the first search's cards (frame pixels).
        search: the detector for one frame (the first search, without a second look).

    Returns:
        ``found`` itself when it is empty or no ink lies off its cards; else ``found`` and the
        cards added after it (their corners from the working image, in frame pixels).
    """
    if len(found) == 0:
        return found
    corners = found.corners.astype(np.float64)
    work = (corners + 0.5) / k - 0.5
    if not unexplained_ink(balanced, work):
        return found
    again = search(sharpened(small))  # working-image pixels
    if len(again) == 0:
        return found
    median = float(np.median(quad_area(work)))
    quads = again.corners.astype(np.float64)
    new = [
        i
        for i, quad in enumerate(quads)
        if overlap_share(quad, work) <= MAX_OVERLAP
        and AREA_RANGE[0] * median < quad_area(quad[None])[0] < AREA_RANGE[1] * median
    ]
    if not new:
        return found
    h, w = small.shape[:2]
    focal, centre = 0.85 * max(h, w), np.array([w / 2.0, h / 2.0])
    paper, content, _, _ = probe_scores(balanced, quads[new], focal=focal, centre=centre)
    score = aspect_score(quads[new], focal, centre) * paper * content
    keep = np.array(new)[score >= MIN_SECOND_SCORE]
    if not len(keep):
        return found
    added = ((quads[keep] + 0.5) * k - 0.5).astype(np.float32)
    return CardDetections(
        np.concatenate([found.corners, added]),
        np.concatenate([found.scores, again.scores[keep]]),
        np.concatenate([found.partial, again.partial[keep]]),
    )
