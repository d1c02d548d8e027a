"""Find SET cards in a BGR frame: one quadrilateral per card, corners in frame pixels.

How it works (contour-based, OpenCV only):

1. The frame is shrunk by an integer factor to a working size (long side about 1000 px).
2. Candidate regions come from several binary masks of the "whiteness" image (the per-pixel
   minimum of B, G, R: white paper is bright in every channel, wood, cloth, felt and coloured
   symbols are not): global thresholds around Otsu's level, a local (adaptive) threshold for
   uneven light, each also cut along Canny edges so that cards touching a neighbour or lying on
   a white desk separate along their visible edge, and the regions enclosed by edges alone.
3. Each region's outline gets a four-sided fit (``cv2.approxPolyN``), refined by fitting lines to
   the straight parts of the outline (rounded corners excluded): corners are where the card's
   straight edges meet.
4. Each quadrilateral is scored: the card's aspect ratio recovered through the perspective
   (57 x 89 mm; Zhang & He, "Whiteboard scanning and image enhancement", 2007, with an assumed
   focal length), how well the outline fills it, a white low-saturation paper border, and some
   ink (symbols) inside. A candidate that holds two or more card-sized candidates (two touching
   cards seen as one) is dropped; overlapping candidates keep the best one.
5. Corners are refined on the full-resolution frame by locating the card's edge along short
   profiles across each side and fitting a line, so crops of 12 MP photos stay sharp.

Cards cut by the frame edge are reported with ``partial=True`` only when enough of them is
visible for three straight sides and most of the fourth; the corners then extrapolate the card
outside the frame. Cards covered by another card are reported only when their outline still
looks like a whole card (the top card is always the one found).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.warp import CARD_ASPECT

__all__ = ["CardDetections", "MIN_SCORE", "WORK_LONG_SIDE", "find_cards", "order_corners"]

#: Target long side of the working image in pixels (the frame is shrunk by an integer factor).
WORK_LONG_SIDE: Final = 1024
#: Detections scoring below this are dropped.
MIN_SCORE: Final = 0.5

_LONG_OVER_SHORT: Final = 1.0 / CARD_ASPECT  # 89 / 57 = 1.561
_MIN_CARD_AREA: Final = 500.0  # working pixels: about 18 x 28 px, too small to read below that
_MAX_CARD_FRACTION: Final = 0.9  # of the working image area


@dataclass(frozen=True)
class CardDetections:
    """Cards found in one frame.

    Attributes:
        corners: (N, 4, 2) float32 pixel coordinates (x, y) in the frame, ordered TL, TR, BR, BL
            of the card in portrait orientation (long side vertical): clockwise on screen, the
            TL-TR edge is the short edge whose midpoint is higher in the image (smaller
            ``y + 0.05 x``, so the left one for a card lying near horizontal). A
            partial card's corners may lie outside the frame.
        scores: (N,) float32 in [0, 1], confidence that the quadrilateral is a whole SET card.
        partial: (N,) bool, True for a card cut by the frame edge.
    """

    corners: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]
    partial: npt.NDArray[np.bool_]

    def __post_init__(self) -> None:
        corners = np.asarray(self.corners)
        if corners.ndim != 3 or corners.shape[1:] != (4, 2) or corners.dtype != np.float32:
            raise ValueError(
                f"corners: expected (N, 4, 2) float32, got {corners.shape} {corners.dtype}"
            )
        n = len(corners)
        scores = np.asarray(self.scores)
        if scores.shape != (n,) or scores.dtype != np.float32:
            raise ValueError(f"scores: expected ({n},) float32, got {scores.shape} {scores.dtype}")
        if n and (np.nanmin(scores) < 0.0 or np.nanmax(scores) > 1.0 or np.isnan(scores).any()):
            raise ValueError("scores: expected values in [0, 1]")
        partial = np.asarray(self.partial)
        if partial.shape != (n,) or partial.dtype != np.bool_:
            raise ValueError(f"partial: expected ({n},) bool, got {partial.shape} {partial.dtype}")
        if not np.isfinite(corners).all():
            raise ValueError("corners: expected finite values")

    @classmethod
    def empty(cls) -> CardDetections:
        """No cards."""
        return cls(np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32), np.zeros(0, np.bool_))

    def __len__(self) -> int:
        return len(self.corners)

    def whole(self) -> CardDetections:
        """Only the cards not cut by the frame edge."""
        keep = ~self.partial
        return CardDetections(self.corners[keep], self.scores[keep], self.partial[keep])


# --------------------------------------------------------------------------------------------
# geometry helpers


def order_corners(
    quads: npt.NDArray[np.floating],
    focal: float | None = None,
    centre: tuple[float, float] = (0.0, 0.0),
) -> np.ndarray:
    """Order quadrilateral corners TL, TR, BR, BL of the card in portrait orientation.

    The corners are first put in clockwise order on screen (y down); the long sides are found
    through the perspective (see :func:`_rect_ratio`); the TL-TR edge is the short edge whose
    midpoint has the smaller ``y + 0.05 x`` (the higher one; for a card lying near horizontal,
    the left one), and TL is its first corner going clockwise.

    Args:
        quads: (N, 4, 2) corner coordinates in pixels, any order.
        focal: assumed focal length in pixels for the perspective correction (None: treat the
            quadrilateral as a parallelogram, i.e. compare opposite side lengths).
        centre: principal point (x, y) in pixels, used with ``focal``.

    Returns:
        (N, 4, 2) float32, reordered copy.
    """
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    out = np.empty_like(q)
    for i, quad in enumerate(q):
        centre = quad.mean(axis=0)
        angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
        out[i] = quad[np.argsort(angles)]  # increasing angle = clockwise on screen (y down)
    ratio = _rect_ratio(
        out, focal, np.asarray(centre, dtype=np.float64)
    )  # width(0->1) / height(1->2)
    # Make edge 0->1 a short edge.
    roll = ratio > 1.0
    out[roll] = np.roll(out[roll], -1, axis=1)
    # Of the two short edges (0-1 and 2-3), the top one has the smaller midpoint y; for a card
    # lying within ~3 degrees of horizontal the left one wins (the 0.05 x term).
    key = out[..., 1] + 0.05 * out[..., 0]
    top01 = (key[:, 0] + key[:, 1]) <= (key[:, 2] + key[:, 3])
    flip = ~top01
    out[flip] = np.roll(out[flip], -2, axis=1)
    return out.astype(np.float32)


def _rect_ratio(
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
    p = q - centre
    ones = np.ones(p.shape[:2] + (1,))
    m = np.concatenate([p / focal, ones], axis=2)  # normalised camera coordinates
    m1, m2, m4, m3 = m[:, 0], m[:, 1], m[:, 2], m[:, 3]  # paper numbering: m4 is BR
    c14 = np.cross(m1, m4)
    k2 = np.einsum("ij,ij->i", c14, m3) / _nz(np.einsum("ij,ij->i", np.cross(m2, m4), m3))
    k3 = np.einsum("ij,ij->i", c14, m2) / _nz(np.einsum("ij,ij->i", np.cross(m3, m4), m2))
    n2 = k2[:, None] * m2 - m1
    n3 = k3[:, None] * m3 - m1
    return np.sqrt((n2**2).sum(axis=1) / np.maximum((n3**2).sum(axis=1), 1e-18))


def _nz(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 1e-12, 1e-12, x)


def _points_in_quads(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N, M) bool: point m lies inside convex clockwise quad n."""
    if len(points) == 0 or len(quads) == 0:
        return np.zeros((len(quads), len(points)), dtype=bool)
    a = quads[:, None, :, :]  # (N,1,4,2)
    b = np.roll(quads, -1, axis=1)[:, None, :, :]
    p = points[None, :, None, :]  # (1,M,1,2)
    cross = (b[..., 0] - a[..., 0]) * (p[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (
        p[..., 0] - a[..., 0]
    )
    return (cross >= 0).all(axis=2)


def _quad_area(quads: np.ndarray) -> np.ndarray:
    x, y = quads[..., 0], quads[..., 1]
    return 0.5 * np.abs((x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y).sum(axis=-1))


def _line_intersections(lines: np.ndarray) -> np.ndarray | None:
    """Corners from 4 lines (point, direction) in order: corner i = line i-1 x line i."""
    corners = np.empty((4, 2))
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        det = d1[0] * (-d2[1]) - d1[1] * (-d2[0])
        if abs(det) < 1e-6:
            return None
        rhs = p2 - p1
        t = (rhs[0] * (-d2[1]) - rhs[1] * (-d2[0])) / det
        corners[i] = p1 + t * d1
    return corners


# --------------------------------------------------------------------------------------------
# working image and candidate masks


def _shrink(frame: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.uint8], int]:
    """Working image (integer factor k, area-averaged) and k."""
    h, w = frame.shape[:2]
    k = max(1, round(max(h, w) / WORK_LONG_SIDE))
    if k == 1:
        return frame, 1
    hh, ww = h // k, w // k
    src = frame[: hh * k, : ww * k]
    if k >= 3 and k % 2 == 0:
        # Two fast integer steps beat one general INTER_AREA resize by ~3x on 12 MP photos.
        half = cv2.resize(src, (ww * 2, hh * 2), interpolation=cv2.INTER_LINEAR)
        return cv2.resize(half, (ww, hh), interpolation=cv2.INTER_AREA), k
    if k >= 3:
        half = cv2.resize(src, (ww * 2, hh * 2), interpolation=cv2.INTER_LINEAR)
        return cv2.resize(half, (ww, hh), interpolation=cv2.INTER_AREA), k
    return cv2.resize(src, (ww, hh), interpolation=cv2.INTER_AREA), k


def _masks(small: npt.NDArray[np.uint8]) -> list[np.ndarray]:
    """Binary candidate masks (uint8 0/255) of the working image.

    Whiteness thresholds (global, around Otsu's level, and local) find paper on darker or
    coloured surfaces; the same masks cut along edges and along thin dark lines (the seam
    between two touching cards, found by a black-hat filter) separate touching cards; the
    regions enclosed by edges alone find cards on white desks.
    """
    white = cv2.min(cv2.min(small[..., 0], small[..., 1]), small[..., 2])
    white = cv2.GaussianBlur(white, (3, 3), 0)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    h, w = white.shape
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    hi = float(np.percentile(white[::4, ::4], 99))
    levels = sorted({int(otsu), int((otsu + hi) / 2), int(otsu * 0.75 + 0.25 * hi) - 20})
    masks = [cv2.threshold(white, t, 255, cv2.THRESH_BINARY)[1] for t in levels if 0 < t < 250]
    block = (max(h, w) // 6) | 1
    masks.append(
        cv2.adaptiveThreshold(white, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, -10)
    )
    edges = cv2.Canny(cv2.GaussianBlur(grey, (5, 5), 0), 20, 50, L2gradient=True)
    seams = cv2.morphologyEx(white, cv2.MORPH_BLACKHAT, np.ones((7, 7), np.uint8))
    cuts = cv2.bitwise_or(edges, cv2.threshold(seams, 7, 255, cv2.THRESH_BINARY)[1])
    cuts = cv2.dilate(cuts, np.ones((3, 3), np.uint8))
    keep = cv2.bitwise_not(cuts)
    return masks + [cv2.bitwise_and(m, keep) for m in masks] + [keep]


# --------------------------------------------------------------------------------------------
# candidate quads


def _clockwise(quad: np.ndarray) -> np.ndarray:
    x, y = quad[:, 0], quad[:, 1]
    signed = (x * np.roll(y, -1) - np.roll(x, -1) * y).sum()
    return quad if signed > 0 else quad[::-1].copy()


def _fit_quad(contour: np.ndarray, area: float) -> tuple[np.ndarray, float] | None:
    """Clockwise quad (4,2) float64 fitted to a region outline, and the fill ratio."""
    hull = cv2.convexHull(contour)
    if len(hull) < 4:
        return None
    approx = cv2.approxPolyN(hull, 4, epsilon_percentage=-1.0, ensure_convex=True)
    if approx is None or approx.size != 8:
        return None
    quad = _clockwise(approx.reshape(4, 2).astype(np.float64))
    points = contour.reshape(-1, 2).astype(np.float64)
    for _ in range(2):
        refined = _fit_sides(points, quad)
        if refined is None:
            break
        quad = refined
    quad_area = float(_quad_area(quad))
    if quad_area <= 0:
        return None
    return quad, area / quad_area


def _fit_sides(points: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """Refit each side of ``quad`` to the outline points near it, away from the corners."""
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        length = float(np.hypot(d[0], d[1]))
        if length < 4:
            return None
        d = d / length
        rel = points - a
        t = rel @ d
        dist = np.abs(rel[:, 0] * d[1] - rel[:, 1] * d[0])
        sel = (t > 0.15 * length) & (t < 0.85 * length) & (dist < 2.0 + 0.03 * length)
        if np.count_nonzero(sel) < 2:
            return None
        vx, vy, x0, y0 = cv2.fitLine(points[sel].astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01)
        lines.append((np.array([x0[0], y0[0]]), np.array([vx[0], vy[0]])))
    corners = _line_intersections(lines)
    if corners is None or np.abs(corners - quad).max() > 0.25 * np.sqrt(_quad_area(quad)):
        return None
    return _clockwise(corners)


def _is_cut(quad: np.ndarray, w: int, h: int, tol: float = 3.0) -> bool:
    """True if a side of ``quad`` runs along the image border (the region is clipped)."""
    x, y = quad[:, 0], quad[:, 1]
    near = np.stack([x < tol, y < tol, x > w - 1 - tol, y > h - 1 - tol])  # (4 borders, 4 pts)
    return bool((near & np.roll(near, -1, axis=1)).any())


def _candidates(masks: list[np.ndarray], min_area: float, max_area: float) -> list[tuple]:
    """(quad, fill, touches_border) for every region outline that is roughly four-sided."""
    h, w = masks[0].shape
    out = []
    seen: set[tuple[int, int, int, int]] = set()
    for mask in masks:
        contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
        if hierarchy is None:
            continue
        for contour, link in zip(contours, hierarchy[0]):
            if link[3] != -1:
                continue  # a hole
            x, y, bw, bh = cv2.boundingRect(contour)
            if bw * bh < min_area or bw * bh > 2.5 * max_area:
                continue
            key = (x // 3, y // 3, (x + bw) // 3, (y + bh) // 3)
            if key in seen:
                continue
            seen.add(key)
            area = cv2.contourArea(contour)
            if area < min_area or area > max_area:
                continue
            (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
            if area < 0.7 * rw * rh or max(rw, rh) > 4.0 * min(rw, rh):
                continue
            fit = _fit_quad(contour, area)
            if fit is None:
                continue
            quad, fill = fit
            if fill < 0.8:
                continue
            touches = x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1
            out.append((quad, fill, touches and _is_cut(quad, w, h)))
    return out


# --------------------------------------------------------------------------------------------
# scoring


_PROBE_W, _PROBE_H = 40, 62


def _probe_scores(small: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Paper and content scores (N,) in [0, 1] from a tiny warp of each quad."""
    n = len(quads)
    paper = np.zeros(n)
    content = np.zeros(n)
    target = np.array(
        [[0, 0], [_PROBE_W - 1, 0], [_PROBE_W - 1, _PROBE_H - 1], [0, _PROBE_H - 1]], np.float32
    )
    yy, xx = np.mgrid[0:_PROBE_H, 0:_PROBE_W]
    fx, fy = xx / (_PROBE_W - 1), yy / (_PROBE_H - 1)
    inner = (fx > 0.13) & (fx < 0.87) & (fy > 0.1) & (fy < 0.9)
    band = ~inner & (fx > 0.04) & (fx < 0.96) & (fy > 0.03) & (fy < 0.97)
    kernel = np.ones((7, 7), np.uint8)
    wide = _rect_ratio(quads, None, np.zeros(2)) > 1.0
    quads = np.where(wide[:, None, None], np.roll(quads, -1, axis=1), quads)  # short edge first
    for i, quad in enumerate(quads):
        hom = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
        probe = cv2.warpPerspective(small, hom, (_PROBE_W, _PROBE_H), flags=cv2.INTER_LINEAR)
        lum8 = probe.min(axis=2)
        ref = np.median(probe[band], axis=0)
        lo, hi = float(ref.min()), float(ref.max())
        sat = (hi - lo) / max(hi, 1.0)
        # Paper: bright enough and near neutral (a warm cast allowed).
        paper[i] = _ramp(lo, 40, 90) * _ramp(-sat, -0.55, -0.3)
        # Ink: darker than the paper around it (a local reference, so a shadow across the card
        # cancels) or more colourful than the paper.
        # A closing fills thin dark strokes (outlines, stripes) but keeps the step of a shadow
        # edge, so ``rel`` is low on strokes only; solid symbols are caught by their colour.
        local = cv2.morphologyEx(lum8, cv2.MORPH_CLOSE, kernel).astype(np.float32)
        lum = lum8.astype(np.float32)
        rel = lum / np.maximum(local, 1.0)
        top = probe.max(axis=2).astype(np.float32)
        chroma = (top - lum) / np.maximum(top, 1.0)
        ink = (rel < 0.86) | (chroma > max(0.3, sat + 0.18)) | (lum < 0.45 * lo)
        band_ink = float(ink[band].mean())
        inner_ink = float(ink[inner].mean())
        content[i] = _ramp(inner_ink, 0.003, 0.012) * _ramp(-inner_ink, -0.9, -0.75)
        content[i] *= _ramp(-band_ink, -0.3, -0.12)
    return paper, content


def _ramp(x: float | np.ndarray, lo: float, hi: float) -> float | np.ndarray:
    """0 below ``lo``, 1 above ``hi``, linear between."""
    return np.clip((np.asarray(x, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)


def _aspect_score(quads: np.ndarray, focal: float, centre: np.ndarray) -> np.ndarray:
    """How card-shaped each quad is (N,) in [0, 1].

    The better of two estimates of the long/short side ratio: opposite sides averaged (exact
    for a card seen head-on, robust to corner noise) and the perspective-corrected ratio
    (right for tilted views, but noisy for small quads).
    """
    best = np.zeros(len(quads))
    for f in (None, focal):
        ratio = _rect_ratio(quads, f, centre)
        long_short = np.maximum(ratio, 1.0 / np.maximum(ratio, 1e-9))
        err = np.abs(np.log(long_short / _LONG_OVER_SHORT))
        best = np.maximum(best, _ramp(-err, -0.22, -0.1))
    return best


# --------------------------------------------------------------------------------------------
# selection


def _select(quads: np.ndarray, scores: np.ndarray, min_member: float | None = None) -> np.ndarray:
    """Indices of the kept candidates: no composites, no nesting, no duplicates.

    ``min_member``: smallest area (working pixels) of a candidate that can make a larger one a
    composite of several cards (None: 3 % of the larger one).
    """
    if len(quads) == 0:
        return np.zeros(0, dtype=int)
    areas = _quad_area(quads)
    centres = quads.mean(axis=1)
    inside = _points_in_quads(centres, quads)  # [i, j]: centre j inside quad i
    np.fill_diagonal(inside, False)
    # A composite holds the centres of >= 2 clearly smaller, mutually separate candidates.
    composite = np.zeros(len(quads), dtype=bool)
    for i in range(len(quads)):
        floor = 0.03 * areas[i] if min_member is None else min_member
        members = np.flatnonzero(inside[i] & (areas < 0.75 * areas[i]) & (areas > floor))
        if len(members) < 2:
            continue
        sub = inside[np.ix_(members, members)]
        separate = ~(sub | sub.T)
        if separate.any():
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
            # A part of a card (the lit half, the paper inside a printed border) scores like the
            # card: prefer the larger of two nested candidates unless it scores much worse.
            j = clash[0]
            if areas[i] > 1.15 * areas[j] and scores[i] >= 0.7 * scores[j]:
                kept[kept.index(j)] = int(i)
    return np.array(kept, dtype=int)


def _dedupe(quads: np.ndarray, pre: np.ndarray) -> np.ndarray:
    """Indices keeping the best of near-identical quads (same centre and area), best first."""
    order = np.argsort(-pre, kind="stable")
    centres = quads.mean(axis=1)
    areas = _quad_area(quads)
    kept: list[int] = []
    for i in order:
        if kept:
            idx = np.array(kept)
            near = np.hypot(*(centres[idx] - centres[i]).T) < 0.05 * np.sqrt(areas[i]) + 1.0
            if (near & (np.abs(np.log(areas[idx] / areas[i])) < 0.06)).any():
                continue
        kept.append(int(i))
    return np.array(kept, dtype=int)


def _grid_split(
    quad: np.ndarray, focal: float, centre: np.ndarray, count: float | None
) -> list[np.ndarray]:
    """Cells of ``quad`` (a x b grid, perspective-correct) whose shape is a card's.

    ``count`` is the expected number of cards (area over the median card area) or None; the
    smallest fitting grid of 2 to 24 cells is used when it is unknown.
    """
    ratio = float(_rect_ratio(quad[None], focal, centre)[0])  # edge 0-1 over edge 1-2
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


# --------------------------------------------------------------------------------------------
# full-resolution refinement


def _refine(frame: np.ndarray, quads: np.ndarray, k: int) -> np.ndarray:
    """Snap each side to the strongest nearby edge in the full-resolution frame (two passes)."""
    short = np.minimum(
        np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1),
        np.linalg.norm(quads[:, 2] - quads[:, 1], axis=1),
    )
    reach = np.minimum(3.0 * k + 4.0, np.maximum(0.07 * short, 2.0))
    quads = _refine_pass(frame, quads, reach)
    return _refine_pass(frame, quads, np.maximum(reach / 2, 2.0))


def _refine_pass(frame: np.ndarray, quads: np.ndarray, reaches: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    out = quads.copy()
    n_samples = 24
    for c, quad in enumerate(quads):
        reach = float(reaches[c])
        offsets = np.arange(-reach, reach + 0.25, 0.5)
        lines = []
        for i in range(4):
            a, b = quad[i], quad[(i + 1) % 4]
            d = b - a
            length = float(np.hypot(*d))
            d /= max(length, 1e-9)
            normal = np.array([d[1], -d[0]])  # outward for a clockwise quad (y down)
            t = np.linspace(0.15, 0.85, n_samples) * length
            base = a[None, :] + t[:, None] * d[None, :]
            pts = base[:, None, :] + offsets[None, :, None] * normal[None, None, :]
            map_x = pts[..., 0].astype(np.float32)
            map_y = pts[..., 1].astype(np.float32)
            prof = cv2.remap(frame, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            prof = prof.astype(np.float32).min(axis=2)
            grad = np.abs(np.gradient(prof, axis=1))
            grad *= np.exp(-0.5 * (offsets / (0.6 * reach)) ** 2)[None, :]
            best = grad.argmax(axis=1)
            valid = (best > 0) & (best < len(offsets) - 1)
            inb = (
                (pts[:, 0, 0] >= 0) & (pts[:, 0, 0] < w) & (pts[:, 0, 1] >= 0) & (pts[:, 0, 1] < h)
            )
            valid &= inb & (grad.max(axis=1) > 4.0)
            if valid.sum() < n_samples // 3:
                lines.append(None)
                continue
            idx = np.flatnonzero(valid)
            g0, g1, g2 = grad[idx, best[idx] - 1], grad[idx, best[idx]], grad[idx, best[idx] + 1]
            denom = g0 - 2 * g1 + g2
            sub = np.where(
                np.abs(denom) > 1e-6, 0.5 * (g0 - g2) / np.where(denom == 0, 1, denom), 0
            )
            off = offsets[best[idx]] + np.clip(sub, -0.5, 0.5) * 0.5
            edge_pts = base[idx] + off[:, None] * normal[None, :]
            vx, vy, x0, y0 = cv2.fitLine(
                edge_pts.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01
            ).ravel()
            lines.append((np.array([x0, y0], dtype=np.float64), np.array([vx, vy], np.float64)))
        if any(line is None for line in lines):
            continue
        corners = _line_intersections(lines)
        if corners is not None and np.abs(corners - quad).max() < 3 * reach:
            out[c] = corners
    return out


# --------------------------------------------------------------------------------------------
# entry point


def find_cards(frame: npt.NDArray[np.uint8], *, min_score: float = MIN_SCORE) -> CardDetections:
    """Find every SET card in a frame.

    Args:
        frame: BGR uint8 image, shape (H, W, 3), any size (12-16 MP photos are worked on at about
            1000 px and refined at full resolution).
        min_score: drop detections scoring below this (0..1).

    Returns:
        :class:`CardDetections` in frame pixels; ``CardDetections.empty()`` when none is found.

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
    small, k = _shrink(frame)
    sh, sw = small.shape[:2]
    masks = _masks(small)
    cands = _candidates(masks, _MIN_CARD_AREA, _MAX_CARD_FRACTION * sh * sw)
    if not cands:
        return CardDetections.empty()
    quads = np.array([c[0] for c in cands], dtype=np.float64)
    fill = np.array([c[1] for c in cands])
    border = np.array([c[2] for c in cands])
    focal = 0.85 * max(sh, sw)
    centre = np.array([sw / 2.0, sh / 2.0])
    pre = _aspect_score(quads, focal, centre) * _ramp(fill, 0.8, 0.92) * ~border
    order = _dedupe(quads, pre)
    quads, fill, border, pre = quads[order], fill[order], border[order], pre[order]
    good = pre > 0.2
    scores = np.zeros(len(quads))
    if good.any():
        paper, content = _probe_scores(small, quads[good])
        scores[good] = pre[good] * paper * content
    single = scores >= min_score
    kept = _select(quads[single], scores[single])
    areas = _quad_area(quads)
    median = float(np.median(areas[single][kept])) if len(kept) else None
    # Touching cards whose seam is invisible: split card-grid shaped regions into cells.
    parents = (fill >= 0.88) & ~border
    if median is not None:
        parents &= areas > 1.6 * median
    children = [
        cell
        for quad in quads[parents]
        for cell in _grid_split(
            quad, focal, centre, None if median is None else float(_quad_area(quad)) / median
        )
    ]
    if children:
        cells = np.array(children)
        paper, content = _probe_scores(small, cells)
        cell_scores = 0.95 * _aspect_score(cells, focal, centre) * paper * content
        ok = cell_scores >= min_score
        if median is not None:
            cell_areas = _quad_area(cells)
            ok &= (cell_areas > 0.6 * median) & (cell_areas < 1.6 * median)
        # A cell may not overlap a card already found.
        singles = quads[single][kept]
        clash = _points_in_quads(cells.mean(axis=1), singles).any(axis=0)
        clash |= _points_in_quads(singles.mean(axis=1), cells).any(axis=1)
        ok &= ~clash
        quads = np.concatenate([quads[single], cells[ok]])
        scores = np.concatenate([scores[single], cell_scores[ok]])
        kept = _select(quads, scores, None if median is None else 0.4 * median)
    else:
        quads, scores = quads[single], scores[single]
    quads, scores = quads[kept], scores[kept]
    full = (quads + 0.5) * k - 0.5
    full = _refine(frame, full, k)
    full = order_corners(full, focal=focal * k, centre=(frame.shape[1] / 2, frame.shape[0] / 2))
    return CardDetections(
        full.astype(np.float32), scores.astype(np.float32), np.zeros(len(full), dtype=bool)
    )
