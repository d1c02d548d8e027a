"""Cards in a pile: cards lying on or under other cards, found from their straight sides.

Where cards overlap, their paper merges into one region that no mask separates: the side of a
card lying on another is a seam (a faint shadow line, a step in the paper's shade), not a
region's outline. :func:`pile_cards` searches only regions of paper that the cards already
found do not explain and that hold symbols (a white tray or desk round cards all found is not
searched), at a finer scale than the working image (a seam is a line or two of pixels wide at
full resolution):

1. Line segments (LSD: Grompone von Gioi et al., "LSD: a Fast Line Segment Detector with a
   False Detection Control", IPOL 2012) merged into lines, each with the runs it is seen along.
2. Corners: two lines at 45 to 135 degrees, a run of each ending where they cross (an L).
3. Quads: three lines joined by two corners, and a fourth line parallel to the middle one at
   a card's width or length; each side backed by segments along some of its length.
4. Checks, each for a way a quad of four lines is not a card: the image shows each side as an
   edge along most of its length, or it passes under a card on top (a side must still show
   along :data:`MIN_SHOWN` of it, and at most :data:`MAX_HIDDEN` of the card may be covered);
   no seam runs across it (two cards' pieces); its inside and its corners are paper and its
   margins clear of ink (a side along a symbol's straight edge, or run on past the card's
   corner); card-shaped and card-sized for its place on
   the table; holds symbols; no side along a found card's side (a piece of a covered card cut
   off by the card on top, where the seam meets that card's side in a T).
5. Choice: near-duplicates to the best scoring; then the largest first (a piece of a card cut
   off by a symbol's edge is as card-like as the card), none inside another.

Cards on top are taken first; then cards under them, whose sides may pass under the cards
taken. Measured on the rendered ``overlap`` scenes of ``scripts/eval_synthetic.py`` and the heap
of pclewis ``crazy.jpg`` (the project README, "Detection").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.geometry import (
    LONG_OVER_SHORT,
    aspect_score,
    clockwise,
    local_card_area,
    points_in_quads,
    quad_area,
)
from vision.detect.masks import candidate_masks
from vision.detect.scoring import probe_scores

__all__ = ["pile_cards"]

#: Smallest region of paper no found card explains, as a share of the scene's median card, that
#: is searched for cards.
MIN_UNEXPLAINED: Final = 0.3
#: Lines are searched at a scale that gives a card's short side this many pixels (a seam is a
#: line one or two pixels wide at full resolution: the working image loses it).
SHORT_SIDE_PX: Final = 140.0
#: A line segment shorter than this share of a card's short side is not used.
MIN_SEGMENT: Final = 0.1
#: Segments merge into one line within this angle (degrees) and distance (search pixels).
MERGE_ANGLE: Final = 3.0
MERGE_DIST: Final = 2.5
#: Opposite sides of a card seen at up to ~45 degrees of tilt meet at under this angle (degrees).
MAX_OPPOSITE_ANGLE: Final = 30.0
#: Four lines are taken as a card's sides when each is backed by segments along at least
#: :data:`MIN_SEGMENT_SUPPORT` of the side (a seam shows in pieces), and the image shows a step
#: or a dark line across each side along :data:`MIN_SIDE_SUPPORT` of it, across all four along
#: :data:`MIN_MEAN_SUPPORT`.
MIN_SEGMENT_SUPPORT: Final = 0.15
MIN_SIDE_SUPPORT: Final = 0.6
MIN_MEAN_SUPPORT: Final = 0.8
#: A side must show along this share of its length at least (the rest may pass under a card on
#: top): a side hidden whole could lie anywhere under it.
MIN_SHOWN: Final = 0.3
#: A step (grey levels, largest over the three channels) across a side, between points
#: :data:`STEP_AT` px either side of it (search px), or a line darker than both sides by this.
MIN_STEP: Final = 4.0
STEP_AT: Final = 2.0
#: Gaussian sigma (search px) of the smoothing before edges are judged.
SMOOTH_SIGMA: Final = 0.8
#: A quad's area as a share of the area a card has at its place on the table
#: (:func:`~vision.detect.geometry.local_card_area`, fitted to the cards found); with fewer than
#: three cards found to fit it, as a share of their median (a near card seen by a low camera has
#: twice a far one's area).
AREA_RANGE: Final = (0.8, 1.3)
WIDE_AREA_RANGE: Final = (0.4, 2.5)
#: Quads of four lines judged (:func:`_quads`): area as a share of a card with the found cards'
#: median short side, and the distance between two opposite sides as a share of that side.
#: Wide, for the cards far off in a steep view (pclewis ``crazy.jpg``: the top card has 0.33 of
#: the median area and a short side 0.39 of the median's); the area is judged against the
#: card's place on the table afterwards (:data:`AREA_RANGE`).
QUAD_AREA: Final = (0.25, 3.0)
QUAD_GAP: Final = (0.3, 1.6 * LONG_OVER_SHORT)
#: Most lines and regions searched (the longest lines, the largest regions).
MAX_LINES: Final = 250
#: Most quads of four lines judged in a region, those best backed by segments first. The
#: ``crazy.jpg`` heap makes 327; an annotated copy of a koff tray photo (its cards outlined in
#: colour) made 118,700, and 2.2 GB of samples. Hundreds of times a heap's count.
MAX_QUADS: Final = 5000
#: Most rows of one ``cv2.remap`` map in :func:`_sample`.
_REMAP_ROWS: Final = 16384
#: (quad, run) pairs whose chords :func:`_crossed` checks at once (bounds its memory: ~40 MB).
_CHORD_BLOCK: Final = 8192
#: A line's supported runs closer than this share of a card's short side are one run.
CLOSE_GAP: Final = 0.1
#: A side runs along a found card's side (:func:`_side_on_side`) when both its ends lie within
#: this share of that side's length from its line, within :data:`T_ANGLE` degrees of it, over at
#: least :data:`T_OVERLAP` of its length.
T_DIST: Final = 0.06
T_ANGLE: Final = 6.0
T_OVERLAP: Final = 0.3
#: A straight run of at least this share of a card's short side, its middle inside the quad
#: shrunk by :data:`CROSSING_MARGIN`, spanning :data:`CROSSING_SHARE` of the quad along its
#: line, is a seam across it.
MIN_CROSSING: Final = 0.25
CROSSING_MARGIN: Final = 0.15
CROSSING_SHARE: Final = 0.7
#: A corner: two lines cross within this share of a card's short side of a run end of each.
CORNER_TOL: Final = 0.15
MAX_REGIONS: Final = 4
#: A region searched is at most this many cards' area (larger: a white desk or tray) and holds
#: symbols (holes in its paper, off the cards found) of at least this share of a card's area.
MAX_REGION: Final = 12.0
MIN_SYMBOLS: Final = 0.03
#: A hole's pixel is ink of a symbol when its channels spread by this many grey levels at least
#: (the gap between a card and its tray cell, or a shadow, is grey).
MIN_INK_CHROMA: Final = 30
#: Most of a card's area that may lie under cards on top of it (a card more than about a
#: quarter covered is not a whole card: ``datasets/detection/README.md``).
MAX_HIDDEN: Final = 0.25
#: Candidates overlapping by this IoU are one card.
SAME_CARD_IOU: Final = 0.7
#: Candidates scoring at least this are taken largest first (:func:`_choose`).
GOOD_SCORE: Final = 0.8
#: Least share of a card's inside that is paper (symbols filled in).
MIN_PAPER: Final = 0.85
#: Least share of points :data:`MARGIN_DEPTH` of the way across a card from each side that is
#: paper (a card's symbols keep about 10% clear of its sides).
MIN_MARGIN: Final = 0.8
MARGIN_DEPTH: Final = 0.07
#: Each corner of a card, taken this share of the way to its centre, is paper (or a card on
#: top of it): a quad whose side runs on past the card's corner along a line of the card under
#: it has that corner on the table (pclewis ``crazy.jpg``: the faint striped oval's card, whose
#: side is in line with the side of the card below it).
CORNER_DEPTH: Final = 0.1


def pile_cards(
    frame: npt.NDArray[np.uint8],
    small: npt.NDArray[np.uint8],
    k: float,
    found: npt.NDArray[np.float64],
    focal: float,
    centre: npt.NDArray[np.float64],
    min_score: float,
    paper: npt.NDArray[np.uint8] | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Cards in piles that the region-based search left out.

    Args:
        frame: (H, W, 3) uint8 BGR photo at full resolution.
        small: (h, w, 3) uint8 BGR working image; ``frame`` px = (working px + 0.5) * ``k`` - 0.5.
        k: the working image's scale factor.
        found: (M, 4, 2) float64 cards already found, working px. Nothing is searched without
            one (it gives the card size).
        focal: focal length (working px) for the perspective-corrected aspect ratio.
        centre: (2,) principal point, working px.
        min_score: a card must score at least this (0..1).
        paper: (h, w) uint8 0/255 paper mask of ``small``: Otsu's level of its blurred channel
            minimum (the first of :func:`vision.detect.masks.candidate_masks`); made when not
            given.

    Returns:
        (N, 4, 2) float64 clockwise quads in working px, and (N,) float64 scores in [0, 1].
    """
    none = np.zeros((0, 4, 2)), np.zeros(0)
    if len(found) == 0:
        return none
    areas = quad_area(found)
    median = float(np.median(areas))
    sides = np.linalg.norm(np.roll(found, -1, axis=1) - found, axis=2)
    short = float(np.median(np.minimum(sides[:, ::2].mean(axis=1), sides[:, 1::2].mean(axis=1))))
    if paper is None:
        paper = candidate_masks(small)[0][0]
    regions = _unexplained(small, paper, found, MIN_UNEXPLAINED * median)
    if not regions:
        return none
    filled = np.zeros_like(paper)  # paper with its holes (symbols) filled in
    outlines, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, outlines, -1, 255, thickness=cv2.FILLED)
    scale = min(1.0, SHORT_SIDE_PX / max(short * k, 1e-9))
    h, w = frame.shape[:2]
    pad = 0.8 * short * LONG_OVER_SHORT
    near = cv2.dilate(paper, np.ones((7, 7), np.uint8))  # a card's side has paper beside it
    searched: list[_Region] = []
    for x0, y0, x1, y1 in regions[:MAX_REGIONS]:
        box = (
            int(max(0, (x0 - pad + 0.5) * k)),
            int(max(0, (y0 - pad + 0.5) * k)),
            int(min(w, (x1 + pad + 0.5) * k)),
            int(min(h, (y1 + pad + 0.5) * k)),
        )
        if any(r.holds(box) for r in searched) or box[2] <= box[0] or box[3] <= box[1]:
            continue
        searched.append(_Region(frame, box, scale, k, short * k * scale, near))
    # Cards on top first; then cards under them, whose sides may hide under a card found.
    taken = found
    quads, scores = np.zeros((0, 4, 2)), np.zeros(0)
    for _ in range(2):
        more, more_scores = [], []
        for region in searched:
            q, s = region.cards(taken)
            if len(q):
                q, s = _verify(small, q, s, taken, median, focal, centre, min_score)
                ok = _paper_share(q, filled) >= MIN_PAPER
                ok &= _margins(q, paper).min(axis=1) >= MIN_MARGIN
                ok &= _corners_on(q, filled).all(axis=1)
                q, s = q[ok], s[ok]
            more += list(q)
            more_scores += list(s)
        if not more:
            break
        q, s = _choose(np.array(more), np.array(more_scores), taken)
        quads, scores = np.concatenate([quads, q]), np.concatenate([scores, s])
        taken = np.concatenate([taken, q])
    return quads, scores


