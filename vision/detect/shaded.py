"""Sides stopped short of a card's edge: a card half in a hand's shadow shows a strong edge where
the shadow starts (lit paper against shaded paper), and a hypothesis placed beside a found card
may snap to a symbol's outline running along its side. Beyond such a side lies more of the
card's paper, not the table: the side is moved out to the next step down onto the table."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import clockwise, corner_score, quad_area, side_frames
from vision.detect.neighbours import on_dark_table, side_levels
from vision.detect.refine import snap_sides

__all__ = ["extend_sides"]


#: Farthest a side is moved, as a share of the card's extent across it (a hand's shadow
#: covering more of the card leaves too little lit paper to place the rest).
_REACH: Final = 0.35
#: Paper beyond a side: its chromaticity (B, G, R over their sum) within this of the paper
#: inside (shade keeps roughly paper's tint: a hand's shadow under warm light on the annotated
#: photos moves it by up to 0.051; 0.055 to 0.09 give the same detections).
_TINT_TOLERANCE: Final = 0.07
#: ... and at least this share of the paper's grey level inside (a hand's shadow dims paper to
#: about half; a dark table is far below).
_SHADE_SHARE: Final = 0.4
#: The new side is a step down onto the table: the surface beyond it under this share of the
#: paper just inside it.
_STEP_SHARE: Final = 0.4
#: The paper crossed by a moved side is one surface: its darkest sample at least this share
#: of its brightest (a shade deepening towards the card's edge goes down to 0.84; 0.55 to 0.8
#: give the same detections).
_EVEN: Final = 0.7
#: ... and clearly brighter than the table: at least this many times the median grey level
#: just outside the found cards.
_OVER_TABLE: Final = 1.5
#: The surface beyond a moved side is no brighter than this many times that grey level.
_TABLE_LIKE: Final = 2.0
#: Smallest distance (px) of a moved quad's corners from the frame's edge.
_MARGIN: Final = 8.0
#: Largest area of other detections a moved quad may take in, as a share of its own (edges
#: of neighbouring detections drawn a pixel apart overlap a little).
_OVERLAP: Final = 0.02


def _strip(small: np.ndarray, quads: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(N, 4, K, 3) median colour of 8 points along each side (the middle 60 %) at each of
    ``offsets`` (N, 4, K) px along its outward normal (negative: inside), in one remap."""
    n, k = len(quads), offsets.shape[-1]
    a, _, d, length, normal = side_frames(quads)
    t = np.linspace(0.2, 0.8, 8)
    along = a[:, None, :] + (t[None, :] * length[:, None])[..., None] * d[:, None, :]  # (4n,8,2)
    offs = offsets.reshape(4 * n, k)
    pts = along[:, None, :, :] + offs[:, :, None, None] * normal[:, None, None, :]
    pts = pts.reshape(-1, 8, 2).astype(np.float32)
    vals = cv2.remap(
        small, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.median(vals.astype(np.float64), axis=1).reshape(n, 4, k, 3)


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Area of the intersection of two convex quads (4, 2)."""
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return float(area)


def _chroma(colour: np.ndarray) -> np.ndarray:
    """Chromaticity (B, G, R over their sum) of colours (..., 3)."""
    return colour / np.maximum(colour.sum(axis=-1, keepdims=True), 1.0)


def extend_sides(
    small: np.ndarray, quads: np.ndarray, whole: np.ndarray, floor: float
) -> np.ndarray:
    """Each quad with its sides that stop inside a card moved out to the card's edge.

    A side is moved when the surface just beyond it looks like the card's paper (its tint, at
    least :data:`_SHADE_SHARE` of the paper's grey level and of ``floor``), a step down in grey
    level is found within :data:`_REACH` of the card's extent further out, the paper between
    keeps that look all the way, and beyond the new side lies a darker surface (the table). The
    moved quad must keep a card's corners and overlap no other detection.

    Args:
        small: the working image, BGR uint8.
        quads: (N, 4, 2) clockwise quads of every detection (working pixels): a moved quad
            may not reach into another.
        whole: (N,) bool: the detection is a whole card (only those are moved).
        floor: smallest paper grey level of a card in this scene.

    Returns:
        (N, 4, 2) the quads, moved where that was found.
    """
    quads = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    whole = np.asarray(whole, dtype=bool)
    h, w = small.shape[:2]
    out = quads.copy()
    n = len(quads)
    if n == 0:
        return out
    # Extent across each side: the distance between the midpoints of the other two sides.
    mids = 0.5 * (quads + np.roll(quads, -1, axis=1))  # mids[i]: midpoint of side i
    across = np.linalg.norm(mids - np.roll(mids, 2, axis=1), axis=2)  # (N, 4)
    near = _strip(small, quads, np.broadcast_to(np.array([-3.0, 3.0]), (n, 4, 2)))
    inside, beyond = near[:, :, 0], near[:, :, 1]
    paper_lum = inside.min(axis=2)
    lum = beyond.min(axis=2)
    tint_ok = np.abs(_chroma(beyond) - _chroma(inside)).max(axis=2) < _TINT_TOLERANCE
    candidate = tint_ok & (lum >= _SHADE_SHARE * paper_lum) & (lum >= floor)
    candidate &= whole[:, None]
    # Only on a table darker than the cards: on a white sheet or tray, paper-like surface
    # beyond a side is that surface, not more of the card.
    if not candidate.any():
        return out
    # (The same test as for neighbours' hypotheses.)
    paper_in, table_out = side_levels(small, quads[whole])
    if not on_dark_table(paper_in, table_out):
        return out
    scene_table = float(np.median(table_out))
    rows = np.flatnonzero(candidate.any(axis=1))
    reach = _REACH * across[rows]
    lo = np.where(candidate[rows], 4.0, 0.0)
    hi = np.where(candidate[rows], reach, 0.0)
    moved, found = snap_sides(small, quads[rows], lo, hi, centred=False, darker_out=True)
    found &= candidate[rows]
    # Per side: the distance moved (at the side's middle), then the surface a quarter, half
    # and three quarters of the way out, 3 and 6 px beyond the new side and 3 px inside it.
    normal = side_frames(quads[rows])[4].reshape(-1, 4, 2)
    shift = ((0.5 * (moved + np.roll(moved, -1, axis=1)) - mids[rows]) * normal).sum(axis=2)
    ok = found & (shift > 3.0)
    frac = np.array([0.25, 0.5, 0.75, 1.0, 1.0, 1.0])
    extra = np.array([0.0, 0.0, 0.0, 3.0, 6.0, -3.0])
    probe = _strip(small, quads[rows], shift[..., None] * frac + extra)  # (R, 4, 6, 3)
    between = probe[:, :, :3]
    levels = between.min(axis=3)  # (R, 4, 3)
    paper = inside[rows]
    same = np.abs(_chroma(between) - _chroma(paper)[:, :, None]).max(axis=3) < _TINT_TOLERANCE
    # Shaded or lit paper, clearly brighter than the table around the cards, and one
    # surface all the way (no other edge crossed).
    low = levels.min(axis=2)
    lit = low >= np.maximum(_SHADE_SHARE * paper.min(axis=2), floor)
    lit &= (low >= _EVEN * levels.max(axis=2)) & (low >= _OVER_TABLE * scene_table)
    # Beyond the new side the table: dark 3 and 6 px out (a surface, not a line: a pencilled
    # grid, a tray's rim), and no brighter than the table around the cards (not a solid
    # symbol of a touching card).
    table = probe[:, :, 3:5].min(axis=3).max(axis=2)
    edge_in = probe[:, :, 5].min(axis=2)
    ok &= same.all(axis=2) & lit
    ok &= table < np.minimum(_STEP_SHARE * edge_in, _TABLE_LIKE * scene_table)
    # The other sides keep their line: snap again with the passing sides only.
    again = np.flatnonzero(ok.any(axis=1) & ~ok.all(axis=1))
    if len(again):
        lo2 = np.where(ok[again], 4.0, 0.0)
        hi2 = np.where(ok[again], reach[again], 0.0)
        moved2, found2 = snap_sides(
            small, quads[rows[again]], lo2, hi2, centred=False, darker_out=True
        )
        moved[again] = moved2
        ok[again] &= (found2 == ok[again]).all(axis=1)[:, None]
    for r, q, m, take in zip(rows, quads[rows], moved, ok, strict=True):
        if not take.any():
            continue
        m = clockwise(m)
        # The table beyond each moved side is sampled inside the frame (the frame's edge is
        # no card's edge).
        if (m < _MARGIN).any() or (m > np.array([w, h]) - 1 - _MARGIN).any():
            continue
        if corner_score(m[None])[0] < 0.5 or quad_area(m) > 1.6 * quad_area(q):
            continue
        # The paper taken in may not be another detection's (a card touching this one).
        gained = [_overlap(m, o) - _overlap(q, o) for i, o in enumerate(quads) if i != r]
        if gained and max(gained) > _OVERLAP * quad_area(q):
            continue
        out[r] = m
    return out
