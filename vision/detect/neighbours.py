"""Cards next to found cards: SET is dealt in rows and columns, so a card whose own outline did
not close a region (half in a hand's shadow, washed out by glare, white on a white desk) usually
lies one card's width or height away from a card that was found.

For every found card, hypotheses are placed beside it in the plane of the table (the found
card's homography extrapolated, at a few gaps), their sides snapped to the strongest nearby
edges (:func:`vision.detect.refine.snap_sides`), and kept only when most sides found an edge and
the quad scores as a card on its own: a card's shape, a bright neutral paper border and some
ink inside (:func:`vision.detect.scoring.probe_scores`). A hypothesis that finds one to three
of its sides only (a white card on a white sill shows its shadowed sides) is moved, in the
seed's plane, until its coloured ink is centred (symbols are printed centred), keeps the seed's
size and must find two sides meeting at a corner. New cards seed further hypotheses (a row of
cards found from one end).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import (
    aspect_score,
    clockwise,
    corner_score,
    intersect_sides,
    local_card_area,
    points_in_quads,
    quad_area,
)
from vision.detect.refine import snap_sides
from vision.detect.scoring import ink_centres, ink_offset, probe_scores

__all__ = ["DARK_TABLE", "neighbour_cards", "on_dark_table", "side_levels"]

#: Gaps between neighbouring cards tried, as a fraction of the card's side along the step.
_GAPS: Final = (0.04, 0.2, 0.45)
#: Rounds of seeding (a row of cards can be found from one end).
_ROUNDS: Final = 3
#: Largest difference in chromaticity (B, G, R over their sum) from the found cards' paper
#: (paper in a shadow under warm light shifts by up to ~0.05; light wood by ~0.06 and more).
_TINT_TOLERANCE: Final = 0.06
#: Sides of neighbouring cards run within a few degrees of each other, and so do opposite sides
#: of a card (perspective): a hypothesis within :data:`_SKEW_OK` of its seed replaces a detection
#: beyond :data:`_SKEW_BAD` of it whose own opposite sides are that far from parallel.
_SKEW_OK: Final = 3.0
_SKEW_BAD: Final = 6.0
#: Largest offset of the ink's centre from a card's centre (fraction of its side) for a card
#: placed from three of its edges; symbols are printed centred, a quad shifted half a gap off
#: is beyond it.
_INK_OFFSET: Final = 0.05
#: Smallest median saturation of that ink above the paper's (SET symbols are red, green or
#: purple; thin outlines at working resolution reach ~0.08, stone veins and grain ~0.02).
_INK_COLOUR: Final = 0.05
#: Surface grey level under this share of the cards' paper: a dark table (on it, a card's side
#: is a step down going outwards).
DARK_TABLE: Final = 0.9
_UNIT: Final = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
#: The unit card shifted right, left, down and up by 1 + each gap: (1, 4 x gaps x 4, 2).
_SHIFTED: Final = np.concatenate(
    [
        _UNIT + np.array(shift, np.float32) * (1.0 + gap)
        for gap in _GAPS
        for shift in ((1, 0), (-1, 0), (0, 1), (0, -1))
    ]
)[None]


def _hypotheses(seeds: np.ndarray) -> np.ndarray:
    """(M, 4, 2) quads beside each clockwise seed quad: left, right, above and below it in
    the seed's own frame, at each gap of :data:`_GAPS`."""
    out = [
        cv2.perspectiveTransform(
            _SHIFTED, cv2.getPerspectiveTransform(_UNIT, quad.astype(np.float32))
        ).reshape(-1, 4, 2)
        for quad in seeds
    ]
    return np.concatenate(out).astype(np.float64) if out else np.zeros((0, 4, 2))