def _unexplained(
    small: npt.NDArray[np.uint8],
    paper: npt.NDArray[np.uint8],
    found: npt.NDArray[np.float64],
    min_area: float,
) -> list[tuple[int, int, int, int]]:
    """Bounding boxes (x0, y0, x1, y1), working px, of the regions of ``paper`` (uint8 0/255
    mask of ``small``) outside every found card, of ``min_area`` px to :data:`MAX_REGION`
    cards, that hold symbols of cards not found (coloured holes in the paper off the found
    cards; a white tray round cards that were all found shows dark gaps at most); largest
    first."""
    cover = np.zeros_like(paper)
    cv2.fillPoly(cover, [np.rint(q).astype(np.int32) for q in found], 255)
    cover = cv2.dilate(cover, np.ones((7, 7), np.uint8))
    rest = cv2.morphologyEx(paper & ~cover, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    if cv2.countNonZero(rest) < min_area:
        return []
    _, labels, stats, _ = cv2.connectedComponentsWithStats(rest, connectivity=4)
    card = min_area / MIN_UNEXPLAINED
    area = stats[1:, cv2.CC_STAT_AREA]
    sized = np.flatnonzero((area >= min_area) & (area <= MAX_REGION * card)) + 1
    if len(sized) == 0:
        return []
    holes = np.zeros_like(paper)
    outlines, _ = cv2.findContours(rest, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(holes, outlines, -1, 255, thickness=cv2.FILLED)
    blue, green, red = cv2.split(small)
    chroma = cv2.subtract(cv2.max(cv2.max(blue, green), red), cv2.min(cv2.min(blue, green), red))
    holes &= ~rest & ~cover & (chroma >= MIN_INK_CHROMA).astype(np.uint8) * 255
    boxes = []
    for i in sized[np.argsort(-area[sized - 1])]:
        x, y, bw, bh = stats[i, :4]
        inside = holes[y : y + bh, x : x + bw] & (labels[y : y + bh, x : x + bw] == 0)
        if np.count_nonzero(inside) >= MIN_SYMBOLS * card:
            boxes.append((int(x), int(y), int(x + bw), int(y + bh)))
    return boxes


class _Region:
    """One region searched: the frame's box (x0, y0, x1, y1) at the search scale, its lines
    and the quads of four lines (:func:`_quads`)."""

    def __init__(
        self,
        frame: np.ndarray,
        box: tuple[int, int, int, int],
        scale: float,
        k: float,
        s_short: float,
        paper: np.ndarray,
    ):
        self.box, self.scale, self.k, self.s_short = box, scale, k, s_short
        x0, y0, x1, y1 = box
        self.roi = cv2.resize(
            frame[y0:y1, x0:x1], None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA
        )

        self.lines = _lines(
            self.roi, MIN_SEGMENT * s_short, lambda points: _on(paper, self.to_work(points))
        )
        # Edges are judged on a smoothed copy: glossy paper's grain is not a step.
        self.smooth = cv2.GaussianBlur(self.roi, (5, 5), SMOOTH_SIGMA)
        self.quads = _quads(self.lines, s_short)

    def holds(self, box: tuple[int, int, int, int]) -> bool:
        return (
            box[0] >= self.box[0]
            and box[1] >= self.box[1]
            and box[2] <= self.box[2]
            and box[3] <= self.box[3]
        )

    def to_work(self, points: np.ndarray) -> np.ndarray:
        return (points / self.scale + np.array(self.box[:2]) + 0.5) / self.k - 0.5

    def to_search(self, points: np.ndarray) -> np.ndarray:
        return ((points + 0.5) * self.k - 0.5 - np.array(self.box[:2])) * self.scale

    def cards(self, covers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Quads (working px) whose sides the image shows, except where they pass under one
        of ``covers`` (M, 4, 2, working px), with no seam across them, and no more than
        :data:`MAX_HIDDEN` of them under ``covers``; with the mean share of their sides
        shown."""
        cand = self.quads
        if len(cand) == 0:
            return cand, np.zeros(0)
        hide = self.to_search(covers)
        centre = hide.mean(axis=1, keepdims=True)
        hide = centre + 0.97 * (hide - centre)  # a side along a cover's side is not under it
        under = np.zeros(self.roi.shape[:2], np.uint8)
        cv2.fillPoly(under, [np.rint(q).astype(np.int32) for q in hide], 1)
        backed, shown = _image_support(self.smooth, cand, under)
        ok = (backed.min(axis=1) >= MIN_SIDE_SUPPORT) & (backed.mean(axis=1) >= MIN_MEAN_SUPPORT)
        ok &= shown.min(axis=1) >= MIN_SHOWN
        ok[ok] = _hidden_share(cand[ok], under) <= MAX_HIDDEN
        cand, backed = cand[ok], backed[ok].mean(axis=1)
        if len(cand):
            ok = ~_crossed(self.smooth, self.lines, cand, self.s_short, hide)
            cand, backed = cand[ok], backed[ok]
        return self.to_work(cand), backed


def _paper_share(quads: np.ndarray, filled: np.ndarray, n: int = 7) -> np.ndarray:
    """(N,) share of an n x n grid over the inner 80% of each quad (N, 4, 2), working px, that
    falls on paper (``filled``: uint8 mask, symbols filled in)."""
    if len(quads) == 0:
        return np.zeros(0)
    centre = quads.mean(axis=1, keepdims=True)
    inner = centre + 0.8 * (quads - centre)
    return _on(filled, _grid(inner, n)).mean(axis=1)


def _corners_on(quads: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """(N, 4) bool: each corner of each quad (N, 4, 2), working px, taken :data:`CORNER_DEPTH`
    of the way to the quad's centre, falls on paper (``filled``: uint8 mask, symbols filled
    in)."""
    centre = quads.mean(axis=1, keepdims=True)
    return _on(filled, quads + CORNER_DEPTH * (centre - quads))


def _margins(quads: np.ndarray, paper: np.ndarray, n: int = 16) -> np.ndarray:
    """(N, 4) share of points just inside each side of each quad (N, 4, 2), working px, on
    paper (``paper``: uint8 mask): a card's symbols keep clear of its sides, so a side drawn
    along a symbol's straight edge has ink beside it."""
    if len(quads) == 0:
        return np.zeros((0, 4))
    opposite = np.roll(quads, -2, axis=1)  # corner k+2 across from corner k
    t = ((np.arange(n) + 0.5) / n)[None, None, :, None]
    a, b = quads[:, :, None], np.roll(quads, -1, axis=1)[:, :, None]
    oa, ob = np.roll(opposite, -1, axis=1)[:, :, None], opposite[:, :, None]
    side = a + (b - a) * t
    across = oa + (ob - oa) * t  # the matching points of the opposite side
    return _on(paper, side + MARGIN_DEPTH * (across - side)).mean(axis=2)


def _grid(quads: np.ndarray, n: int) -> np.ndarray:
    """(N, n * n, 2) points of an n x n grid spread over each quad (N, 4, 2), bilinearly."""
    u = (np.arange(n) + 0.5) / n
    uu, vv = np.meshgrid(u, u)
    uu, vv = uu.ravel()[None, :, None], vv.ravel()[None, :, None]
    a, b, c, d = (quads[:, i][:, None] for i in range(4))
    top = a + (b - a) * uu
    bottom = d + (c - d) * uu
    return top + (bottom - top) * vv


def _hidden_share(quads: np.ndarray, under: np.ndarray, n: int = 7) -> np.ndarray:
    """(N,) share of each quad (N, 4, 2) on ``under`` (uint8 mask of the cards on top), from an
    n x n grid."""
    if len(quads) == 0:
        return np.zeros(0)
    return _on(under, _grid(quads, n)).mean(axis=1)


def _on(mask: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(...) bool: ``mask`` (h, w) is set at each of ``points`` (..., 2) (x, y; clipped)."""
    p = np.rint(points).astype(np.intp)
    x = np.clip(p[..., 0], 0, mask.shape[1] - 1)
    y = np.clip(p[..., 1], 0, mask.shape[0] - 1)
    return mask[y, x] > 0


class _Lines:
    """Merged lines: unit normal ``n`` (L, 2), offset ``c`` (n . p = c), direction ``d``
    (L, 2), and per line a support occupancy along t = d . p (``occ``: cumulative sums over
    1-px bins from ``t0``)."""

    def __init__(self, n: np.ndarray, c: np.ndarray, t0: np.ndarray, occ: list[np.ndarray]):
        self.n, self.c, self.t0, self.occ = n, c, t0, occ
        self.d = np.c_[-n[:, 1], n[:, 0]]
        width = max((len(o) for o in occ), default=1)
        #: (L, width) cumulative support, padded with each line's total.
        self.cum = np.array([np.pad(o, (0, width - len(o)), mode="edge") for o in occ]).reshape(
            len(occ), width
        )

    def __len__(self) -> int:
        return len(self.c)

    def support(self, i: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(N,) share of each segment from point ``a`` (N, 2) to ``b`` (N, 2), on line ``i``
        (N,), that is backed by line segments."""
        d = self.d[i]
        ta, tb = (d * a).sum(axis=1), (d * b).sum(axis=1)
        ta, tb = np.minimum(ta, tb), np.maximum(ta, tb)
        last = self.cum.shape[1] - 1
        lo = np.clip(np.rint(ta - self.t0[i]), 0, last).astype(np.intp)
        hi = np.clip(np.rint(tb - self.t0[i]), 0, last).astype(np.intp)
        return (self.cum[i, hi] - self.cum[i, lo]) / np.maximum(tb - ta, 1.0)


def _lines(roi: npt.NDArray[np.uint8], min_len: float, on_paper: Callable) -> _Lines:
    """Line segments of the grey ``roi`` (LSD) at least ``min_len`` px long whose middle is
    ``on_paper`` ((N, 2) points -> (N,) bool), merged into lines."""
    grey = cv2.cvtColor(roi, cv2.COLOR_BGR2GRAY)
    found = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(grey)[0]
    if found is None:
        return _Lines(np.zeros((0, 2)), np.zeros(0), np.zeros(0), [])
    seg = found.reshape(-1, 4).astype(np.float64)
    length = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    keep = length >= min_len
    keep[keep] = on_paper((seg[keep, :2] + seg[keep, 2:]) / 2.0)
    seg, length = seg[keep], length[keep]
    order = np.argsort(-length)
    seg, length = seg[order], length[order]
    groups: list[list[int]] = []
    normals: list[np.ndarray] = []
    offsets: list[float] = []
    cos_merge = np.cos(np.radians(MERGE_ANGLE))
    for s, (x1, y1, x2, y2) in enumerate(seg):
        d = np.array([x2 - x1, y2 - y1]) / length[s]
        n = np.array([-d[1], d[0]])
        p1, p2 = np.array([x1, y1]), np.array([x2, y2])
        for g, (gn, gc) in enumerate(zip(normals, offsets)):
            if abs(gn @ n) >= cos_merge and max(abs(gn @ p1 - gc), abs(gn @ p2 - gc)) <= MERGE_DIST:
                groups[g].append(s)
                break
        else:
            groups.append([s])
            normals.append(n)
            offsets.append(float(n @ (p1 + p2) / 2))
    groups = groups[:MAX_LINES]
    n_out, c_out, t0_out, occ_out = [], [], [], []
    for g in groups:
        pts = np.concatenate([seg[g, :2], seg[g, 2:]])
        wts = np.repeat(length[g], 1)
        wts = np.concatenate([wts, wts])
        mean = (pts * wts[:, None]).sum(axis=0) / wts.sum()
        cov = ((pts - mean) * wts[:, None]).T @ (pts - mean)
        _, vecs = np.linalg.eigh(cov)
        n = vecs[:, 0]
        d = np.array([-n[1], n[0]])
        t = np.c_[seg[g, :2] @ d, seg[g, 2:] @ d]
        t0 = float(t.min())
        bins = np.zeros(int(np.ceil(t.max() - t0)) + 2)
        for a, b in np.sort(t, axis=1):
            bins[int(a - t0) : int(np.ceil(b - t0)) + 1] = 1.0
        n_out.append(n)
        c_out.append(float(n @ mean))
        t0_out.append(t0)
        occ_out.append(np.r_[0.0, np.cumsum(bins)])
    return _Lines(np.array(n_out).reshape(-1, 2), np.array(c_out), np.array(t0_out), occ_out)


def _meet(lines: _Lines, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, 2) intersection points of lines ``a`` and ``b`` (N,)."""
    n1, n2 = lines.n[a], lines.n[b]
    det = n1[:, 0] * n2[:, 1] - n1[:, 1] * n2[:, 0]
    det = np.where(np.abs(det) < 1e-9, 1e-9, det)
    c1, c2 = lines.c[a], lines.c[b]
    return np.c_[(c1 * n2[:, 1] - c2 * n1[:, 1]) / det, (n1[:, 0] * c2 - n2[:, 0] * c1) / det]


def _run_ends(lines: _Lines, gap: float) -> list[np.ndarray]:
    """Per line, the t values where its supported runs end (gaps under ``gap`` px closed)."""
    out = []
    for li in range(len(lines)):
        occ = np.diff(lines.cum[li]) > 0
        idx = np.flatnonzero(occ)
        if len(idx) == 0:
            out.append(np.zeros(0))
            continue
        breaks = np.flatnonzero(np.diff(idx) > gap)
        starts = np.r_[idx[0], idx[breaks + 1]]
        stops = np.r_[idx[breaks], idx[-1]] + 1
        out.append(lines.t0[li] + np.r_[starts, stops].astype(np.float64))
    return out


def _junctions(lines: _Lines, s_short: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of lines (J, 2) that meet in a corner: at 45 to 135 degrees, with a supported
    run of each ending near the crossing (an L, not an X or a T); and the crossings (J, 2)."""
    m = len(lines)
    i, j = np.triu_indices(m, 1)
    cos = np.abs((lines.n[i] * lines.n[j]).sum(axis=1))
    keep = cos < np.cos(np.radians(45.0))
    i, j = i[keep], j[keep]
    if len(i) == 0:
        return np.zeros((0, 2), np.intp), np.zeros((0, 2))
    x = _meet(lines, i, j)
    ends = _run_ends(lines, CLOSE_GAP * s_short)
    width = max(max((len(e) for e in ends), default=1), 1)
    padded = np.full((m, width), np.inf)
    for li, e in enumerate(ends):
        padded[li, : len(e)] = e
    tol = CORNER_TOL * s_short

    def near_end(li: np.ndarray) -> np.ndarray:
        t = (lines.d[li] * x).sum(axis=1)
        return (np.abs(padded[li] - t[:, None]) <= tol).any(axis=1)

    ok = near_end(i) & near_end(j)
    return np.c_[i[ok], j[ok]], x[ok]


def _quads(lines: _Lines, s_short: float) -> np.ndarray:
    """(N, 4, 2) quads (search px) whose sides lie on four lines, three corners of which are
    corners of the lines (:func:`_junctions`; the fourth may be hidden under another card), each
    side backed by segments along some of its length."""
    if len(lines) < 4:
        return np.zeros((0, 4, 2))
    pairs, _ = _junctions(lines, s_short)
    if len(pairs) < 3:
        return np.zeros((0, 4, 2))
    nbr: dict[int, set[int]] = {}
    for a, b in pairs:
        nbr.setdefault(int(a), set()).add(int(b))
        nbr.setdefault(int(b), set()).add(int(a))
    # Chains l0 - l1 - l2 of two corners; the fourth side l3 is any line across l0 and l2.
    chains = sorted({(l0, l1, l2) for l1, ns in nbr.items() for l0 in ns for l2 in ns if l0 < l2})
    if not chains:
        return np.zeros((0, 4, 2))
    c = np.array(chains)
    # Opposite sides near-parallel (a card seen at up to ~45 degrees of tilt).
    par = np.abs(lines.n @ lines.n.T) >= np.cos(np.radians(MAX_OPPOSITE_ANGLE))  # (m, m)
    c = c[par[c[:, 0], c[:, 2]]]
    # The fourth side: parallel to l1, a card's width or length from it (at corner l1-l2).
    corner = _meet(lines, c[:, 1], c[:, 2])
    gap = np.abs(corner @ lines.n.T - lines.c[None])  # (chains, m)
    fourth = par[c[:, 1]] & (gap > QUAD_GAP[0] * s_short) & (gap < QUAD_GAP[1] * s_short)
    which, l3 = np.nonzero(fourth)
    l0, l1, l2 = c[which, 0], c[which, 1], c[which, 2]
    ok = (l3 != l0) & (l3 != l2)
    l0, l1, l2, l3 = l0[ok], l1[ok], l2[ok], l3[ok]
    corners = np.stack(
        [_meet(lines, l0, l1), _meet(lines, l1, l2), _meet(lines, l2, l3), _meet(lines, l3, l0)],
        axis=1,
    )
    # Side (corner k -> k+1) lies on line l1, l2, l3, l0 in turn.
    on = np.stack([l1, l2, l3, l0], axis=1)
    area = quad_area(corners)
    card = s_short * s_short * LONG_OVER_SHORT
    ok = (area > QUAD_AREA[0] * card) & (area < QUAD_AREA[1] * card) & _convex(corners)
    corners, on = corners[ok], on[ok]
    if len(corners) == 0:
        return np.zeros((0, 4, 2))
    support = np.stack(
        [lines.support(on[:, s], corners[:, s], corners[:, (s + 1) % 4]) for s in range(4)],
        axis=1,
    )
    backed = support.min(axis=1) >= MIN_SEGMENT_SUPPORT
    corners, support = corners[backed], support[backed]
    if len(corners) > MAX_QUADS:  # a drawing's or a grid's many lines, not a pile's
        best = np.argsort(-support.mean(axis=1), kind="stable")[:MAX_QUADS]
        corners = corners[np.sort(best)]
    return corners


def _crossed(
    roi: npt.NDArray[np.uint8],
    lines: _Lines,
    quads: np.ndarray,
    s_short: float,
    covers: np.ndarray,
) -> np.ndarray:
    """(N,) bool: a line with a supported run whose middle lies well inside the quad (N, 4, 2),
    search px, shows as an edge along most of the quad's chord on it: a seam between two
    cards, not one card (a symbol's straight edges span half the card at most)."""
    mids, dirs, lengths = [], [], []
    for li, ends in enumerate(_run_ends(lines, CLOSE_GAP * s_short)):
        half = len(ends) // 2
        starts, stops = ends[:half], ends[half:]
        long = (stops - starts) >= MIN_CROSSING * s_short
        t = (starts[long] + stops[long]) / 2.0
        mids.append(lines.d[li] * t[:, None] + lines.n[li] * lines.c[li])
        dirs.append(np.repeat(lines.d[li][None], long.sum(), axis=0))
        lengths.append((stops - starts)[long])
    out = np.zeros(len(quads), dtype=bool)
    if not mids:
        return out
    points, d, length = np.concatenate(mids), np.concatenate(dirs), np.concatenate(lengths)
    if len(covers):
        # The side of a card on top crosses the card under it.
        centre = covers.mean(axis=1, keepdims=True)
        grown = centre + 1.06 * (covers - centre)
        free = ~points_in_quads(points, grown).any(axis=0)
        points, d, length = points[free], d[free], length[free]
    centre = quads.mean(axis=1, keepdims=True)
    inner = centre + (1.0 - CROSSING_MARGIN) * (quads - centre)
    pairs_q, pairs_r = np.nonzero(points_in_quads(points, inner))
    # Every (quad, run) pair at once, in blocks (a cluttered 7 MP photo makes 66,000 pairs).
    for start in range(0, len(pairs_q), _CHORD_BLOCK):
        qs = pairs_q[start : start + _CHORD_BLOCK]
        rs = pairs_r[start : start + _CHORD_BLOCK]
        # The chord of quad q along run r's line: the two crossings of the quad's sides.
        a = quads[qs]  # (P, 4, 2)
        e = np.roll(a, -1, axis=1) - a
        rel = a - points[rs][:, None, :]
        dr = d[rs][:, None, :]  # (P, 1, 2)
        den = dr[..., 0] * e[..., 1] - dr[..., 1] * e[..., 0]  # (P, 4)
        safe = np.where(np.abs(den) < 1e-9, 1e-9, den)
        t = (rel[..., 0] * e[..., 1] - rel[..., 1] * e[..., 0]) / safe  # along the run
        u = (rel[..., 0] * dr[..., 1] - rel[..., 1] * dr[..., 0]) / safe  # along the side
        hit = (np.abs(den) >= 1e-9) & (u >= 0) & (u <= 1)
        chord = hit.sum(axis=1) >= 2
        if not chord.any():
            continue
        t_lo = np.where(hit, t, np.inf).min(axis=1)[chord]
        t_hi = np.where(hit, t, -np.inf).max(axis=1)[chord]
        start_pts = points[rs[chord]] + t_lo[:, None] * d[rs[chord]]
        end_pts = points[rs[chord]] + t_hi[:, None] * d[rs[chord]]
        shown, _ = _edges_shown(roi, start_pts, end_pts, 24)
        out[qs[chord][shown.mean(axis=1) >= CROSSING_SHARE]] = True
    return out


def _convex(q: np.ndarray) -> np.ndarray:
    """(N,) bool: each quad (N, 4, 2) is convex (all turns one way)."""
    e = np.roll(q, -1, axis=1) - q
    f = np.roll(e, -1, axis=1)
    cross = e[:, :, 0] * f[:, :, 1] - e[:, :, 1] * f[:, :, 0]
    return (cross > 0).all(axis=1) | (cross < 0).all(axis=1)


def _image_support(
    roi: npt.NDArray[np.uint8], quads: np.ndarray, under: np.ndarray, samples: int = 24
) -> tuple[np.ndarray, np.ndarray]:
    """(N, 4) share of each side of ``quads`` (N, 4, 2), search px, along which the image shows
    an edge (a step in any channel, or a thin dark line) or which lies on ``under`` (uint8 mask
    of the cards on top); and (N, 4) the share shown, not under a card."""
    shown, pts = _edges_shown(roi, quads, np.roll(quads, -1, axis=1), samples)  # (N, 4, S)
    hidden = _on(under, pts)
    return (shown | hidden).mean(axis=2), (shown & ~hidden).mean(axis=2)


def _edges_shown(
    roi: npt.NDArray[np.uint8], a: np.ndarray, b: np.ndarray, samples: int
) -> tuple[np.ndarray, np.ndarray]:
    """(..., S) bool: the image shows an edge across the segment from ``a`` to ``b`` (..., 2),
    search px, at S points spread over its middle 84% (a step of :data:`MIN_STEP` in any
    channel between points :data:`STEP_AT` px either side, or a thin line that much darker
    than both sides); and the points (..., S, 2)."""
    t = np.linspace(0.08, 0.92, samples)[:, None]
    pts = a[..., None, :] + (b - a)[..., None, :] * t  # (..., S, 2)
    d = (b - a) / np.maximum(np.linalg.norm(b - a, axis=-1, keepdims=True), 1e-9)
    normal = np.stack([-d[..., 1], d[..., 0]], axis=-1)[..., None, :]
    offsets = (-1.5 * STEP_AT, -STEP_AT, 0.0, STEP_AT, 1.5 * STEP_AT)
    at = np.stack([pts + o * normal for o in offsets], axis=0).astype(np.float32)
    vals = _sample(roi, at.reshape(-1, 2)).reshape(*at.shape[:-1], 3)
    step = np.abs(vals[3] - vals[1]).max(axis=-1)
    dark = (np.minimum(vals[0], vals[4]) - vals[2]).max(axis=-1)
    return np.maximum(step, dark) >= MIN_STEP, pts


def _sample(image: npt.NDArray[np.uint8], points: np.ndarray) -> np.ndarray:
    """(P, 3) float32 bilinear samples of ``image`` (h, w, 3) at ``points`` (P, 2) (x, y).

    The points go to ``cv2.remap`` as maps of 1,024 columns, at most :data:`_REMAP_ROWS` rows
    a call (OpenCV's remap takes maps of under 32,767 rows)."""
    width = 1024
    count = len(points)
    if count == 0:
        return np.zeros((0, 3), np.float32)
    grid = np.zeros((-(-count // width) * width, 2), np.float32)
    grid[:count] = points
    grid = grid.reshape(-1, width, 2)
    out = np.concatenate(
        [
            cv2.remap(
                image,
                grid[r : r + _REMAP_ROWS, :, 0],
                grid[r : r + _REMAP_ROWS, :, 1],
                cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_REPLICATE,
            )
            for r in range(0, len(grid), _REMAP_ROWS)
        ]
    )
    return out.reshape(-1, 3)[:count].astype(np.float32)


def _verify(
    small: np.ndarray,
    quads: np.ndarray,
    backed: np.ndarray,
    found: np.ndarray,
    median: float,
    focal: float,
    centre: np.ndarray,
    min_score: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The quads (working px) that are card-shaped, card-sized, not on a found card, and hold
    paper and symbols, with their scores."""
    quads = np.array([clockwise(q) for q in quads]).reshape(-1, 4, 2)
    area = quad_area(quads)
    local = local_card_area(quads, found)
    lo, hi = (
        np.where(local > 0, AREA_RANGE[0], WIDE_AREA_RANGE[0]),
        np.where(local > 0, AREA_RANGE[1], WIDE_AREA_RANGE[1]),
    )
    ref = np.where(local > 0, local, median)
    ok = (area > lo * ref) & (area < hi * ref)
    ok &= ~points_in_quads(quads.mean(axis=1), found).any(axis=0)
    ok &= ~_side_on_side(quads, found)
    quads, backed = quads[ok], backed[ok]
    if len(quads) == 0:
        return quads, np.zeros(0)
    paper, content, _, _ = probe_scores(small, quads, focal=focal, centre=centre)
    scores = aspect_score(quads, focal, centre) * paper * content * backed
    keep = scores >= min_score
    return quads[keep], scores[keep]


def _iou(a: np.ndarray, b: np.ndarray, area_a: float, area_b: float) -> float:
    """Intersection over union of two convex quads (4, 2) of the given areas."""
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return float(inter) / max(area_a + area_b - float(inter), 1e-9)


def _side_on_side(quads: np.ndarray, found: np.ndarray) -> np.ndarray:
    """(N,) bool: a side of the quad (N, 4, 2) runs along a side of a ``found`` card (M, 4, 2):
    within :data:`T_ANGLE` degrees of it, both its ends within :data:`T_DIST` of the found side's
    length from that side's line, over at least :data:`T_OVERLAP` of its length. A piece of a
    covered card cut off by the card on top has that card's side for its own (the seam meets it
    in a T); a card lying next to a found one is found by the region search."""
    out = np.zeros(len(quads), dtype=bool)
    if len(found) == 0 or len(quads) == 0:
        return out
    c = found.reshape(-1, 2)
    e = np.roll(found, -1, axis=1).reshape(-1, 2) - c  # (4M, 2)
    length = np.maximum(np.linalg.norm(e, axis=1), 1e-9)
    u = e / length[:, None]
    a = quads.reshape(-1, 2)
    f = np.roll(quads, -1, axis=1).reshape(-1, 2) - a  # (4N, 2)
    flen = np.maximum(np.linalg.norm(f, axis=1), 1e-9)
    cos = np.abs(f @ u.T) / flen[:, None]  # (4N, 4M)
    along = cos >= np.cos(np.radians(T_ANGLE))

    def offset(p: np.ndarray) -> np.ndarray:  # distance of points (4N, 2) from each line
        rel = p[:, None] - c[None]
        return np.abs(rel[..., 0] * u[None, :, 1] - rel[..., 1] * u[None, :, 0])

    near = (offset(a) < T_DIST * length) & (offset(a + f) < T_DIST * length)
    ta = ((a[:, None] - c[None]) * u[None]).sum(axis=2)  # projections on the found side
    tb = (((a + f)[:, None] - c[None]) * u[None]).sum(axis=2)
    lo, hi = np.minimum(ta, tb), np.maximum(ta, tb)
    shared = np.clip(np.minimum(hi, length[None]) - np.maximum(lo, 0.0), 0.0, None)
    on = along & near & (shared >= T_OVERLAP * flen[:, None])
    return on.any(axis=1).reshape(len(quads), 4).any(axis=1)


def _choose(
    quads: np.ndarray, scores: np.ndarray, found: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The quads to keep, largest first among those scoring at least :data:`GOOD_SCORE` (then
    the rest, largest first): a piece of a card cut off by a symbol's straight edge or a seam
    is as card-like as the card, while a card together with a strip of the card under it is
    crossed by the seam between them (:func:`_crossed`). A quad whose centre lies in a chosen
    one (or holds a chosen one's), or with a corner on a chosen or found card's outline, is
    left out."""
    # Near-duplicates (the same card from neighbouring lines): the best scoring one.
    area = quad_area(quads)
    kept: list[int] = []
    for i in np.argsort(-scores):
        if all(_iou(quads[i], quads[j], area[i], area[j]) < SAME_CARD_IOU for j in kept):
            kept.append(int(i))
    quads, scores, area = quads[kept], scores[kept], area[kept]
    chosen: list[int] = []
    for i in np.lexsort((-area, scores < GOOD_SCORE)):
        if _side_on_side(quads[i][None], np.concatenate([found, quads[chosen]]))[0]:
            continue
        if chosen:
            taken = quads[chosen]
            if points_in_quads(quads[i].mean(axis=0)[None], taken).any():
                continue
            if points_in_quads(taken.mean(axis=1), quads[i][None]).any():
                continue
        chosen.append(int(i))
    return quads[chosen], scores[chosen]
