"""Candidate quads: four-sided region outlines of the masks, quads around open edge chains
(a card outline seen on three sides), and side refits to the straight parts of an outline."""

from __future__ import annotations

import math
from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import NEXT, corner_score
from vision.detect.masks import KERNEL3

__all__ = [
    "MAX_CARD_FRACTION",
    "MIN_CARD_AREA",
    "contour_candidate",
    "find_candidates",
    "fit_outline",
    "fit_sides",
    "outline_candidates",
]


MIN_CARD_AREA: Final = 500.0  # working pixels: about 18 x 28 px, too small to read below that


MAX_CARD_FRACTION: Final = 0.9  # of the working image area


def find_candidates(
    masks: list[np.ndarray],
    min_area: float,
    max_area: float,
    edges: np.ndarray | None = None,
    blobs: list[np.ndarray] | None = None,
) -> list[tuple]:
    """(quad, fill, cut, outline) for every region outline that is roughly four-sided.

    ``quad`` is the clockwise four-sided polygon around the region (``cv2.approxPolyN``), fill
    the region's share of it, cut whether the frame edge clips the region. Compact regions
    that are not four-sided are appended to ``blobs`` (if given).
    """
    h, w = masks[0].shape
    min_perimeter = 3.0 * np.sqrt(min_area)
    out = []
    seen: set[tuple[int, int, int, int]] = set()
    for mask in masks:
        contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        if hierarchy is None:
            continue
        lengths = np.fromiter((len(c) for c in contours), dtype=np.int64, count=len(contours))
        outer = np.flatnonzero((hierarchy[0][:, 3] < 0) & (lengths >= min_perimeter))
        for ci in outer:
            contour = contours[ci]
            x, y, bw, bh = cv2.boundingRect(contour)
            if bw * bh < min_area or bw * bh > 2.5 * max_area:
                continue
            ragged = len(contour) > 4.5 * (bw + bh)  # card outlines (and rows of cards) are smooth
            key = (x // 3, y // 3, (x + bw) // 3, (y + bh) // 3)
            if key in seen or ragged:
                continue
            seen.add(key)
            found, area, hull = _candidate(contour, (w, h), min_area, max_area)
            if found is not None:
                out.append(found)
            elif blobs is not None and bw * bh >= 3 * min_area and min_area * 2 <= area <= max_area:
                hull_area = cv2.contourArea(cv2.convexHull(contour) if hull is None else hull)
                if area >= 0.75 * hull_area:
                    blobs.append(contour)  # maybe touching cards: split at notches later
    if edges is not None:
        out += outline_candidates(edges, min_area, max_area, seen)
    return out


def contour_candidate(
    contour: np.ndarray, size: tuple[int, int], min_area: float, max_area: float
) -> tuple | None:
    """(quad, fill, cut, outline) for a region outline that is roughly four-sided, else None."""
    return _candidate(contour, size, min_area, max_area)[0]


def _candidate(
    contour: np.ndarray, size: tuple[int, int], min_area: float, max_area: float
) -> tuple[tuple | None, float, np.ndarray | None]:
    """:func:`contour_candidate`, its outline's area and its convex hull (None if not taken)."""
    w, h = size
    x, y, bw, bh = cv2.boundingRect(contour)
    area = cv2.contourArea(contour)
    if area < min_area or area > max_area or area < 0.35 * bw * bh:
        return None, area, None
    # The minimum-area rectangle is the hull's (cv2.minAreaRect takes the hull first): one
    # hull serves both, the same result at half the cost on a long outline.
    hull = cv2.convexHull(contour)
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    if area < 0.7 * rw * rh or max(rw, rh) > 4.0 * min(rw, rh):
        return None, area, hull
    approx = cv2.approxPolyN(hull, 4, epsilon_percentage=-1.0, ensure_convex=True)
    if approx is None or approx.size != 8:
        return None, area, hull
    quad, quad_size = _clockwise(approx.reshape(4, 2).astype(np.float64))
    fill = area / max(quad_size, 1e-9)
    if fill < 0.8:
        return None, area, hull
    cut = False
    if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
        pts = contour.reshape(-1, 2)
        contact = np.count_nonzero(
            (pts[:, 0] <= 0) | (pts[:, 1] <= 0) | (pts[:, 0] >= w - 1) | (pts[:, 1] >= h - 1)
        )
        cut = contact > 0.25 * min(rw, rh)
    return (quad, fill, cut, contour), area, hull


def outline_candidates(
    edges: np.ndarray, min_area: float, max_area: float, seen: set[tuple[int, int, int, int]]
) -> list[tuple]:
    """Quads around connected edge chains that run along most of a quad's perimeter.

    The convex hull of a card outline seen on three sides is the whole card.
    """
    h, w = edges.shape
    out = []
    near = None  # the edges dilated by 3 x 3: made when a quad first needs it
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    min_perimeter = 3.0 * np.sqrt(min_area)
    for contour in contours:
        if len(contour) < min_perimeter:
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        if bw * bh < min_area or bw * bh > 2.5 * max_area:
            continue
        if len(contour) < 1.2 * (bw + bh):  # runs along under 60 % of its bounding box
            continue
        key = (x // 3, y // 3, (x + bw) // 3, (y + bh) // 3)
        if key in seen:
            continue
        seen.add(key)
        if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
            continue  # runs along the frame edge (decided before the fitting below: cheaper)
        hull = cv2.convexHull(contour)
        hull_area = cv2.contourArea(hull)
        if hull_area < min_area or hull_area > max_area:
            continue
        approx = cv2.approxPolyN(hull, 4, epsilon_percentage=-1.0, ensure_convex=True)
        if approx is None or approx.size != 8:
            continue
        quad = _clockwise(approx.reshape(4, 2).astype(np.float64))[0]
        perimeter = float(np.linalg.norm(quad - quad[NEXT], axis=1).sum())
        chain = len(contour) / 2.0  # the outer contour of a thin chain runs along it twice
        if chain < 0.6 * perimeter or chain > 3.0 * perimeter:
            continue
        # Texture specks touching the chain bend the hull: refit the sides to the chain's
        # straight runs.
        fitted = fit_outline(contour, quad)
        if _bent(fitted):
            # The hull's four-sided fit can be bent by a speck; start from the bounding box.
            box = _clockwise(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float64))[0]
            fitted = fit_outline(contour, box, reach=0.12)
            if _bent(fitted):
                continue
        quad = fitted
        # Evidence: the share of the quad's perimeter that runs along an edge (within ~2 px).
        t = np.linspace(0.0, 1.0, 24, endpoint=False)
        rim = (quad[:, None, :] + t[None, :, None] * (quad[NEXT] - quad)[:, None, :]).reshape(-1, 2)
        xi = np.clip(np.rint(rim[:, 0]).astype(int), 0, w - 1)
        yi = np.clip(np.rint(rim[:, 1]).astype(int), 0, h - 1)
        if near is None:
            near = cv2.dilate(edges, KERNEL3) > 0
        coverage = float(np.count_nonzero(near[yi, xi]) / len(rim))
        if coverage < 0.6:
            continue
        out.append((quad, 0.95, False, hull))
    return out


def _clockwise(quad: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`~vision.detect.geometry.clockwise` and :func:`~vision.detect.geometry.quad_area`
    of one quad (4, 2) on Python floats (the same sums in the same order; NumPy calls on four
    corners cost more than the arithmetic)."""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = quad.tolist()
    signed = (ax * by - bx * ay) + (bx * cy - cx * by) + (cx * dy - dx * cy) + (dx * ay - ax * dy)
    if signed > 0:
        return quad, 0.5 * signed
    # The area summed along the reversed corners, as quad_area of the reversed quad does.
    signed = (dx * cy - cx * dy) + (cx * by - bx * cy) + (bx * ay - ax * by) + (ax * dy - dx * ay)
    return quad[::-1].copy(), 0.5 * abs(signed)


def _bent(quad: np.ndarray) -> bool:
    """No corner of the quad is near square, or two corners coincide (a sliver's refit)."""
    sides = np.hypot(*(quad[NEXT] - quad).T)
    return bool(sides.min() < 1e-3 or corner_score(quad[None])[0] == 0.0)


def fit_outline(outline: np.ndarray, quad: np.ndarray, reach: float = 0.03) -> np.ndarray:
    """``quad`` with its sides refitted to the straight parts of the region outline."""
    points, moments, centre = _prepare(outline.reshape(-1, 2))
    local = quad - centre
    for step in range(2):
        refined = _fit_sides(points, moments, local, reach if step == 0 else 0.03)
        if refined is None:
            break
        local = refined
        quad = local + centre
    return quad


def fit_sides(points: np.ndarray, quad: np.ndarray, reach: float = 0.03) -> np.ndarray | None:
    """Refit each side of ``quad`` to the outline points near it (within 2 px + ``reach`` x
    the side's length), away from the corners; with a wide reach, the points nearest the
    side's median offset."""
    local, moments, centre = _prepare(points)
    refined = _fit_sides(local, moments, quad - centre, reach)
    return None if refined is None else refined + centre


def _prepare(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points (P, 2) around their mean (float64), their per-point moments (P, 6) for line fits
    (1, x, y, xx, yy, xy) and the mean."""
    points = points.astype(np.float64)
    centre = points.mean(axis=0)
    local = points - centre
    moments = np.empty((len(local), 6))
    moments[:, 0] = 1.0
    moments[:, 1:3] = local
    moments[:, 3:5] = local * local
    moments[:, 5] = local[:, 0] * local[:, 1]
    return local, moments, centre


def _fit_sides(
    points: np.ndarray, moments: np.ndarray, quad: np.ndarray, reach: float
) -> np.ndarray | None:
    """:func:`fit_sides` on prepared points (see :func:`_prepare`; quad in the same frame).

    The quad's own arithmetic runs on Python floats (four corners: cheaper than NumPy calls);
    each side's line is the total least squares fit of its points (as ``cv2.fitLine`` with
    ``DIST_L2``), all four from one product of the selection with the points' moments.
    """
    q = quad.tolist()
    project = np.empty((2, 8))  # columns: the sides' directions, then their outward normals
    offset = [0.0] * 8
    lengths = [0.0] * 4
    for i in range(4):
        (ax, ay), (bx, by) = q[i], q[(i + 1) % 4]
        length = math.hypot(bx - ax, by - ay)
        if length < 4:
            return None
        dx, dy = (bx - ax) / length, (by - ay) / length
        project[0, i], project[1, i], project[0, 4 + i], project[1, 4 + i] = dx, dy, dy, -dx
        offset[i], offset[4 + i] = ax * dx + ay * dy, ax * dy - ay * dx
        lengths[i] = length
    size = np.array(lengths)[:, None]
    # (8, P): each point's position along each side, then its signed offset from it; rows are
    # contiguous (comparisons on (P, 4) column views cost twice as much).
    along = (points @ project).T.copy()
    along -= np.array(offset)[:, None]
    t, signed = along[:4], along[4:]
    sel = (t > 0.15 * size) & (t < 0.85 * size) & (np.abs(signed) < 2.0 + reach * size)
    if reach > 0.05:
        for i in range(4):
            side = sel[i]
            if np.count_nonzero(side) < 2:
                return None
            off = signed[i]
            sel[i] = side & (np.abs(off - np.median(off[side])) < 2.0 + 0.02 * lengths[i])
    lines = []
    # Column-major selection: the same product, term for term, as before this layout change.
    for n, sx, sy, sxx, syy, sxy in (np.asfortranarray(sel, np.float64) @ moments).tolist():
        if n < 2:
            return None
        mx, my = sx / n, sy / n
        cxx, cyy, cxy = sxx / n - mx * mx, syy / n - my * my, sxy / n - mx * my
        angle = 0.5 * math.atan2(2.0 * cxy, cxx - cyy)
        lines.append((mx, my, math.cos(angle), math.sin(angle)))
    corners = []
    for i in range(4):  # corner i = side i-1 x side i
        x1, y1, u1, v1 = lines[i - 1]
        x2, y2, u2, v2 = lines[i]
        det = u2 * v1 - u1 * v2
        if abs(det) < 1e-6:
            return None
        s = ((x2 - x1) * -v2 + (y2 - y1) * u2) / det
        corners.append((x1 + s * u1, y1 + s * v1))
    area = turn = 0.0
    for i in range(4):
        (ax, ay), (bx, by) = q[i], q[(i + 1) % 4]
        (cx, cy), (ex, ey) = corners[i], corners[(i + 1) % 4]
        area += ax * by - bx * ay
        turn += cx * ey - ex * cy
    limit = 0.25 * math.sqrt(0.5 * abs(area))
    if any(abs(cx - ax) > limit or abs(cy - ay) > limit for (cx, cy), (ax, ay) in zip(corners, q)):
        return None
    return np.array(corners if turn > 0 else corners[::-1])  # clockwise