def _ink_placed(
    small: np.ndarray, hyp: np.ndarray, seeds: np.ndarray, short: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Hypotheses whose own edges are too faint, placed by their ink instead.

    Each is shifted in its seed's plane until the ink inside it is centred (SET symbols are
    printed centred on the card), keeps the seed's size there, and must then find two sides
    meeting at a corner (a white card on a white desk keeps its shadowed sides) within 12 % of
    its short side; its far sides may still move out (a card seen larger than its seed).

    Returns:
        (K, 4, 2) placed quads and (K,) indices into ``hyp`` of the ones kept.
    """
    if len(hyp) == 0:
        return np.zeros((0, 4, 2)), np.zeros(0, dtype=int)
    placed, index = _centre_on_ink(small, hyp, seeds)
    if len(placed) == 0:
        return np.zeros((0, 4, 2)), index
    short = short[index]
    placed, ok = snap_sides(small, placed, -0.12 * short, 0.12 * short, centred=True)
    corner = np.flatnonzero(_two_adjacent(ok))
    if len(corner) == 0:
        return np.zeros((0, 4, 2)), corner
    placed, short = placed[corner], short[corner]
    placed, _ = snap_sides(small, placed, -0.08 * short, 0.25 * short, centred=True)
    return placed, index[corner]


def _parallel_missing(quads: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """(N, 4, 2) quads whose one side not found (``ok``: (N, 4) bool, three True per row) is
    turned parallel to its opposite side about its own midpoint."""
    point = 0.5 * (quads + np.roll(quads, -1, axis=1))  # side midpoints
    direction = np.roll(quads, -1, axis=1) - quads
    rows = np.arange(len(quads))
    missing = np.argmin(ok, axis=1)
    direction[rows, missing] = -direction[rows, (missing + 2) % 4]
    corners = intersect_sides(point, direction)
    finite = np.isfinite(corners).all(axis=(1, 2))
    return np.where(finite[:, None, None], corners, quads)


def _two_adjacent(ok: np.ndarray) -> np.ndarray:
    """(N,) bool: two neighbouring sides (a corner) of each quad found their edge."""
    return (ok & np.roll(ok, -1, axis=1)).any(axis=1)


def _centre_on_ink(
    small: np.ndarray, hyp: np.ndarray, seeds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Hypotheses shifted, in their seed's plane, until the ink inside them is centred (SET
    symbols are printed centred on the card): (K, 4, 2) quads and (K,) indices into ``hyp``
    (hypotheses without ink, or landing on one kept already, are dropped)."""
    quads = hyp.astype(np.float64).copy()
    to_unit = [cv2.getPerspectiveTransform(s.astype(np.float32), _UNIT) for s in seeds]
    from_unit = [np.linalg.inv(h) for h in to_unit]  # once per seed, not per move
    index = np.arange(len(hyp))
    for step in range(6):
        centres, has = ink_centres(small, quads)
        if step and np.abs(centres[has] - quads[has].mean(axis=1)).max(initial=0.0) < 0.5:
            break  # centred (ink cut by a side moves the box part of the way per step)
        for i in np.flatnonzero(has):
            j = index[i]
            pts = np.array([[centres[i], quads[i].mean(axis=0)]], np.float32)
            u = cv2.perspectiveTransform(pts, to_unit[j])[0]
            shifted = cv2.perspectiveTransform(quads[i][None].astype(np.float32), to_unit[j])[0]
            shifted += u[0] - u[1]
            quads[i] = cv2.perspectiveTransform(shifted[None], from_unit[j])[0]
        if step == 0:
            # Hypotheses at several gaps converge on the same card: keep one of each.
            keep = []
            mids = quads.mean(axis=1)
            size = 0.1 * np.sqrt(quad_area(quads))
            for i in np.flatnonzero(has):
                if all(np.linalg.norm(mids[i] - mids[k]) > size[i] for k in keep):
                    keep.append(i)
            quads, index = quads[keep], index[keep]
            if len(quads) == 0:
                break
    return quads, index


