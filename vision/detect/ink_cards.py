"""Cards found from their symbols: white cards on a white surface.

Where the card's paper is as bright as the surface around it (a white desk, sill or wall), no
region outline closes around the card; its printed symbols still stand out. SET symbols are
printed centred on the card, 1 to 3 of them stacked along the card's long side, each about 0.68
of the card's width wide and twice as wide as high, at a pitch of about 0.3 of the card's height
(measured on the rendered deck editions of :mod:`vision.render_card`, 0.62-0.73 of the width;
on the white-on-white omega697 photos, 0.68-0.72). So each group of 1-3 aligned symbols of one
size proposes a card around it, in the symbols' own orientation; its sides are then searched as
faint straight lines (:func:`vision.detect.lines.snap_lines`) and the result must score as a card
(shape, a bright neutral paper border, centred coloured ink, paper at least as bright as the
surface just outside most of its sides).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import (
    LONG_OVER_SHORT,
    aspect_score,
    clockwise,
    corner_score,
    intersect_sides,
    points_in_quads,
    quad_area,
)
from vision.detect.lines import snap_lines
from vision.detect.scoring import ink_centres, ink_offset, probe_scores, white_surround

__all__ = ["find_symbols", "group_symbols", "ink_cards"]

#: Symbol width over card width (the short side), see the module docstring.
_SYMBOL_OVER_WIDTH: Final = 0.68
#: Centre-to-centre distance of stacked symbols over the symbol's width (0.30 of the card's
#: height; card height = 1.56 x width; symbol = 0.68 x width, so 0.69), with tolerance for
#: foreshortening (0.50 measured on the far row of omega697 ``cards_13_wide_shot``).
_PITCH: Final = (0.35, 0.95)
#: Symbols (closed ink blobs) considered: long/short side ratio of their rotated box.
_SYMBOL_ASPECT: Final = (1.5, 3.4)
#: Height over width of a first guess: between a card seen head-on (1.56) and one foreshortened
#: on a table seen at a slant; the long sides are searched further than the short ones.
_HEIGHT_GUESS: Final = 1.4
#: Tilts of the sides searched (see :func:`vision.detect.lines.snap_lines`): up to about 17
#: degrees off square to the symbols, as a card's long sides lean in a slanted view.
_TILTS: Final = np.linspace(-0.3, 0.3, 21)
#: The unit square (corners clockwise from the origin).
_UNIT_SQUARE: Final = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
#: Largest ink offset of a card found from its symbols that is re-fitted about its ink
#: (:func:`_recentre`).
_RECENTRE_OFFSET: Final = 0.15
#: At most this many groups are tried (the largest symbols first).
_MAX_GROUPS: Final = 30


def find_symbols(small: np.ndarray, min_len: float, taken: np.ndarray) -> list[tuple]:
    """Symbol-like ink blobs outside the ``taken`` quads.

    Args:
        small: (H, W, 3) uint8 BGR image.
        min_len: smallest blob extent (px) looked at.
        taken: (M, 4, 2) quads whose blobs are skipped (the symbols of cards found already).

    Returns:
        One tuple per blob whose rotated box is 1.5 to 3.4 times as long as wide: centre (2,)
        float64 (x, y) px, long side px, unit long axis (2,) float64, short side px.

    Ink is a coloured pixel (saturation above 0.22, not black) or a thin dark stroke with a
    little colour (a black-hat response over 14 levels): outlines of open symbols."""
    blue, green, red = cv2.split(small)
    top = cv2.max(cv2.max(blue, green), red)
    lum = cv2.min(cv2.min(blue, green), red)
    spread = cv2.subtract(top, lum).astype(np.int16) * 100  # saturation x top x 100
    top16 = top.astype(np.int16)
    strokes = cv2.morphologyEx(lum, cv2.MORPH_BLACKHAT, np.ones((7, 7), np.uint8))
    ink = ((spread > 22 * top16) & (top > 50)) | ((strokes > 14) & (spread > 8 * top16))
    closed = cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(closed, connectivity=8)
    out: list[tuple] = []
    sized = (stats[:, cv2.CC_STAT_AREA] >= 12) & (
        np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]) >= min_len
    )
    if len(taken):
        sized &= ~points_in_quads(centroids, taken).any(axis=0)  # symbols of found cards
    big = np.flatnonzero(sized)
    for i in big[big > 0][:400]:
        x, y, w, h = stats[i, :4]
        ys, xs = np.nonzero(labels[y : y + h, x : x + w] == i)
        pts = np.stack([xs, ys], axis=1).astype(np.float64)
        mid = pts.mean(axis=0)
        # The principal axis (a diamond's long diagonal; a minimum-area box would follow a
        # diamond's sides instead).
        cov = np.cov((pts - mid).T)
        evals, evecs = np.linalg.eigh(cov)
        axis = evecs[:, 1]
        along = (pts - mid) @ axis
        across = (pts - mid) @ evecs[:, 0]
        long_side = float(along.max() - along.min() + 1.0)
        short_side = float(across.max() - across.min() + 1.0)
        if short_side < 2 or not _SYMBOL_ASPECT[0] <= long_side / short_side <= _SYMBOL_ASPECT[1]:
            continue
        centre = mid + 0.5 * (along.max() + along.min()) * axis
        centre += 0.5 * (across.max() + across.min()) * evecs[:, 0]
        out.append((centre + np.array([x, y], dtype=np.float64), long_side, axis, short_side))
    return out


def group_symbols(symbols: list) -> list[list[int]]:
    """Symbols grouped into cards: same size, parallel, stacked across their long axis at the
    printed pitch (chains of at most 3; a symbol with no partner is a group of its own)."""
    n = len(symbols)
    link = np.zeros((n, n), dtype=bool)
    for i in range(n):
        ci, li, ai, _ = symbols[i]
        for j in range(i + 1, n):
            cj, lj, aj, _ = symbols[j]
            if not 0.75 <= li / lj <= 1.33 or abs(float(ai @ aj)) < np.cos(np.radians(20)):
                continue
            step = cj - ci
            along = abs(float(step @ ai))
            across = abs(float(step[0] * ai[1] - step[1] * ai[0]))
            size = 0.5 * (li + lj)
            if along < 0.3 * size and _PITCH[0] * size <= across <= _PITCH[1] * size:
                link[i, j] = link[j, i] = True
    groups, seen = [], np.zeros(n, dtype=bool)
    for i in range(n):
        if seen[i]:
            continue
        stack, members = [i], []
        while stack:
            k = stack.pop()
            if seen[k]:
                continue
            seen[k] = True
            members.append(k)
            stack += [int(j) for j in np.flatnonzero(link[k]) if not seen[j]]
        if len(members) <= 3:
            groups.append(members)
    return groups


def _rect(mid: np.ndarray, half_w: np.ndarray, half_h: np.ndarray) -> np.ndarray:
    """(4, 2) clockwise quad centred at ``mid`` with half-side vectors ``half_w`` (side 0 runs
    along it) and ``half_h``."""
    return clockwise(
        np.array([mid - half_w - half_h, mid + half_w - half_h, mid + half_w + half_h,
                  mid - half_w + half_h])
    )  # fmt: skip


def _sides_from(a: np.ndarray, b: np.ndarray, from_a: np.ndarray) -> np.ndarray:
    """(N, 4, 2) quads whose side i is the line of side i of ``a`` where ``from_a[i]``, else
    of ``b`` (side i runs from corner i to corner i + 1)."""
    point_a, point_b = 0.5 * (a + np.roll(a, -1, axis=1)), 0.5 * (b + np.roll(b, -1, axis=1))
    dir_a, dir_b = np.roll(a, -1, axis=1) - a, np.roll(b, -1, axis=1) - b
    pick = from_a[None, :, None]
    corners = intersect_sides(np.where(pick, point_a, point_b), np.where(pick, dir_a, dir_b))
    finite = np.isfinite(corners).all(axis=(1, 2))
    return np.where(finite[:, None, None], corners, b)


def _mirror_missing(quads: np.ndarray, ok: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Quads with exactly one side not found get it as the mirror image, through the centre
    of their symbols, of the opposite side (symbols are printed centred)."""
    out = quads.copy()
    one = np.flatnonzero(ok.sum(axis=1) == 3)
    if len(one) == 0:
        return out
    q = quads[one]
    point = 0.5 * (q + np.roll(q, -1, axis=1))  # (K, 4, 2) side midpoints
    direction = np.roll(q, -1, axis=1) - q
    missing = np.argmin(ok[one], axis=1)
    rows = np.arange(len(one))
    opposite = (missing + 2) % 4
    point[rows, missing] = 2.0 * centres[one] - point[rows, opposite]
    direction[rows, missing] = -direction[rows, opposite]
    corners = intersect_sides(point, direction)
    finite = np.isfinite(corners).all(axis=(1, 2))
    out[one[finite]] = corners[finite]
    return out


