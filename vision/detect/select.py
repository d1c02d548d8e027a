"""Selection among scored candidates (no composites, nesting or duplicates) and the splitting of
touching cards seen as one region (card grids into cells, other regions at their notches)."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect.geometry import clockwise, inset, points_in_quads, quad_area, rect_ratio
from vision.detect.masks import KERNEL3, KERNEL5
from vision.warp import CARD_ASPECT

__all__ = ["dedupe", "grid_split", "mend_cuts", "select_cards", "split_at_notches"]


def select_cards(
    quads: np.ndarray,
    scores: np.ndarray,
    min_member: float | None = None,
    framed: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the kept candidates: no composites, no nesting, no duplicates.

    ``framed``: (N,) bool, the surface around the candidate is as bright as its paper (see
    :func:`vision.detect.scoring.white_surround`); of two nested candidates, a framed outer one
    is a frame around the card (a tray cell), an unframed one is the whole card around its lit
    part.

    ``min_member``: smallest area (working pixels) of a candidate that can make a larger one a
    composite of several cards (None: 3 % of the larger one).
    """
    if len(quads) == 0:
        return np.zeros(0, dtype=int)
    areas = quad_area(quads)
    centres = quads.mean(axis=1)
    inside = points_in_quads(centres, quads)  # [i, j]: centre j inside quad i
    np.fill_diagonal(inside, False)
    # A composite holds the centres of >= 2 clearly smaller, mutually separate candidates.
    composite = np.zeros(len(quads), dtype=bool)
    for i in np.flatnonzero(inside.sum(axis=1) >= 2):
        floor = 0.03 * areas[i] if min_member is None else min_member
        members = np.flatnonzero(inside[i] & (areas < 0.75 * areas[i]) & (areas > floor))
        if len(members) < 2:
            continue
        sub = inside[np.ix_(members, members)]
        if (~(sub | sub.T)).any():
            composite[i] = True
    order = np.argsort(-scores, kind="stable")
    kept: list[int] = []
    for i in order:
        if composite[i]:
            continue
        clash = [j for j in kept if inside[i, j] or inside[j, i]]
        if not clash:
            kept.append(int(i))
        elif len(clash) == 1:
            j = clash[0]
            big, small = (i, j) if areas[i] > areas[j] else (j, i)
            margin = inset(quads[small], quads[big])
            # (A card fills over half its tray cell; the box around a card's symbols less.)
            in_frame = framed is not None and framed[big] and margin > -2.0
            in_frame &= areas[small] > 0.5 * areas[big]
            if in_frame or (
                margin > 0.06 * np.sqrt(areas[big]) and areas[small] > 0.35 * areas[big]
            ):
                # A card inside a larger white frame (a tray cell, a box lid): the card.
                prefer = small
            elif (
                areas[big] > 1.15 * areas[small]
                and scores[big] >= 0.9 * scores[small]
                and not (framed is not None and framed[big] and margin <= -1.0)
            ):
                # A part of a card (its lit half, the paper inside its edge): the whole card,
                # unless the larger one is clearly less card-like (a card with the dark mat
                # beside it, 0.86 against 1.0 in gractang IMG_3919; at 0.7 it was taken), or
                # is framed and the smaller one sticks out of it (a tray's drawn line closed
                # a region around part of the card and part of the tray: koff IMG01, IMG03,
                # IMG07, the card 3.1, 2.1 and 2.3 px out of it; a lit half sticks out of its
                # whole card too, pclewis shadow3 by 3 px, but not on a white surround).
                prefer = big
            else:
                prefer = j
            kept[kept.index(j)] = int(prefer)
    return np.array(kept, dtype=int)