def _tint(small: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) chromaticity (B, G, R over their sum) of the paper just inside each quad's sides
    (median colour of 32 points at 0.9 x the way from the centre), and (N,) its darkest
    channel."""
    if len(quads) == 0:
        return np.zeros((0, 3)), np.zeros(0)
    centres = quads.mean(axis=1, keepdims=True)
    t = np.linspace(0.1, 0.9, 8)
    a, b = quads, np.roll(quads, -1, axis=1)
    edge = (a[:, :, None, :] + t[None, None, :, None] * (b - a)[:, :, None, :]).reshape(
        len(quads), -1, 2
    )
    pts = (centres + 0.9 * (edge - centres)).astype(np.float32)
    vals = cv2.remap(small, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR).astype(np.float64)
    colour = np.median(vals, axis=1)
    return colour / np.maximum(colour.sum(axis=1, keepdims=True), 1.0), colour.min(axis=1)


def side_levels(small: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 4) grey levels (darkest channel, median of 8 points) of the paper just inside each
    side of each quad and of the surface just outside it."""
    centres = quads.mean(axis=1, keepdims=True)[:, :, None, :]  # (N, 1, 1, 2)
    t = np.linspace(0.15, 0.85, 8)
    a, b = quads, np.roll(quads, -1, axis=1)
    edge = a[:, :, None, :] + t[None, None, :, None] * (b - a)[:, :, None, :]  # (N, 4, 8, 2)
    pts = np.stack([centres + 0.9 * (edge - centres), centres + 1.06 * (edge - centres)], axis=1)
    flat = pts.reshape(-1, 8, 2).astype(np.float32)
    vals = cv2.remap(small, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR)
    lum = vals.min(axis=2).astype(np.float64).reshape(len(quads), 2, 4, 8)
    return np.median(lum[:, 0], axis=2), np.median(lum[:, 1], axis=2)


def _brighter_sides(small: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N,) how many sides of each quad have the paper just inside at least about as bright
    as the surface just outside."""
    if len(quads) == 0:
        return np.zeros(0, dtype=int)
    inner, outer = side_levels(small, quads)
    return (inner >= 0.95 * outer).sum(axis=1)


def _dark_table(small: np.ndarray, seeds: np.ndarray) -> bool:
    """:func:`on_dark_table` of the found cards ``seeds`` (N, 4, 2)."""
    return on_dark_table(*side_levels(small, seeds))


def on_dark_table(inner: np.ndarray, outer: np.ndarray) -> bool:
    """The cards lie on a surface clearly darker than their paper: given their
    :func:`side_levels` (N, 4) inside and outside, the surface just outside at least three
    sides of most of them is under :data:`DARK_TABLE` of the paper's grey level."""
    return bool(np.median((outer < DARK_TABLE * inner).sum(axis=1)) >= 3)


def _within(quads: np.ndarray, w: int, h: int, margin: float) -> np.ndarray:
    """(N,) bool: every corner lies at least ``margin`` px inside the w x h image."""
    x, y = quads[..., 0], quads[..., 1]
    inside = (x >= margin) & (x <= w - 1 - margin) & (y >= margin) & (y <= h - 1 - margin)
    return inside.all(axis=1)


