"""The entry point :func:`find_cards`: masks (of the working image brought up to a normal
exposure when dim), candidates, scores, selection, splitting of touching cards, insets,
full-resolution refinement."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidates import (
    MAX_CARD_FRACTION,
    MIN_CARD_AREA,
    contour_candidate,
    find_candidates,
    fit_outline,
)
from vision.detect.geometry import (
    aspect_score,
    clockwise,
    local_card_area,
    order_corners,
    points_in_quads,
    quad_area,
    rect_ratio,
    touches_border,
)
from vision.detect.ink_cards import ink_cards
from vision.detect.masks import balance, brighten, calmed, candidate_masks, shrink
from vision.detect.neighbours import neighbour_cards
from vision.detect.pile import pile_cards
from vision.detect.plausible import keep_plausible
from vision.detect.refine import frame_contrast, inner_cards, refine
from vision.detect.result import CardDetections
from vision.detect.scoring import (
    MIN_SCORE,
    dim_patches,
    ink_across,
    ink_shift,
    probe_scores,
    score_candidates,
    shape_scores,
    white_surround,
)
from vision.detect.second_look import second_look as look_again
from vision.detect.select import (
    complete_cut,
    grid_split,
    mend_cuts,
    select_cards,
    split_at_notches,
)
from vision.detect.shaded import extend_sides
from vision.detect.whole_frame import FRAME_SCORE, card_filling_frame
from vision.detect.zoom import search_finer

__all__ = ["find_cards"]


#: Smallest area of a card found inset in a white frame, as a share of the scene's median card.
INSET_MIN_SHARE: Final = 0.65
#: Smallest CIE76 difference between a tray cell's paper and the card inset in it
#: (:func:`vision.detect.refine.frame_contrast`): right insets measured 11.4-14.9, insets inside a
#: card taken whole 0.4-2.8 (the annotated photos as taken and altered, see eval_robustness.py).
INSET_DELTA_E: Final = 6.0


#: Cards with faint symbols (:func:`_faint_cards`) need this many cards found by their own ink
#: in the scene, and an area from the first factor times the smallest of those to the second
#: times the largest.
FAINT_MIN_FOUND: Final = 3
FAINT_SIZE: Final = (0.7, 1.4)


#: Smallest area of a grid cell (a card split from a region of touching cards), as a share of
#: the area the other cards found say a card has at its place (:func:`local_card_area`). One
#: card split in two gives cells of ~0.5; cards that touch, ~1.
CELL_MIN_SHARE: Final = 0.6


#: A quad whose perspective-corrected long/short ratio is under this (a card is 1.56) does not
#: show by its outline which sides are long: its symbols decide (:func:`_short_edges_by_ink`).
NEAR_SQUARE: Final = 1.25


#: Share of the symbol ink that must lie across (or along) an edge to call it short (or long).
INK_ACROSS: Final = 0.7


#: Offset of the ink from a card's centre (see :func:`vision.detect.scoring.ink_shift`) beyond
#: which a card found on a surface as bright as its paper is searched from its symbols again.
LOOSE_INK_OFFSET: Final = 0.06


def find_cards(
    frame: npt.NDArray[np.uint8], *, min_score: float = MIN_SCORE, second_look: bool = True
) -> CardDetections:
    """Find every SET card in a frame.

    Args:
        frame: BGR uint8 image, shape (H, W, 3), any size (large photos are searched at a long
            side of about :data:`vision.detect.WORK_LONG_SIDE` px and refined at full resolution).
        min_score: drop detections scoring below this (0..1).
        second_look: where coloured ink lies off the cards found, search a sharpened copy of
            the frame too and add the cards it finds off them
            (:func:`vision.detect.second_look.second_look`: defocused, noisy, warm-lit or
            compressed photos lose fewer cards; 23 of the 122 annotated photos take it).

    Returns:
        :class:`CardDetections` in frame pixels; ``CardDetections.empty()`` when none is found.
        A card whose outline runs along the frame edge is reported, flagged ``partial``, only
        while it still has a card's shape (cut by a few pixels); cards cut further are left
        out. Use :meth:`CardDetections.whole` to drop the partial ones. When the frame itself
        is one card (a photo cropped to it: :func:`vision.detect.whole_frame.card_filling_frame`)
        and at most three things were found, each under half the frame, that card alone is
        reported instead, with
        the frame's corners, whole, scored :data:`vision.detect.whole_frame.FRAME_SCORE`.

    Raises:
        ValueError: if ``frame`` is not an (H, W, 3) uint8 array.
    """
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        shape = getattr(frame, "shape", None)
        raise ValueError(f"frame: expected (H, W, 3) uint8 BGR, got shape {shape}")
    if frame.dtype != np.uint8:
        raise ValueError(f"frame: expected uint8, got {frame.dtype}")
    if min(frame.shape[:2]) < 16:
        return CardDetections.empty()
    found, shrunk = _looked(frame, min_score, second_look)
    # Parts of the frame where the working image is too coarse for its cards: a panorama, a
    # small table in a large photo (vision.detect.zoom; never on the annotated photos).
    found = search_finer(
        frame, found, lambda part: _looked(part, min_score, second_look)[0], working=shrunk
    )
    # A photo cropped to one card has no outline to find; what is found in it instead (a
    # symbol's outline, a shadow's edge: at most 3, and each under half the frame) is not a
    # card: no card holds a card. (Looked for only then: about 5 ms.)
    frame_area = float(frame.shape[0] * frame.shape[1])
    if (
        min_score <= FRAME_SCORE
        and len(found) <= 3
        and (quad_area(found.corners) < 0.5 * frame_area).all()
    ):
        whole = card_filling_frame(frame, shrunk)
        if whole is not None:
            return CardDetections(
                whole[None], np.array([FRAME_SCORE], np.float32), np.zeros(1, np.bool_)
            )
    return found


def _looked(
    frame: npt.NDArray[np.uint8], min_score: float, second_look: bool
) -> tuple[CardDetections, npt.NDArray[np.uint8]]:
    """:func:`_search` and, with ``second_look``, its second look: the cards and the working
    image."""
    found, shrunk, small, k = _search(frame, min_score)
    if second_look:
        found = look_again(shrunk, small, k, found, lambda copy: _search(copy, min_score)[0])
    return found, shrunk


def _search(
    frame: npt.NDArray[np.uint8], min_score: float
) -> tuple[CardDetections, npt.NDArray[np.uint8], npt.NDArray[np.uint8], int]:
    """One search of a checked frame (see :func:`find_cards`): the cards, the working image
    (the frame shrunk by an integer factor) before and after its balance and brightening, and
    that factor."""
    shrunk, k = shrink(frame)
    shrunk = calmed(shrunk)  # a noisy working image smoothed (a small or high-ISO photo)
    small, gain = brighten(balance(shrunk))
    sh, sw = small.shape[:2]
    masks, edges = candidate_masks(small)
    blobs: list[np.ndarray] = []
    cands = find_candidates(masks, MIN_CARD_AREA, MAX_CARD_FRACTION * sh * sw, edges, blobs)
    if not cands:
        cands = [
            piece
            for blob in blobs[:12]
            for part in split_at_notches(blob, (sh, sw))
            if (piece := contour_candidate(part, (sw, sh), MIN_CARD_AREA, 1e12)) is not None
        ]
    focal = 0.85 * max(sh, sw)
    centre = np.array([sw / 2.0, sh / 2.0])
    if not cands:
        quads, scores = ink_cards(
            small, np.zeros((0, 4, 2)), focal, centre, min_score, MIN_CARD_AREA
        )
        ink_final = [(q, s, False) for q, s in zip(quads, scores)]
        found = _finish(frame, ink_final, k, focal, np.ones(len(ink_final), dtype=bool), gain)
        return found, shrunk, small, k
    quads, fill, cut, outlines, scores, upright, level = score_candidates(
        small, cands, focal, centre, min_score
    )
    single, kept, kept_white = _select(small, quads, scores, min_score)
    # Paper is the brightest surface of its neighbourhood: a "card" far darker than the other
    # cards (a patch of a dark mat, a phone) is not one; a card in shadow is ~half as bright.
    floor = 0.35 * float(np.median(level[kept])) if len(kept) else 0.0
    if len(kept) and (level[kept] < floor).any():
        scores[level < floor] = 0.0
        single, kept, kept_white = _select(small, quads, scores, min_score)
    areas = quad_area(quads)
    median = float(np.median(areas[kept])) if len(kept) else None
    # Touching cards that are not aligned (so no grid split applies): cut each large region
    # between its two deepest notches, twice at most (three cards in a row).
    for _ in range(2):
        big = (scores < min_score) & ~cut & (fill < 0.93)
        big &= areas > (1.5 * median if median is not None else 4 * MIN_CARD_AREA)
        parents = [outlines[i] for i in np.flatnonzero(big)[:12]] + blobs[:12]
        # A compact region that is not four-sided may also be one card cut by a faint line.
        mended = [m for blob in blobs[:12] if (m := mend_cuts(blob)) is not None]
        blobs = []
        pieces = []
        for outline in parents:
            for piece in split_at_notches(outline, (sh, sw)):
                found = contour_candidate(piece, (sw, sh), MIN_CARD_AREA, 1e12)
                if found is not None:
                    pieces.append(found)
                # A piece not card-shaped may be a card with a corner cut off by the split.
                if found is not None and aspect_score(found[0][None], focal, centre)[0] >= 0.5:
                    continue
                area = cv2.contourArea(piece)
                if (
                    area >= MIN_CARD_AREA
                    and (whole := complete_cut(piece, outline, edges)) is not None
                ):
                    share = area / max(float(quad_area(whole)), 1e-9)
                    pieces.append((whole, min(share, 1.0), False, piece))
        pieces += [
            found
            for piece in mended
            if (found := contour_candidate(piece, (sw, sh), MIN_CARD_AREA, 1e12)) is not None
        ]
        if not pieces:
            break
        q2, f2, c2, o2, s2, u2, l2 = score_candidates(small, pieces, focal, centre, min_score)
        s2[l2 < floor] = 0.0
        quads, fill, cut = np.concatenate([quads, q2]), np.concatenate([fill, f2]), np.r_[cut, c2]
        scores, upright = np.concatenate([scores, s2]), np.r_[upright, u2]
        level = np.concatenate([level, l2])
        outlines = outlines + o2
        single, kept, kept_white = _select(small, quads, scores, min_score)
        areas = quad_area(quads)
        median = float(np.median(areas[kept])) if len(kept) else None
    # Cards with faint symbols (a washed-out photo), vouched for by the cards found.
    faint = _faint_cards(small, quads, fill, cut, scores, level, kept, focal, centre, min_score)
    if len(faint):
        scores[faint[:, 0].astype(int)] = faint[:, 1]
        single, kept, kept_white = _select(small, quads, scores, min_score)
        median = float(np.median(areas[kept])) if len(kept) else None
    # A patch of a dim uniform surface (a floor between the cards) is not paper.
    patch = dim_patches(small, quads[kept], level[kept])
    if patch.any():
        scores[kept[patch]] = 0.0
        single, kept, kept_white = _select(small, quads, scores, min_score)
        median = float(np.median(areas[kept])) if len(kept) else None
    # Touching cards whose seam is invisible: split card-grid shaped regions into cells.
    parents = fill >= 0.88  # a row of cards may touch the frame edge
    if median is not None:
        parents &= areas > 1.6 * median
    else:  # no card found: only regions whose ink says "cards side by side"
        parents &= upright
    cells, family = [], []
    for p, quad in enumerate(quads[parents]):
        split = grid_split(
            quad, focal, centre, None if median is None else quad_area(quad) / median
        )
        cells += split
        family += [p] * len(split)
    # A card inside a larger white frame (a tray cell, a box lid) whose own edge is too faint
    # to close a region: look for a card-shaped quad inset in each found quad.
    inset = {}
    framed = kept[kept_white & ~cut[kept]]
    if len(framed):
        inner, ok = inner_cards(small, quads[framed])
        if ok.any():
            ratio = quad_area(inner) / np.maximum(areas[framed], 1e-9)
            ok &= (ratio > 0.5) & (ratio < 0.9)
            paper, content, _, _ = probe_scores(small, inner, focal=focal, centre=centre)
            inner_scores = aspect_score(inner, focal, centre) * paper * content
            ok &= inner_scores >= max(min_score, 0.8)
            # Cards of one scene are about the same size: an inset far smaller than the
            # scene's cards (the insets taken, the other cards as found) is the box around a
            # card's symbols inside a card seen with its tray cell.
            sizes = areas[kept].copy()
            sizes[np.isin(kept, framed[ok])] = quad_area(inner[ok])
            ok &= quad_area(inner) > INSET_MIN_SHARE * np.median(sizes)
            # The frame is another paper than the card's (a tray cell): an inset inside a
            # card already taken whole has the card's paper on both sides.
            if ok.any():
                ok[ok] &= frame_contrast(small, quads[framed[ok]], inner[ok]) >= INSET_DELTA_E
            for idx in np.flatnonzero(ok):
                inset[int(framed[idx])] = inner[idx]
    final = [
        (inset[i] if i in inset else fit_outline(outlines[i], quads[i]), scores[i], cut[i])
        for i in kept
    ]
    if cells:
        cells_arr = np.array(cells)
        paper, content, _, cell_level = probe_scores(small, cells_arr, focal=focal, centre=centre)
        cell_scores = 0.95 * aspect_score(cells_arr, focal, centre) * paper * content
        cell_scores[cell_level < floor] = 0.0
        ok = cell_scores >= min_score
        if median is not None:
            cell_areas = quad_area(cells_arr)
            ok &= (cell_areas > 0.6 * median) & (cell_areas < 1.6 * median)
        # A region of touching cards splits into cards only: every cell must pass, or none is
        # taken (cells of anything else land on symbols and paper margins at random).
        family_arr = np.array(family)
        whole_family = np.array([ok[family_arr == f].all() for f in family_arr])
        ok &= whole_family
        # A cell may not overlap a card already found (unless that "card" is a cell's parent:
        # two or more cards seen as one).
        found = quads[kept]
        if median is not None:
            found = found[areas[kept] < 1.6 * median]
        cell_in_found = points_in_quads(cells_arr.mean(axis=1), found).T  # (cells, found)
        found_in_cell = points_in_quads(found.mean(axis=1), cells_arr)
        ok &= ~cell_in_found.any(axis=1) & ~found_in_cell.any(axis=1)
        # Perspective makes near cards larger than the scene's median: a near card (one cut by
        # the frame edge, say) is no grid of two far ones. A cell must be card-sized for its
        # place on the table, as the other cards found say (all but the cell's own region).
        ok &= quad_area(cells_arr) > CELL_MIN_SHARE * local_card_area(cells_arr, quads[kept])
        # A card found lying across cells of a region, not on one of them (a card on a pile),
        # says the region is no grid of touching cards: none of its cells is taken.
        across = (cell_in_found != found_in_cell).any(axis=1)
        ok &= ~np.array([across[family_arr == f].any() for f in family_arr])
        if ok.any():
            all_quads = np.concatenate([quads[single], cells_arr[ok]])
            all_scores = np.concatenate([scores[single], cell_scores[ok]])
            chosen = select_cards(
                all_quads,
                all_scores,
                None if median is None else 0.4 * median,
                framed=white_surround(small, all_quads),
            )
            final = [
                (
                    inset.get(int(single[i]))
                    if int(single[i]) in inset
                    else fit_outline(outlines[single[i]], all_quads[i]),
                    all_scores[i],
                    cut[single[i]],
                )
                if i < len(single)
                else (all_quads[i], all_scores[i], touches_border(all_quads[i], sw, sh))
                for i in chosen
            ]
    if final:
        # Cards beside found cards whose outline did not close a region (shadow, glare, white
        # on white): SET is dealt in rows and columns.
        found_quads = np.array([f[0] for f in final], dtype=np.float64)
        whole = ~np.array([f[2] for f in final], dtype=bool)
        extra, extra_scores, replaced = neighbour_cards(
            small, found_quads[whole], found_quads, focal, centre, min_score, floor
        )
        gone = set(replaced.tolist())
        final = [f for i, f in enumerate(final) if i not in gone]
        final += [(q, s, False) for q, s in zip(extra, extra_scores)]
        # A side on a shadow's edge or a symbol's outline: the card goes on to the table.
        found_quads = np.array([f[0] for f in final], dtype=np.float64).reshape(-1, 4, 2)
        whole = ~np.array([f[2] for f in final], dtype=bool)
        grown = extend_sides(small, found_quads, whole, floor)
        final = [(g, s, c) for g, (_, s, c) in zip(grown, final, strict=True)]
    # White cards on a surface as bright as their paper, found from their symbols.
    final, short_first = _white_surface_cards(small, final, focal, centre, min_score, floor)
    # Cards on or under other cards, whose seams close no region.
    if final:
        taken = np.array([f[0] for f in final], dtype=np.float64)
        extra, extra_scores = pile_cards(
            frame, small, k, taken, focal, centre, min_score, paper=masks[0]
        )
        final += [(q, s, False) for q, s in zip(extra, extra_scores)]
        short_first = np.r_[short_first, np.zeros(len(extra), dtype=bool)]
    final, short_first = keep_plausible(small, final, short_first)
    return _finish(frame, final, k, focal, short_first, gain), shrunk, small, k


def _faint_cards(
    small: np.ndarray,
    quads: np.ndarray,
    fill: np.ndarray,
    cut: np.ndarray,
    scores: np.ndarray,
    level: np.ndarray,
    kept: np.ndarray,
    focal: float,
    centre: np.ndarray,
    min_score: float,
) -> np.ndarray:
    """Candidates refused for want of ink whose symbols are faint strokes on clean paper (a
    washed-out photo: outlines 6-10 % darker than the paper), taken where the scene's cards
    vouch for them: at least :data:`FAINT_MIN_FOUND` cards found by their own ink, the
    candidate's area from :data:`FAINT_SIZE` times the smallest of theirs to that times the
    largest (a plane fitted to a few cards, three in a row, extrapolates badly), its paper as
    bright as theirs, lying on none of them.
    Alone, such a quad is as likely white paper with faint print (a receipt, a shadowed
    sheet: 16 of the 1,500 negative chips).

    Returns:
        (K, 2) float64 rows of (candidate index, new score).
    """
    none = np.zeros((0, 2))
    if len(kept) < FAINT_MIN_FOUND:
        return none
    maybe = np.flatnonzero((scores < min_score) & ~cut)
    found = quads[kept]
    lone = ~points_in_quads(quads[maybe].mean(axis=1), found).any(axis=0)
    lone &= ~points_in_quads(found.mean(axis=1), quads[maybe]).any(axis=1)
    sizes, size = quad_area(found), quad_area(quads[maybe])
    lone &= (size > FAINT_SIZE[0] * sizes.min()) & (size < FAINT_SIZE[1] * sizes.max())
    maybe = maybe[lone]
    pre = shape_scores(small.shape[:2], quads[maybe], fill[maybe], cut[maybe], focal, centre)
    maybe, pre = maybe[pre >= min_score], pre[pre >= min_score]
    if len(maybe) == 0:
        return none
    paper, content, _, lo = probe_scores(
        small, quads[maybe], focal=focal, centre=centre, faint=True
    )
    new = pre * paper * content * (lo >= 0.9 * float(np.median(level[kept])))
    good = new >= min_score
    return np.c_[maybe[good], new[good]]


def _white_surface_cards(
    small: np.ndarray,
    final: list,
    focal: float,
    centre: np.ndarray,
    min_score: float,
    floor: float,
) -> tuple[list, np.ndarray]:
    """``final`` (working quad, score, partial) with the white cards on a surface as bright as
    their paper added (found from their symbols, :func:`~vision.detect.ink_cards.ink_cards`),
    and (len(final),) bool: each quad's edge 0-1 is known to be a short edge.

    Searched only where no card was found or one found lies on such a surface (elsewhere
    outlines close)."""
    taken = np.array([f[0] for f in final], dtype=np.float64).reshape(-1, 4, 2)
    short_first = np.zeros(len(final), dtype=bool)
    bright = white_surround(small, taken)
    if len(taken) == 0 or bright.any():
        # A card on such a surface whose symbols sit off its centre lost a faint side there
        # (its outline closed along its symbols): it is searched from its symbols as well, and
        # a card found so over it replaces it.
        loose = bright.copy()
        loose[bright] = ink_shift(small, taken[bright]) > LOOSE_INK_OFFSET
        unplaced: list[np.ndarray] = []
        extra, extra_scores = ink_cards(
            small, taken[~loose], focal, centre, min_score, MIN_CARD_AREA, unplaced
        )
        if loose.any() and len(extra):
            held = np.flatnonzero(loose)
            over = points_in_quads(taken[held].mean(axis=1), extra)
            over |= points_in_quads(extra.mean(axis=1), taken[held]).T
            gone = set(held[over.any(axis=0)].tolist())
            final = [f for i, f in enumerate(final) if i not in gone]
            short_first = short_first[: len(final)]
        final += [(q, s, False) for q, s in zip(extra, extra_scores)]
        short_first = np.r_[short_first, np.ones(len(extra), dtype=bool)]
        # Symbols left without a card (it showed two sides at most: a far card seen at a
        # slant) beside a card found from its symbols: search beside that card as beside the
        # others (it was not there to seed the search above).
        seeds = _beside(extra, np.array(unplaced).reshape(-1, 2))
        if len(seeds):
            found_quads = np.array([f[0] for f in final], dtype=np.float64)
            more, more_scores, replaced = neighbour_cards(
                small, seeds, found_quads, focal, centre, min_score, floor
            )
            gone = set(replaced.tolist())
            final = [f for i, f in enumerate(final) if i not in gone]
            short_first = np.array([b for i, b in enumerate(short_first) if i not in gone], bool)
            final += [(q, s, False) for q, s in zip(more, more_scores)]
            short_first = np.r_[short_first, np.zeros(len(more), dtype=bool)]
    return final, short_first


def _beside(quads: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The (N, 4, 2) ``quads`` with one of ``points`` (M, 2) within 2.5 x their long side of
    their centre, outside them (a neighbouring card's place, a gap or two away)."""
    if len(quads) == 0 or len(points) == 0:
        return quads[:0]
    long_side = np.linalg.norm(np.roll(quads, -1, axis=1) - quads, axis=2).max(axis=1)
    dist = np.linalg.norm(points[None] - quads.mean(axis=1)[:, None], axis=2)  # (N, M)
    near = (dist < 2.5 * long_side[:, None]) & ~points_in_quads(points, quads)
    return quads[near.any(axis=1)]