def dedupe(quads: np.ndarray, pre: np.ndarray) -> np.ndarray:
    """Indices keeping the best of near-identical quads (same centre and area), best first."""
    order = np.argsort(-pre, kind="stable")
    centres = quads.mean(axis=1)
    areas = quad_area(quads)
    # [i, k]: quad k is a near copy of quad i (by i's own size), for all pairs at once.
    offset = centres[None, :, :] - centres[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        twin = np.hypot(offset[..., 0], offset[..., 1]) < (0.05 * np.sqrt(areas) + 1.0)[:, None]
        twin &= np.abs(np.log(areas[None, :] / areas[:, None])) < 0.06
    kept: list[int] = []
    taken = np.zeros(len(quads), dtype=bool)  # [i]: a kept quad is a near copy of quad i
    for i in order.tolist():
        if not taken[i]:
            kept.append(i)
            taken |= twin[:, i]
    return np.array(kept, dtype=int)


def grid_split(
    quad: np.ndarray, focal: float, centre: np.ndarray, count: float | None
) -> list[np.ndarray]:
    """Cells of ``quad`` (a x b grid, perspective-correct) whose shape is a card's.

    ``count`` is the expected number of cards (area over the median card area) or None; the
    smallest fitting grid of 2 to 36 cells is used when it is unknown.
    """
    ratio = float(rect_ratio(quad[None], focal, centre)[0])  # edge 0-1 over edge 1-2
    best: list[tuple[float, int, int]] = []
    for a in range(1, 7):
        for b in range(1, 7):
            n = a * b
            if n < 2:
                continue
            if count is not None and abs(n - count) > max(0.6, 0.25 * count):
                continue
            cell = ratio * b / a
            err = min(abs(np.log(cell / CARD_ASPECT)), abs(np.log(cell * CARD_ASPECT)))
            if err < 0.15:
                best.append((n if count is None else abs(n - count), a, b))
    if not best:
        return []
    _, a, b = min(best)
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    hom = cv2.getPerspectiveTransform(unit, quad.astype(np.float32))
    cells = []
    for i in range(a):
        for j in range(b):
            pts = np.array(
                [
                    [i / a, j / b],
                    [(i + 1) / a, j / b],
                    [(i + 1) / a, (j + 1) / b],
                    [i / a, (j + 1) / b],
                ],
                np.float64,
            )
            cells.append(cv2.perspectiveTransform(pts[None], hom)[0])
    return cells


def split_at_notches(contour: np.ndarray, shape: tuple[int, int]) -> list[np.ndarray]:
    """Cut a region between its two deepest notches (where two touching cards meet, their
    rounded corners and any offset leave concavities); the outlines of the pieces."""
    hull_idx = cv2.convexHull(contour, returnPoints=False)
    if hull_idx is None or len(hull_idx) < 4:
        return []
    try:
        defects = cv2.convexityDefects(contour, np.sort(hull_idx, axis=0))
    except cv2.error:
        return []
    if defects is None or len(defects) < 2:
        return []
    defects = defects.reshape(-1, 4)
    depth = defects[:, 3] / 256.0
    area = cv2.contourArea(contour)
    keep = depth >= max(2.0, 0.02 * np.sqrt(area))
    if keep.sum() < 2:
        return []
    deepest = defects[keep][np.argsort(-depth[keep])[:2]]
    p1, p2 = contour[deepest[0, 2], 0], contour[deepest[1, 2], 0]
    x, y, bw, bh = cv2.boundingRect(contour)
    mask = np.zeros((bh + 2, bw + 2), np.uint8)
    offset = np.array([x - 1, y - 1])
    cv2.drawContours(mask, [contour - offset], -1, 255, -1)
    cv2.line(mask, tuple(int(v) for v in p1 - offset), tuple(int(v) for v in p2 - offset), 0, 3)
    pieces, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if len(pieces) < 2:
        return []
    return [piece + offset for piece in pieces]


def mend_cuts(contour: np.ndarray) -> np.ndarray | None:
    """The region's outline with thin cuts (up to ~4 px wide) into it bridged, or None where
    there are none.

    A faint line (a shadow's edge, a crease) can run from a card's edge to a symbol's outline,
    joining the symbol to the outside: the region is the card less that symbol, deeply
    notched, and not four-sided. Closing the filled region (5 x 5) bridges such a cut where it
    meets the edge; the outer outline then runs round the symbol as a hole. Gaps between two
    cards or a card and the table are wider and stay open.

    Args:
        contour: (P, 1, 2) int32 region outline (``cv2.findContours``).

    Returns:
        (Q, 1, 2) int32 outline of the mended region, or None if closing adds under 5 % to
        its area.
    """
    x, y, bw, bh = cv2.boundingRect(contour)
    pad = 3
    offset = np.array([x - pad, y - pad])
    mask = np.zeros((bh + 2 * pad, bw + 2 * pad), np.uint8)
    cv2.drawContours(mask, [contour - offset], -1, 255, -1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, KERNEL5)
    pieces, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not pieces:
        return None
    mended = max(pieces, key=cv2.contourArea)
    if cv2.contourArea(mended) < 1.05 * cv2.contourArea(contour):
        return None
    return mended + offset


def complete_cut(piece: np.ndarray, parent: np.ndarray, edges: np.ndarray) -> np.ndarray | None:
    """The four-sided card a notch-split piece is, where the split cut one of its corners off.

    A card lying on another whose seam is faint in one place joins the card below into one
    region; the cut between the region's notches then runs across the top card's corner and
    the piece is a pentagon: four of the card's sides and the cut. Dropping the one side of
    the piece's pentagon that lies inside the parent region (the cut, not an outline) and
    meeting its two neighbours gives the card back, if the corner so restored lies on the
    parent's paper with no edge across it and the two sides restored run mostly along edges
    (the top card's faint seam; a covered card's sides would run on under the card on it,
    across its plain paper).

    Args:
        piece: (P, 1, 2) int32 outline of a piece of ``parent``.
        parent: (Q, 1, 2) int32 outline of the region the piece was cut from.
        edges: uint8 edge map of the working image (nonzero on edges).

    Returns:
        (4, 2) float64 clockwise quad, or None.
    """
    hull = cv2.convexHull(piece)
    if len(hull) < 5:
        return None
    penta = cv2.approxPolyN(hull, 5, epsilon_percentage=-1.0, ensure_convex=True)
    if penta is None or penta.size != 10:
        return None
    v = penta.reshape(5, 2).astype(np.float64)
    if cv2.contourArea(v.astype(np.float32), oriented=True) < 0:  # clockwise on screen
        v = v[::-1].copy()
    inside = [
        cv2.pointPolygonTest(parent, tuple(float(c) for c in (v[i] + v[(i + 1) % 5]) / 2), True)
        for i in range(5)
    ]
    cuts = [i for i in range(5) if inside[i] > 3.0]
    if len(cuts) != 1:
        return None
    i = cuts[0]
    a, b = v[(i - 1) % 5], v[i]  # the side before the cut
    c, d = v[(i + 1) % 5], v[(i + 2) % 5]  # the side after it
    d1, d2 = b - a, d - c
    det = d1[0] * (-d2[1]) + d1[1] * d2[0]
    if abs(det) < 1e-9:
        return None
    t = ((c - a)[0] * (-d2[1]) + (c - a)[1] * d2[0]) / det
    corner = a + t * d1
    if t < 1.0 or cv2.pointPolygonTest(parent, (float(corner[0]), float(corner[1])), True) < 1.0:
        return None
    h, w = edges.shape
    corners = np.round(np.array([b, corner, c])).astype(np.int32)
    x0, y0 = np.clip(corners.min(axis=0) - 1, 0, [w, h])
    x1, y1 = np.clip(corners.max(axis=0) + 2, 0, [w, h])
    triangle = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(triangle, corners - [x0, y0], 255)
    inner = cv2.erode(triangle, KERNEL3, iterations=2) > 0
    area = np.count_nonzero(inner)
    if area == 0 or np.count_nonzero(edges[y0:y1, x0:x1][inner]) > 0.02 * area:
        return None
    # The restored sides run along the card's own outline, faint but mostly there; a covered
    # card's would run under the card on it, over plain paper.
    on, total = 0, 0
    for start in (b, c):
        n = max(int(np.hypot(*(corner - start))), 1)
        pts = np.round(start + (corner - start) * (np.arange(n) + 0.5)[:, None] / n).astype(int)
        pts = pts[(pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)]
        on += np.count_nonzero(edges[pts[:, 1], pts[:, 0]])
        total += n
    if on < 0.5 * total:
        return None
    quad = np.array([v[(i + k) % 5] for k in range(2, 5)] + [corner])
    return clockwise(quad)