def neighbour_cards(
    small: np.ndarray,
    seeds: np.ndarray,
    others: np.ndarray,
    focal: float,
    centre: np.ndarray,
    min_score: float,
    floor: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cards beside the found cards that the region search missed.

    Args:
        small: the working image, BGR uint8.
        seeds: (N, 4, 2) clockwise quads of found whole cards (working pixels).
        others: (M, 4, 2) clockwise quads of everything already reported (seeds included): a
            new card may not overlap any of them.
        focal: assumed focal length in working pixels (for the aspect ratio).
        centre: principal point (x, y) in working pixels.
        min_score: smallest score of a card.
        floor: smallest paper grey level (darkest channel) of a card in this scene.

    Returns:
        (K, 4, 2) float64 clockwise quads of new cards, (K,) their scores, and the indices
        into ``others`` of the detections they replace (nested in a new card and not of a
        card's size: the box around a card's symbols, a frame around a card).
    """
    h, w = small.shape[:2]
    found: list[np.ndarray] = []
    found_scores: list[float] = []
    taken = np.asarray(others, dtype=np.float64).reshape(-1, 4, 2)
    seeds = np.asarray(seeds, dtype=np.float64).reshape(-1, 4, 2)
    if len(seeds) == 0:
        return np.zeros((0, 4, 2)), np.zeros(0), np.zeros(0, dtype=int)
    seed_tints, seed_levels = _tint(small, seeds)
    tint, seed_level = np.median(seed_tints, axis=0), float(np.median(seed_levels))
    # A detection far from the size of a hypothesis (the box around a card's symbols, a tray
    # cell around a card) does not block it; a hypothesis nested with it replaces it.
    replaced: list[int] = []
    # On a table darker than the cards, a card's side is a step down going outwards: the near
    # edge of the gap to a neighbour, not its far edge (the stronger one beside a card in a
    # shadow).
    dark_table = _dark_table(small, seeds)
    first_seeds = seeds.copy()
    for _ in range(_ROUNDS):
        if len(seeds) == 0:
            break
        hyp = _hypotheses(seeds)
        ref_area = np.repeat(quad_area(seeds), 4 * len(_GAPS))
        origin = np.repeat(np.arange(len(seeds)), 4 * len(_GAPS))
        # Inside the frame, not on a card already found.
        inside = _within(hyp, w, h, 2.0)
        block = points_in_quads(hyp.mean(axis=1), taken) & _similar(
            quad_area(taken), quad_area(hyp)
        )
        free = ~block.any(axis=0)
        # ... unless the one detection there is skewed against the seed (see below).
        bent = _opposite_skew(taken) > _SKEW_BAD
        bent[len(others) :] = False
        skews: dict[tuple[int, int], float] = {}
        for hi in np.flatnonzero((block.sum(axis=0) == 1) & (block & bent[:, None]).any(axis=0)):
            j, si = int(np.flatnonzero(block[:, hi])[0]), int(origin[hi])
            if (j, si) not in skews:
                skews[(j, si)] = _skew(taken[j], seeds[si])
            free[hi] = skews[(j, si)] > _SKEW_BAD
        keep = inside & free
        # Cheap first look before the edge search: some paper of the cards' tint there.
        look, level = _tint(small, hyp)
        keep &= (np.abs(look - tint).max(axis=1) < _TINT_TOLERANCE) & (level >= floor)
        hyp, ref_area, origin, level = hyp[keep], ref_area[keep], origin[keep], level[keep]
        if len(hyp) == 0:
            break
        short = np.minimum(
            np.linalg.norm(hyp[:, 1] - hyp[:, 0], axis=1),
            np.linalg.norm(hyp[:, 2] - hyp[:, 1], axis=1),
        )
        reach = np.maximum(0.15 * short, 3.0)
        moved, ok1 = snap_sides(small, hyp, -reach, reach, centred=True, darker_out=dark_table)
        # A hypothesis extrapolated from a seed whose outline is a little skewed (one side on
        # a shadow's edge) is tilted: its far side may miss the edge's slope. A card's
        # opposite sides run near parallel: with three sides found, the fourth is searched
        # again parallel to its opposite.
        three = np.flatnonzero(ok1.sum(axis=1) == 3)
        if len(three):
            again, ok_again = snap_sides(
                small, _parallel_missing(moved[three], ok1[three]), -reach[three], reach[three],
                centred=True, darker_out=dark_table,
            )  # fmt: skip
            fixed = ok_again.all(axis=1)
            moved[three[fixed]], ok1[three[fixed]] = again[fixed], True
        edged = ok1.all(axis=1)  # every side must find its edge in both passes
        # A white card on a white surface may show two sides only (the lit ones vanish), and
        # a hypothesis a gap off may reach one of them: such hypotheses are placed by the ink
        # inside them (see _ink_placed).
        # Only where the surface there is as bright as the found cards' paper (cheap: most
        # tables are darker, and their hypotheses stop here).
        bright_there = level >= 0.85 * seed_level
        loose = np.flatnonzero(~edged & (ok1.sum(axis=1) >= 1) & bright_there)
        placed, kept_loose = _ink_placed(small, hyp[loose], seeds[origin[loose]], short[loose])
        loose = loose[kept_loose]
        loose_origin, loose_area = origin[loose], ref_area[loose]
        moved, reach, ref_area, origin = moved[edged], reach[edged], ref_area[edged], origin[edged]
        if len(moved):
            moved, ok2 = snap_sides(small, moved, -reach / 3, reach / 3, centred=True)
            moved = np.array([clockwise(q) for q in moved]).reshape(-1, 4, 2)
            area = quad_area(moved)
            good = ok2.all(axis=1) & (area > 0.7 * ref_area) & (area < 1.4 * ref_area)
            good &= _within(moved, w, h, 1.0)
            moved, origin = moved[good], origin[good]
        n_strict = len(moved)
        placed_ok = _within(placed, w, h, 1.0)
        placed_area = quad_area(placed)
        placed_ok &= (placed_area > 0.7 * loose_area) & (placed_area < 1.4 * loose_area)
        moved = np.concatenate([moved, placed[placed_ok]])
        origin = np.concatenate([origin, loose_origin[placed_ok]])
        if len(moved) == 0:
            break
        shape = aspect_score(moved, focal, centre) * corner_score(moved)
        scores = np.zeros(len(moved))
        fine = shape >= min_score
        # The paper has the found cards' tint (a shadow dims it, but light wood, cloth or a
        # tray is another colour).
        fine &= np.abs(_tint(small, moved)[0] - tint).max(axis=1) < _TINT_TOLERANCE
        # Paper is the brightest surface around: a quad between two cards (or reaching from a
        # card onto the table) has a card outside some of its sides.
        fine &= _brighter_sides(small, moved) >= 3
        # A quad placed by its ink (two sides seen): the ink (the symbols, printed centred)
        # must lie at the centre, be coloured, on paper about as bright as the found cards';
        # it scores a little lower than one with four edges.
        weak = np.arange(len(moved)) >= n_strict
        if (fine & weak).any():
            offset, colour = ink_offset(small, moved[weak & fine])
            _, bright = _tint(small, moved[weak & fine])
            fine[weak & fine] &= (
                (offset < _INK_OFFSET) & (colour > _INK_COLOUR) & (bright >= 0.85 * seed_level)
            )
        if fine.any():
            paper, content, _, level = probe_scores(small, moved[fine], focal=focal, centre=centre)
            scores[fine] = 0.9 * shape[fine] * paper * content * (level >= floor)
            scores[fine & weak] *= 0.9
        new = []
        for i in np.argsort(-scores, kind="stable"):
            if scores[i] < min_score:
                break
            quad = moved[i]
            clash = _clashes(quad, taken)
            alike = clash & _similar(quad_area(taken), quad_area(quad[None]))[:, 0]
            if alike.any():
                # A detection of a card's size here whose sides are skewed against the
                # neighbour (one side on a shadow edge or a crease) while this hypothesis runs
                # parallel to it: the hypothesis is the card.
                j = int(np.flatnonzero(alike)[0])
                seed = seeds[origin[i]]
                if not (
                    alike.sum() == 1
                    and j < len(others)
                    and scores[i] >= 0.8
                    and _skew(quad, seed) < _SKEW_OK
                    and _skew(taken[j], seed) > _SKEW_BAD
                    and _opposite_skew(taken[j]) > _opposite_skew(quad) + _SKEW_BAD - _SKEW_OK
                ):
                    continue
            hits = np.flatnonzero(clash)
            if len(hits) and (
                scores[i] < 0.8 or not all(_nested(quad, taken[j]) or alike[j] for j in hits)
            ):
                continue
            # Of two nested quads, the one nearer the neighbouring card's size is the card: a
            # hypothesis replaces the box round a card's symbols, but not a card inside the
            # tray cell it snapped to (koff at JPEG quality 50: 5 cards lost to their cells).
            # The card's size there comes from the first seeds (the cards found by their
            # outlines), fitted over the table for perspective; a seed found here may be a cell.
            nested = [j for j in hits if not alike[j]]
            if nested:
                ref = local_card_area(quad[None], first_seeds)[0]
                ref = ref if ref > 0 else quad_area(seeds[origin[i]][None])[0]
                size = _size_gap(quad_area(quad[None])[0], ref)
                if any(_size_gap(quad_area(taken[j][None])[0], ref) <= size for j in nested):
                    continue
            replaced += [int(j) for j in hits]
            for j in hits[hits >= len(others)]:
                found_scores[j - len(others)] = -1.0  # a new card replaced by a better one
            taken[hits] = -1e6 + np.arange(8).reshape(4, 2)  # out of the way
            new.append(quad)
            found.append(quad)
            found_scores.append(float(scores[i]))
            taken = np.concatenate([taken, quad[None]])
        seeds = np.array(new).reshape(-1, 4, 2)
    replaced_arr = np.array(sorted(j for j in set(replaced) if j < len(others)), dtype=int)
    live = np.array(found_scores) >= 0
    return (
        np.array(found, dtype=np.float64).reshape(-1, 4, 2)[live],
        np.array(found_scores)[live],
        replaced_arr,
    )


def _skew(quad: np.ndarray, ref: np.ndarray) -> float:
    """Largest angle (degrees) between a side of ``quad`` and the matching side of ``ref``
    (both clockwise; sides matched by the cyclic shift that best aligns their directions)."""

    def directions(q: np.ndarray) -> np.ndarray:
        d = np.roll(q, -1, axis=0) - q
        return d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)

    a, b = directions(quad), directions(ref)
    best = 180.0
    for shift in range(4):
        cos = np.clip((a * np.roll(b, shift, axis=0)).sum(axis=1), -1.0, 1.0)
        best = min(best, float(np.degrees(np.arccos(cos)).max()))
    return best


def _opposite_skew(quads: np.ndarray) -> np.ndarray:
    """Largest angle (degrees) between opposite sides of each quad (..., 4, 2): small for a
    card, even in perspective; large for a quad with one side on a shadow edge or a crease."""
    d = np.roll(quads, -1, axis=-2) - quads
    d = d / np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-9)
    cos = np.clip(-(d[..., :2, :] * d[..., 2:, :]).sum(axis=-1), -1.0, 1.0)
    return np.degrees(np.arccos(cos)).max(axis=-1)


def _similar(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) bool: the areas are within a factor 1.6 (neighbouring cards seen in
    perspective differ by less)."""
    ratio = a[:, None] / np.maximum(b[None, :], 1e-9)
    return (ratio > 1 / 1.6) & (ratio < 1.6)


def _size_gap(area: float, ref: float) -> float:
    """How far an area is from a reference area, as the absolute log of their ratio."""
    return abs(float(np.log(max(area, 1e-9) / max(ref, 1e-9))))


def _clashes(quad: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """(M,) bool: ``quad`` overlaps each of the ``taken`` quads (a corner of either, moved 10 %
    towards its centre, lies inside the other)."""
    if len(taken) == 0:
        return np.zeros(0, dtype=bool)
    shrunk = quad.mean(axis=0) + 0.9 * (quad - quad.mean(axis=0))
    inner = taken.mean(axis=1, keepdims=True) + 0.9 * (taken - taken.mean(axis=1, keepdims=True))
    ours_in = points_in_quads(shrunk, taken).any(axis=1)
    theirs_in = points_in_quads(inner.reshape(-1, 2), shrunk[None])[0].reshape(-1, 4).any(axis=1)
    return ours_in | theirs_in


def _nested(a: np.ndarray, b: np.ndarray) -> bool:
    """One clockwise quad lies inside the other (enlarged by 8 % about its centre)."""

    def grow(q: np.ndarray) -> np.ndarray:
        return q.mean(axis=0) + 1.08 * (q - q.mean(axis=0))

    return bool(points_in_quads(b, grow(a)[None]).all() or points_in_quads(a, grow(b)[None]).all())
