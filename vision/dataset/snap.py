"""Snap a card's sides onto the paper edge nearby: hand-placed or dragged corners need only be
roughly right.

Moved here from ``scripts/label.py`` (where the project's own annotations were made with it, see
``datasets/detection/README.md``) for the review page of ``setvision label``: a person drags a
corner near the card's and presses a key to snap its sides.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from vision.evaluation import canonical_order

__all__ = ["intersect_lines", "line_through", "snap_quad"]


def line_through(points: npt.NDArray[np.float64]) -> tuple[np.ndarray, np.ndarray]:
    """A robust (Huber) line through (N, 2) points: (a point on it, its unit direction)."""
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    return np.array([x0, y0], dtype=np.float64), np.array([vx, vy], dtype=np.float64)


def intersect_lines(
    p: np.ndarray, d: np.ndarray, q: np.ndarray, e: np.ndarray
) -> np.ndarray | None:
    """Where the line through ``p`` along ``d`` meets the one through ``q`` along ``e``; None
    for (nearly) parallel lines."""
    mat = np.array([[d[0], -e[0]], [d[1], -e[1]]])
    if abs(np.linalg.det(mat)) < 1e-6:
        return None
    t, _ = np.linalg.solve(mat, q - p)
    return p + t * d


def snap_quad(
    image: npt.NDArray[np.uint8],
    corners: npt.ArrayLike,
    radius: float | None = None,
    iterations: int = 3,
) -> npt.NDArray[np.float64]:
    """Move each side of a card quadrilateral onto the paper edge nearby.

    For each side, the middle 70% (away from the rounded corners) is sampled at right angles to
    the side; at each sample the strongest drop in brightness going outwards (paper to table)
    within ``radius`` pixels is located to a sub-pixel, a line is fitted through those points
    (Huber), and the new corners are where adjacent lines meet: the card's virtual sharp corners.
    A side with too few clear edge points is left where it was.

    Args:
        image: BGR uint8 photo.
        corners: (4, 2) approximate corners, TL, TR, BR, BL, clockwise on screen.
        radius: search distance in pixels (default: 6% of the short side, at least 6).
        iterations: refinement passes; the radius halves after each.

    Returns:
        (4, 2) float64 refined corners, canonically ordered.
    """
    quad = canonical_order(corners)
    blurred = cv2.GaussianBlur(image, (0, 0), 1.0).astype(np.float32)
    short = float(min(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[1] - quad[2])))
    r = radius if radius is not None else max(6.0, 0.06 * short)
    for _ in range(iterations):
        lines: list[tuple[np.ndarray, np.ndarray] | None] = []
        for i in range(4):
            p0, p1 = quad[i], quad[(i + 1) % 4]
            length = float(np.linalg.norm(p1 - p0))
            if length < 8:
                lines.append(None)
                continue
            d = (p1 - p0) / length
            n_out = np.array([d[1], -d[0]])
            ts = np.linspace(0.15, 0.85, max(8, int(length * 0.7 / 3)))
            ss = np.arange(-r, r + 0.5, 0.5)
            base = p0[None, :] + ts[:, None] * (p1 - p0)[None, :]
            pts = base[:, None, :] + ss[None, :, None] * n_out[None, None, :]
            mapx = pts[..., 0].astype(np.float32)
            mapy = pts[..., 1].astype(np.float32)
            prof = cv2.remap(blurred, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            # (T, S, 3) colour along the outward normal; edge strength = colour gradient norm,
            # plus a bonus where it gets darker outwards (paper to table, the usual case).
            diff = prof[:, :-2] - prof[:, 2:]
            grad = np.zeros(prof.shape[:2], dtype=np.float32)
            grad[:, 1:-1] = np.linalg.norm(diff, axis=2) + 0.5 * np.maximum(diff.sum(axis=2), 0)
            k = np.argmax(grad, axis=1)
            strength = grad[np.arange(len(ts)), k]
            ok = (k > 0) & (k < len(ss) - 1) & (strength > 12.0)
            if ok.sum() < max(4, len(ts) // 4):
                lines.append(None)
                continue
            # Sub-pixel peak by a parabola through the three samples around the maximum.
            kk = k[ok]
            rows = np.nonzero(ok)[0]
            g0, g1, g2 = grad[rows, kk - 1], grad[rows, kk], grad[rows, kk + 1]
            denom = g0 - 2 * g1 + g2
            off = np.where(np.abs(denom) > 1e-6, 0.5 * (g0 - g2) / denom, 0.0).clip(-0.5, 0.5)
            s_edge = ss[kk] + off * 0.5
            edge_pts = base[rows] + s_edge[:, None] * n_out[None, :]
            lines.append(line_through(edge_pts))
        new = quad.copy()
        for i in range(4):
            prev_line, this_line = lines[(i - 1) % 4], lines[i]
            if prev_line is None or this_line is None:
                continue
            hit = intersect_lines(*prev_line, *this_line)
            if hit is not None and np.linalg.norm(hit - quad[i]) < 3 * r:
                new[i] = hit
        quad = canonical_order(new)
        r = max(3.0, r / 2)
    return quad