def _crowded(quads: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """(N,) bool: a symbol-like blob lies just outside the quad, nearer than a neighbouring
    card's symbols can be (words on a printed page crowd round; cards lie a gap apart).

    In each quad's own frame (perspective undone, the card 1 x 1), a neighbouring card's
    symbols lie over 1 from the card's middle across it (a card's width and a gap) and over
    0.74 along it (a card's height and a gap, less 0.3 for its outer symbol); a blob within
    0.9 across and 0.65 along, outside the card, crowds it.

    Args:
        quads: (N, 4, 2) clockwise card quads.
        marks: (M, 2) centres of the symbol-like blobs (the card's own among them).
    """
    out = np.zeros(len(quads), dtype=bool)
    if len(marks) == 0:
        return out
    for i, quad in enumerate(quads):
        to_unit = cv2.getPerspectiveTransform(quad.astype(np.float32), _UNIT_SQUARE)
        u, v = (cv2.perspectiveTransform(marks[None].astype(np.float32), to_unit)[0] - 0.5).T
        if np.linalg.norm(quad[1] - quad[0]) > np.linalg.norm(quad[2] - quad[1]):
            u, v = v, u  # u across the card (its short side), v along it
        outside = (np.abs(u) > 0.5) | (np.abs(v) > 0.5)
        out[i] = bool((outside & (np.abs(u) < 0.9) & (np.abs(v) < 0.65)).any())
    return out


def _recentre(
    small: np.ndarray,
    grey: np.ndarray,
    quads: np.ndarray,
    offset: np.ndarray,
    colour: np.ndarray,
    focal: float,
    centre: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Quads whose coloured ink sits a little off centre (offset 0.05 to
    :data:`_RECENTRE_OFFSET`: one side snapped to a neighbouring card's edge beyond its own,
    cards a narrow gap apart) with that side replaced by the mirror image of the opposite one
    through the ink's centre and refined, where it moves in, the ink is then centred and the
    card's shape is no worse (``focal``, ``centre``: see :func:`aspect_score`); the others
    unchanged (of several such sides, the one moving in furthest). Returns the quads and their
    offsets."""
    fix = np.flatnonzero((offset >= 0.05) & (offset < _RECENTRE_OFFSET) & (colour > 0.05))
    if len(fix) == 0:
        return quads, offset
    quads, offset = quads.copy(), offset.copy()
    mids, _ = ink_centres(small, quads[fix])
    # Each side of each quad in turn: three sides kept, the fourth mirrored (4 per quad).
    trials = np.repeat(quads[fix], 4, axis=0)
    drop = np.tile(np.eye(4, dtype=bool), (len(fix), 1))
    mirrored = _mirror_missing(trials, ~drop, np.repeat(mids, 4, axis=0))
    width = np.linalg.norm(np.roll(trials, -1, axis=1) - trials, axis=2).min(axis=1)
    snapped, ok = snap_lines(grey, mirrored, np.maximum(0.05 * width, 6.0))
    snapped = np.array([clockwise(q) for q in snapped]).reshape(-1, 4, 2)
    new_offset, new_colour = ink_offset(small, snapped)
    # The side was too far out: mirrored, it moves in (the card shrinks). Its own line need
    # not show (an overexposed desk): the ink centred and the other sides refined place it.
    area = quad_area(snapped)
    good = area < quad_area(trials)
    good &= (new_offset < 0.05) & (new_colour > 0.05)
    # (A side cut short inside the card would centre the ink too, with the opposite side
    # mirrored in: the card then gets too narrow.)
    good &= aspect_score(snapped, focal, centre) >= aspect_score(trials, focal, centre)
    for k, i in enumerate(fix):
        options = np.flatnonzero(good[4 * k : 4 * k + 4])
        if len(options):
            best = 4 * k + options[np.argmin(area[4 * k + options])]
            quads[i], offset[i] = snapped[best], new_offset[best]
    return quads, offset


def ink_cards(
    small: np.ndarray,
    taken: np.ndarray,
    focal: float,
    centre: np.ndarray,
    min_score: float,
    min_card_area: float,
    unplaced: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cards on a surface as bright as their paper, found from their symbols.

    Args:
        small: BGR uint8 working image.
        taken: (M, 4, 2) clockwise quads already reported: a symbol inside one is skipped.
        focal, centre: assumed focal length and principal point (working px), for the shape.
        min_score: smallest score of a card.
        min_card_area: smallest card area in working px.
        unplaced: if given, the centres (2,) of the symbol groups on a bright surface that no
            card returned covers are appended to it (a card there showed too few sides).

    Returns:
        (K, 4, 2) float64 clockwise quads and (K,) scores in [0, 1].
    """
    h, w = small.shape[:2]
    empty = np.zeros((0, 4, 2)), np.zeros(0)
    min_len = _SYMBOL_OVER_WIDTH * np.sqrt(min_card_area / LONG_OVER_SHORT)
    symbols = find_symbols(small, 0.8 * min_len, taken)
    if symbols and taken is not None and len(taken):
        # Cards found already give the table's scale: a symbol is about 0.68 of a card's
        # short side (x 0.6 to 1.6 for perspective and deck editions); ink of another size
        # (print on a tray, a logo) is not a card's.
        sides = np.linalg.norm(np.roll(taken, -1, axis=1) - taken, axis=2)
        expected = _SYMBOL_OVER_WIDTH * float(np.median(sides.min(axis=1)))
        symbols = [s for s in symbols if 0.6 * expected <= s[1] <= 1.6 * expected]
    if not symbols:
        return empty
    groups = sorted(group_symbols(symbols), key=lambda g: -symbols[g[0]][1])[:_MAX_GROUPS]
    if not groups:  # every symbol in a chain of more than three: no card's group
        return empty
    hyps, widths, spans, guesses = [], [], [], []
    for group in groups:
        mid = np.mean([symbols[k][0] for k in group], axis=0)
        length = float(np.mean([symbols[k][1] for k in group]))
        axis = symbols[group[0]][2]
        across = np.array([-axis[1], axis[0]])
        # The box around the symbols, in their own frame.
        offsets = [float((symbols[k][0] - mid) @ across) for k in group]
        thick = float(np.mean([symbols[k][3] for k in group]))
        half_h = 0.5 * (max(offsets) - min(offsets) + thick) * across
        half_w = 0.5 * length * axis
        hyps.append(_rect(mid, half_w, half_h))
        half = 0.5 * length / _SYMBOL_OVER_WIDTH  # half the card's width
        guesses.append(_rect(mid, half * axis, _HEIGHT_GUESS * half * across))
        widths.append(length / _SYMBOL_OVER_WIDTH)
        spans.append(2.0 * float(np.linalg.norm(half_h)))
    boxes = np.array(hyps, dtype=np.float64)
    width, span = np.array(widths), np.array(spans)
    # Only where the surface around a card-sized box about the symbols is as bright as paper,
    # and off the cards found already (a card does not lie on another).
    guess = np.array(guesses, dtype=np.float64)
    bright = white_surround(small, guess)
    if taken is not None and len(taken):
        shrunk = guess.mean(axis=1, keepdims=True) + 0.8 * (
            guess - guess.mean(axis=1, keepdims=True)
        )
        bright &= ~points_in_quads(taken.mean(axis=1), shrunk).any(axis=1)
        bright &= ~points_in_quads(shrunk.reshape(-1, 2), taken).any(axis=0).reshape(-1, 4).any(
            axis=1
        )
    boxes, width, span = boxes[bright], width[bright], span[bright]
    if unplaced is not None:
        unplaced += list(boxes.mean(axis=1))
    if len(boxes) == 0:
        return empty
    grey = cv2.min(cv2.min(small[..., 0], small[..., 1]), small[..., 2])
    # The card around them: sides 1 and 3 run across the symbols (clockwise() keeps that), 0.16
    # of the card's width beyond their tips; sides 0 and 2 lie up to half a card's height
    # (1.56 widths, less when foreshortened) from the middle. Each is the first line met going
    # outwards (the paper between symbols and edge is blank).
    start = np.stack([0.06 * width, 0.08 * width] * 2, axis=1)
    reach = np.stack([0.85 * width - 0.5 * span, 0.3 * width] * 2, axis=1)
    # Short sides first (square to the symbols, give or take a few degrees), then the long
    # sides from the symbols' tips: those lean in a slanted view, so any tilt up to 17 degrees.
    short_sides = np.array([True, False, True, False])
    ends, ok_ends = snap_lines(grey, boxes, reach, outward=start, sides=short_sides, min_step=1.2)
    framed = _sides_from(ends, boxes, short_sides)
    quads, ok = snap_lines(
        grey,
        framed,
        reach,
        outward=start,
        first=False,
        tilts=_TILTS,
        sides=~short_sides,
        min_step=1.2,
    )
    quads = _sides_from(quads, framed, ~short_sides)
    ok[:, [0, 2]] = ok_ends[:, [0, 2]]
    quads = _mirror_missing(quads, ok, boxes.mean(axis=1))
    # Then the sides found are refined (a short symmetric search); the card must have found
    # three sides at least, the fourth taken from its shape. A short side found outwards from
    # the symbols (square to them, the first line met) counts as found even where the
    # refinement, at its finer profile steps, no longer resolves it: a far card's far side
    # lying in the surface's shading (a ramp toward a window sill's frame) is a change of slope
    # there, not a step. Long sides (searched at wide tilts, the strongest line) must be
    # confirmed by the refinement: random marks on a page pass the wide search.
    keep = ok.sum(axis=1) >= 3
    quads, width, found = quads[keep], width[keep], ok[keep] & short_sides
    if len(quads) == 0:
        return empty
    # Only where the surface is about as bright as the paper (elsewhere the outline closes).
    bright = white_surround(small, quads)
    quads, width, found = quads[bright], width[bright], found[bright]
    if len(quads) == 0:
        return empty
    # (At least 6 px each way: a faint side's edge is blurred over a few pixels, and a
    # narrower window around it holds no flat profile to stand out from, as on a far card.)
    quads, ok = snap_lines(grey, quads, np.maximum(0.05 * width, 6.0))
    quads = np.array([clockwise(q) for q in quads]).reshape(-1, 4, 2)
    x, y = quads[..., 0], quads[..., 1]
    inside_frame = ((x >= 1) & (x <= w - 2) & (y >= 1) & (y <= h - 2)).all(axis=1)
    area = quad_area(quads)
    keep = ((ok | found).sum(axis=1) >= 3) & inside_frame & (area >= min_card_area)
    keep &= (area > 0.6 * width**2 * LONG_OVER_SHORT) & (area < 1.6 * width**2 * LONG_OVER_SHORT)
    quads = quads[keep]
    if len(quads) == 0:
        return empty
    # Blank surface round a card: no other symbol-like blob close outside it.
    quads = quads[~_crowded(quads, np.array([s[0] for s in symbols]))]
    if len(quads) == 0:
        return empty
    offset, colour = ink_offset(small, quads)
    quads, offset = _recentre(small, grey, quads, offset, colour, focal, centre)
    shape = aspect_score(quads, focal, centre) * corner_score(quads)
    paper, content, _, _ = probe_scores(small, quads, focal=focal, centre=centre)
    scores = 0.85 * shape * paper * content
    scores *= (offset < 0.05) & (colour > 0.05)
    order = np.argsort(-scores, kind="stable")
    chosen: list[int] = []
    for i in order:
        if scores[i] < min_score:
            break
        if chosen and (
            points_in_quads(quads[i].mean(axis=0)[None], quads[chosen]).any()
            or points_in_quads(quads[chosen].mean(axis=1), quads[i][None]).any()
        ):
            continue  # overlaps a card taken already
        chosen.append(int(i))
    if unplaced is not None and chosen:
        covered = points_in_quads(np.array(unplaced), quads[chosen]).any(axis=0)
        unplaced[:] = [c for c, done in zip(unplaced, covered) if not done]
    return quads[chosen], scores[chosen]