def _select(
    small: np.ndarray, quads: np.ndarray, scores: np.ndarray, min_score: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the candidates scoring at least ``min_score``, of those kept by
    :func:`vision.detect.select.select_cards` (no composites, nesting or duplicates), and
    (len(kept),) bool :func:`~vision.detect.scoring.white_surround` of the kept ones."""
    single = np.flatnonzero(scores >= min_score)
    framed = white_surround(small, quads[single])
    chosen = select_cards(quads[single], scores[single], framed=framed)
    return single, single[chosen], framed[chosen]


def _finish(
    frame: np.ndarray,
    final: list,
    k: int,
    focal: float,
    short_first: np.ndarray,
    gain: float = 1.0,
) -> CardDetections:
    """Detections (working quad, score, partial) refined at full resolution, corners ordered
    (``short_first``: (N,) bool, the quad's edge 0-1 is known to be a short edge; ``gain``: the
    working image's :func:`~vision.detect.masks.brighten` gain, the frame's edges are that
    much fainter)."""
    if not final:
        return CardDetections.empty()
    work = np.array([f[0] for f in final], dtype=np.float64)
    result_scores = np.array([f[1] for f in final], dtype=np.float32)
    partial = np.array([f[2] for f in final], dtype=bool)
    full = refine(frame, (work + 0.5) * k - 0.5, k, gain)
    centre = (frame.shape[1] / 2, frame.shape[0] / 2)
    full, short_first = _short_edges_by_ink(frame, full, focal * k, centre, short_first)
    full = order_corners(full, focal=focal * k, centre=centre, short_first=short_first)
    return CardDetections(full.astype(np.float32), np.clip(result_scores, 0, 1), partial)


def _short_edges_by_ink(
    frame: np.ndarray,
    quads: np.ndarray,
    focal: float,
    centre: tuple[float, float],
    short_first: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Quads (N, 4, 2) whose long sides the outline cannot tell, with their short edge put
    first from their symbols, and ``short_first`` (N,) bool updated.

    A card seen steeply along its long axis (a low camera) is foreshortened to a near-square
    quad: its perspective-corrected aspect ratio (1.56 head-on) comes out under
    :data:`NEAR_SQUARE`, and which pair of sides is long depends on the assumed focal length.
    SET symbols lie across the card, so the ink decides (:func:`ink_across`): clearly across
    edge 0-1 (at least :data:`INK_ACROSS` of it), edge 0-1 is short; clearly along it, edge
    1-2 is.
    """
    quads = np.array([clockwise(q) for q in quads])
    ratio = rect_ratio(quads, focal, np.asarray(centre, dtype=np.float64))
    ambiguous = ~short_first & (np.maximum(ratio, 1.0 / np.maximum(ratio, 1e-9)) < NEAR_SQUARE)
    if not ambiguous.any():
        return quads, short_first
    short_first = short_first.copy()
    idx = np.flatnonzero(ambiguous)
    across = ink_across(frame, quads[idx])
    for i, share in zip(idx, across):
        if share >= INK_ACROSS:
            short_first[i] = True
        elif share <= 1.0 - INK_ACROSS:
            quads[i] = np.roll(quads[i], -1, axis=0)
            short_first[i] = True
    return quads, short_first
