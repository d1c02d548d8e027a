"""Quadrilateral geometry: corner order, side ratios through the perspective, areas, sides and
their intersections.

Quads are (4, 2) or (N, 4, 2) float64 pixel coordinates (x right, y down); "clockwise" means
clockwise on screen.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from vision.warp import CARD_ASPECT

__all__ = [
    "LONG_OVER_SHORT",
    "NEXT",
    "PREV",
    "intersect_sides",
    "order_corners",
    "per_side",
    "points_in_quads",
    "quad_area",
    "rect_ratio",
    "side_frames",
]


LONG_OVER_SHORT: Final = 1.0 / CARD_ASPECT  # 89 / 57 = 1.561


def order_corners(
    quads: npt.NDArray[np.floating],
    focal: float | None = None,
    centre: tuple[float, float] = (0.0, 0.0),
    short_first: np.ndarray | None = None,
) -> np.ndarray:
    """Order quadrilateral corners TL, TR, BR, BL of the card in portrait orientation.

    The corners are first put in clockwise order on screen (y down); the long sides are found
    through the perspective (see :func:`rect_ratio`); the TL-TR edge is the short edge whose
    midpoint has the smaller ``y + 0.05 x`` (the higher one; for a card lying near horizontal,
    the left one), and TL is its first corner going clockwise.

    Args:
        quads: (N, 4, 2) corner coordinates in pixels, any order.
        focal: assumed focal length in pixels for the perspective correction (None: treat the
            quadrilateral as a parallelogram, i.e. compare opposite side lengths).
        centre: principal point (x, y) in pixels, used with ``focal``.
        short_first: (N,) bool, optional: the quad's edge from its corner 0 to corner 1 is
            known to be a short edge (a card placed from its symbols, which lie along the short
            edges: a card seen steeply foreshortened can look wider than tall).

    Returns:
        (N, 4, 2) float32, reordered copy.
    """
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    known = np.zeros(len(q), dtype=bool) if short_first is None else np.asarray(short_first)
    mid = q.mean(axis=1, keepdims=True)
    angles = np.arctan2(q[..., 1] - mid[..., 1], q[..., 0] - mid[..., 0])
    orders = np.argsort(angles, axis=1)  # increasing angle = clockwise on screen (y down)
    for i in np.flatnonzero(known):  # keep edge 0-1 an edge 0-1 (a cyclic shift by an even
        order = orders[i]  # step, or reversed)
        order = np.roll(order, -int(np.flatnonzero(order == 0)[0]))
        if order[1] != 1:
            order = np.roll(order, -1) if order[3] == 1 else order
        orders[i] = order
    out = np.take_along_axis(q, orders[..., None], axis=1)
    ratio = rect_ratio(
        out, focal, np.asarray(centre, dtype=np.float64)
    )  # width(0->1) / height(1->2)
    # Make edge 0->1 a short edge.
    roll = np.where(known, False, ratio > 1.0)
    out[roll] = np.roll(out[roll], -1, axis=1)
    # Of the two short edges (0-1 and 2-3), the top one has the smaller midpoint y; for a card
    # lying within ~3 degrees of horizontal the left one wins (the 0.05 x term).
    key = out[..., 1] + 0.05 * out[..., 0]
    top01 = (key[:, 0] + key[:, 1]) <= (key[:, 2] + key[:, 3])
    flip = ~top01
    out[flip] = np.roll(out[flip], -2, axis=1)
    return out.astype(np.float32)


def rect_ratio(
    quads: np.ndarray, focal: float | None, centre: npt.NDArray[np.floating]
) -> np.ndarray:
    """Width/height of the rectangle seen as each clockwise quad (TL, TR, BR, BL) (N,).

    Width is along corner 0 -> 1, height along 1 -> 2. With a focal length (pixels) and the
    principal point ``centre``, the perspective is undone (Zhang & He 2007, eq. 21); without one,
    opposite sides are averaged.
    """
    q = np.asarray(quads, dtype=np.float64)
    if focal is None:
        w = np.linalg.norm(q[:, 1] - q[:, 0], axis=1) + np.linalg.norm(q[:, 2] - q[:, 3], axis=1)
        h = np.linalg.norm(q[:, 2] - q[:, 1], axis=1) + np.linalg.norm(q[:, 3] - q[:, 0], axis=1)
        return w / np.maximum(h, 1e-9)
    p = (q - centre) / focal  # normalised camera coordinates (x, y, 1)
    x1, x2, x4, x3 = p[..., 0].T  # paper numbering: m4 is BR
    y1, y2, y4, y3 = p[..., 1].T
    # Cross and dot products of (x, y, 1) vectors written out (np.cross and einsum on (N, 3)
    # arrays cost ~3x as much for these few quads).
    c14 = (y1 - y4, x4 - x1, x1 * y4 - x4 * y1)
    c24 = (y2 - y4, x4 - x2, x2 * y4 - x4 * y2)
    c34 = (y3 - y4, x4 - x3, x3 * y4 - x4 * y3)

    def dot(c: tuple, xa: np.ndarray, ya: np.ndarray) -> np.ndarray:
        return c[0] * xa + c[1] * ya + c[2]

    k2 = dot(c14, x3, y3) / _nz(dot(c24, x3, y3))
    k3 = dot(c14, x2, y2) / _nz(dot(c34, x2, y2))
    n2 = (k2 * x2 - x1) ** 2 + (k2 * y2 - y1) ** 2 + (k2 - 1.0) ** 2
    n3 = (k3 * x3 - x1) ** 2 + (k3 * y3 - y1) ** 2 + (k3 - 1.0) ** 2
    return np.sqrt(n2 / np.maximum(n3, 1e-18))


def _nz(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 1e-12, 1e-12, x)


def points_in_quads(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N, M) bool: point m lies inside convex clockwise quad n."""
    if len(points) == 0 or len(quads) == 0:
        return np.zeros((len(quads), len(points)), dtype=bool)
    a = quads[:, None, :, :]  # (N,1,4,2)
    b = quads[:, NEXT][:, None, :, :]
    p = points[None, :, None, :]  # (1,M,1,2)
    cross = (b[..., 0] - a[..., 0]) * (p[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (
        p[..., 0] - a[..., 0]
    )
    return (cross >= 0).all(axis=2)


#: Corner indices of the next and the previous corner (np.roll by -1 and 1, as an index:
#: several times cheaper on small arrays).
NEXT: Final = np.array([1, 2, 3, 0])
PREV: Final = np.array([3, 0, 1, 2])


def quad_area(quads: np.ndarray) -> np.ndarray:
    """Area of each quad (..., 4, 2) by the shoelace formula."""
    x, y = quads[..., 0], quads[..., 1]
    return 0.5 * np.abs((x * y[..., NEXT] - x[..., NEXT] * y).sum(axis=-1))


def side_frames(
    quads: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each side of each quad as start and end points, unit direction, length, outward normal.

    Args:
        quads: (N, 4, 2) float clockwise quads (screen coordinates, y down); side i runs from
            corner i to corner i + 1.

    Returns:
        ``(start, end, direction, length, normal)``: (4N, 2), (4N, 2), (4N, 2), (4N,), (4N, 2)
        float64, side ``4 n + i`` for side i of quad n; the normal points out of a clockwise
        quad.
    """
    start = quads.reshape(-1, 2)
    end = np.roll(quads, -1, axis=1).reshape(-1, 2)
    d = end - start
    length = np.maximum(np.linalg.norm(d, axis=1), 1e-9)
    d = d / length[:, None]
    return start, end, d, length, np.stack([d[:, 1], -d[:, 0]], axis=1)


def per_side(values: np.ndarray | float, n: int) -> np.ndarray:
    """(4n,) float64 one value per side of n quads, from a scalar, (n,) or (n, 4)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 2:
        return values.reshape(-1)
    return np.repeat(np.broadcast_to(values, (n,)), 4)


def intersect_sides(point: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """(N, 4, 2) corners: corner i where side i-1 meets side i (lines as point + direction);
    NaN where two sides are parallel."""
    p1, d1 = point[:, PREV], direction[:, PREV]
    p2, d2 = point, direction
    det = d1[..., 0] * (-d2[..., 1]) + d1[..., 1] * d2[..., 0]
    rhs = p2 - p1
    t = (rhs[..., 0] * (-d2[..., 1]) + rhs[..., 1] * d2[..., 0]) / np.where(
        np.abs(det) < 1e-9, np.nan, det
    )
    return p1 + t[..., None] * d1
