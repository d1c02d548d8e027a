"""Find SET cards in a BGR frame: one quadrilateral per card, corners in frame pixels.

How it works (contour-based, OpenCV only):

1. The frame is shrunk by an integer factor to a working size (long side 640-1279 px).
2. Candidate regions come from three binary masks: an Otsu threshold of the "whiteness" image
   (the per-pixel minimum of B, G, R: white paper is bright in every channel; wood, cloth,
   felt and coloured symbols are not), the regions enclosed by edges (grey-level Canny edges,
   warmth (R - B) edges, and thin dark seams found by a black-hat filter, so cards touching a
   neighbour separate along their seam), and the regions enclosed by faint edges with their
   gaps closed. Open edge chains that run around most of a quad (a white card on a white
   desk shows three sides) give candidates through their convex hull.
3. Each outline gets a four-sided fit (``cv2.approxPolyN``). Each quad is scored: the card's
   aspect ratio (57 x 89 mm) directly and through the perspective (Zhang & He, "Whiteboard
   scanning and image enhancement", 2007, with an assumed focal length), corner angles, how
   well the outline fills it, a bright low-saturation paper border (no darker than 0.4 x the
   scene's other cards) and some ink (symbols) inside, lying across the card.
4. Selection: a candidate holding two or more separate card-sized candidates (touching cards
   seen as one) is dropped; of nested candidates the whole card beats its lit half, and a
   card beats the white frame around it (a tray cell). Touching cards nobody separated are
   split: a region shaped like an a x b grid of cards into cells, other regions between their
   two deepest notches. Inside a found quad with a white surround, an inset card is searched.
5. Corners: the sides are refitted to the straight parts of the outline (rounded corners
   excluded: corners are where the straight edges meet), then refined on the full-resolution
   frame by locating the edge along short profiles across each side and fitting a line, so
   crops of 12 MP photos stay sharp.

A card whose outline runs along the frame edge is reported with ``partial=True`` only while
what is visible still has a card's shape (it is cut by a few pixels); cards cut further are
left out. Cards covered by another card are reported only when their outline still looks like a
whole card (the top card is the one found).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.warp import CARD_ASPECT

__all__ = ["CardDetections", "MIN_SCORE", "WORK_LONG_SIDE", "find_cards", "order_corners"]

#: Smallest long side of the working image in pixels: the frame is shrunk by the largest
#: integer factor that keeps its long side at or above this.
WORK_LONG_SIDE: Final = 640
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


_NEXT: Final = np.array([1, 2, 3, 0])


def _quad_area(quads: np.ndarray) -> np.ndarray:
    """Area of each quad (..., 4, 2) by the shoelace formula."""
    x, y = quads[..., 0], quads[..., 1]
    return 0.5 * np.abs((x * y[..., _NEXT] - x[..., _NEXT] * y).sum(axis=-1))


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
    """Working image (the frame shrunk by an integer factor k, area-averaged) and k."""
    h, w = frame.shape[:2]
    k = max(1, int(max(h, w) / WORK_LONG_SIDE))
    if k == 1:
        return frame, 1
    hh, ww = h // k, w // k
    src = frame[: hh * k, : ww * k]  # exact multiples keep OpenCV on its fast integer path
    if k == 2:
        return cv2.resize(src, (ww, hh), interpolation=cv2.INTER_AREA), k
    # A general INTER_AREA resize of a 12 MP photo costs ~30 ms on one core; a bilinear step to
    # twice the target and an exact 2x area step cost ~10 ms and look the same at this scale.
    half = cv2.resize(src, (ww * 2, hh * 2), interpolation=cv2.INTER_LINEAR)
    return cv2.resize(half, (ww, hh), interpolation=cv2.INTER_AREA), k


def _masks(small: npt.NDArray[np.uint8]) -> tuple[list[np.ndarray], np.ndarray]:
    """Binary candidate masks (uint8 0/255) of the working image, and an edge map.

    A whiteness threshold (Otsu's level of the per-pixel channel minimum) finds paper on darker
    or coloured surfaces; the regions enclosed by edges and thin dark lines (the seam between
    two touching cards, found by a black-hat filter) separate touching cards and find cards on
    light surfaces and under uneven light; the regions enclosed by faint edges (gaps closed)
    find cards on white trays. The edge map (faint edges) is for outlines that do not close (a
    white card on a white desk shows three sides at best). Measured on the annotated photos,
    more threshold levels, a local (adaptive) threshold and the threshold mask cut by the edges
    added nothing.
    """
    white = cv2.min(cv2.min(small[..., 0], small[..., 1]), small[..., 2])
    white = cv2.GaussianBlur(white, (3, 3), 0)
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    _, paper = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    dx = cv2.Sobel(grey, cv2.CV_16S, 1, 0)
    dy = cv2.Sobel(grey, cv2.CV_16S, 0, 1)
    edges = cv2.Canny(dx, dy, 20, 50, L2gradient=True)
    faint = cv2.Canny(dx, dy, 10, 25, L2gradient=True)
    seams = cv2.morphologyEx(white, cv2.MORPH_BLACKHAT, _KERNEL7)
    cuts = cv2.bitwise_or(edges, cv2.threshold(seams, 7, 255, cv2.THRESH_BINARY)[1])
    # Warmth edges (R - B): cream paper on a bluish-white tray or desk differs in hue more
    # than in grey level.
    warm = cv2.addWeighted(small[..., 2], 0.5, small[..., 0], -0.5, 128.0)
    warm_edges = cv2.Canny(cv2.GaussianBlur(warm, (5, 5), 0), 15, 40, L2gradient=True)
    cuts = cv2.bitwise_or(cuts, warm_edges)
    keep = cv2.bitwise_not(cv2.dilate(cuts, _KERNEL3))
    closed = cv2.bitwise_not(cv2.dilate(faint, _KERNEL5))
    return [paper, keep, closed], cv2.dilate(faint, _KERNEL3)


_KERNEL3: Final = np.ones((3, 3), np.uint8)
_KERNEL5: Final = np.ones((5, 5), np.uint8)
_KERNEL7: Final = np.ones((7, 7), np.uint8)


# --------------------------------------------------------------------------------------------
# candidate quads


def _clockwise(quad: np.ndarray) -> np.ndarray:
    """The quad (4, 2) with its corners in clockwise screen order (y down)."""
    x, y = quad[:, 0], quad[:, 1]
    signed = (x * y[_NEXT] - x[_NEXT] * y).sum()
    return quad if signed > 0 else quad[::-1].copy()


def _fit_sides(points: np.ndarray, quad: np.ndarray, reach: float = 0.03) -> np.ndarray | None:
    """Refit each side of ``quad`` to the outline points near it (within 2 px + ``reach`` x
    the side's length), away from the corners; with a wide reach, the points nearest the
    side's median offset."""
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
        sel = (t > 0.15 * length) & (t < 0.85 * length) & (dist < 2.0 + reach * length)
        if np.count_nonzero(sel) < 2:
            return None
        if reach > 0.05:
            signed = rel[:, 0] * d[1] - rel[:, 1] * d[0]
            sel &= np.abs(signed - np.median(signed[sel])) < 2.0 + 0.02 * length
            if np.count_nonzero(sel) < 2:
                return None
        vx, vy, x0, y0 = cv2.fitLine(points[sel].astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01)
        lines.append((np.array([x0[0], y0[0]]), np.array([vx[0], vy[0]])))
    corners = _line_intersections(lines)
    if corners is None or np.abs(corners - quad).max() > 0.25 * np.sqrt(_quad_area(quad)):
        return None
    return _clockwise(corners)


def _candidates(
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
            found = _contour_candidate(contour, (w, h), min_area, max_area)
            if found is not None:
                out.append(found)
            elif blobs is not None and bw * bh >= 3 * min_area:
                area = cv2.contourArea(contour)
                hull_area = cv2.contourArea(cv2.convexHull(contour))
                if min_area * 2 <= area <= max_area and area >= 0.75 * hull_area:
                    blobs.append(contour)  # maybe touching cards: split at notches later
    if edges is not None:
        out += _outline_candidates(edges, min_area, max_area, seen)
    return out


def _contour_candidate(
    contour: np.ndarray, size: tuple[int, int], min_area: float, max_area: float
) -> tuple | None:
    """(quad, fill, cut, outline) for a region outline that is roughly four-sided, else None."""
    w, h = size
    x, y, bw, bh = cv2.boundingRect(contour)
    area = cv2.contourArea(contour)
    if area < min_area or area > max_area or area < 0.35 * bw * bh:
        return None
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    if area < 0.7 * rw * rh or max(rw, rh) > 4.0 * min(rw, rh):
        return None
    hull = cv2.convexHull(contour)
    approx = cv2.approxPolyN(hull, 4, epsilon_percentage=-1.0, ensure_convex=True)
    if approx is None or approx.size != 8:
        return None
    quad = _clockwise(approx.reshape(4, 2).astype(np.float64))
    fill = area / max(float(_quad_area(quad)), 1e-9)
    if fill < 0.8:
        return None
    cut = False
    if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
        pts = contour.reshape(-1, 2)
        contact = np.count_nonzero(
            (pts[:, 0] <= 0) | (pts[:, 1] <= 0) | (pts[:, 0] >= w - 1) | (pts[:, 1] >= h - 1)
        )
        cut = contact > 0.25 * min(rw, rh)
    return quad, fill, cut, contour


def _split_at_notches(contour: np.ndarray, shape: tuple[int, int]) -> list[np.ndarray]:
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


def _outline_candidates(
    edges: np.ndarray, min_area: float, max_area: float, seen: set[tuple[int, int, int, int]]
) -> list[tuple]:
    """Quads around connected edge chains that run along most of a quad's perimeter.

    The convex hull of a card outline seen on three sides is the whole card.
    """
    h, w = edges.shape
    out = []
    near = cv2.dilate(edges, _KERNEL3) > 0
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
        hull = cv2.convexHull(contour)
        hull_area = cv2.contourArea(hull)
        if hull_area < min_area or hull_area > max_area:
            continue
        approx = cv2.approxPolyN(hull, 4, epsilon_percentage=-1.0, ensure_convex=True)
        if approx is None or approx.size != 8:
            continue
        quad = _clockwise(approx.reshape(4, 2).astype(np.float64))
        perimeter = float(np.linalg.norm(quad - quad[_NEXT], axis=1).sum())
        chain = len(contour) / 2.0  # the outer contour of a thin chain runs along it twice
        if chain < 0.6 * perimeter or chain > 3.0 * perimeter:
            continue
        # Texture specks touching the chain bend the hull: refit the sides to the chain's
        # straight runs.
        fitted = _fit_outline(contour, quad)
        if _corner_score(fitted[None])[0] == 0.0:
            # The hull's four-sided fit can be bent by a speck; start from the bounding box.
            box = _clockwise(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float64))
            fitted = _fit_outline(contour, box, reach=0.12)
            if _corner_score(fitted[None])[0] == 0.0:
                continue
        quad = fitted
        # Evidence: the share of the quad's perimeter that runs along an edge (within ~2 px).
        t = np.linspace(0.0, 1.0, 24, endpoint=False)
        rim = (quad[:, None, :] + t[None, :, None] * (quad[_NEXT] - quad)[:, None, :]).reshape(
            -1, 2
        )
        xi = np.clip(np.rint(rim[:, 0]).astype(int), 0, w - 1)
        yi = np.clip(np.rint(rim[:, 1]).astype(int), 0, h - 1)
        coverage = float(np.count_nonzero(near[yi, xi]) / len(rim))
        if coverage < 0.6:
            continue
        if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
            continue
        out.append((quad, 0.95, False, hull))
    return out


# --------------------------------------------------------------------------------------------
# scoring


_PROBE_W, _PROBE_H = 40, 62


def _probe_masks() -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:_PROBE_H, 0:_PROBE_W]
    fx, fy = xx / (_PROBE_W - 1), yy / (_PROBE_H - 1)
    inner = (fx > 0.13) & (fx < 0.87) & (fy > 0.1) & (fy < 0.9)
    band = ~inner & (fx > 0.04) & (fx < 0.96) & (fy > 0.03) & (fy < 0.97)
    return inner, band


_INNER, _BAND = _probe_masks()
_PROBE_TARGET: Final = np.array(
    [[0, 0], [_PROBE_W - 1, 0], [_PROBE_W - 1, _PROBE_H - 1], [0, _PROBE_H - 1]], np.float32
)


def _probe_scores(
    small: np.ndarray, quads: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Paper and content scores (N,) in [0, 1] from a tiny upright warp of each quad.

    Paper: the border band's median colour is bright and near neutral. Content: some ink inside
    (symbols), little ink in the border band. Ink is a pixel darker than the paper around it,
    more colourful than the paper, or very dark. Also returns (N,) bool "upright" (the ink
    stands along the quad's long side, as in two cards side by side) and (N,) the paper's
    grey level (its darkest channel), for a comparison with the other cards of the scene.
    """
    n = len(quads)
    if n == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0)
    wide = _rect_ratio(quads, None, np.zeros(2)) > 1.0
    quads = np.where(wide[:, None, None], np.roll(quads, -1, axis=1), quads)  # short edge first
    probes = np.empty((n, _PROBE_H, _PROBE_W, 3), np.uint8)
    lum8 = np.empty((n, _PROBE_H, _PROBE_W), np.uint8)
    local = np.empty((n, _PROBE_H, _PROBE_W), np.uint8)
    for i, quad in enumerate(quads):
        hom = cv2.getPerspectiveTransform(quad.astype(np.float32), _PROBE_TARGET)
        probes[i] = cv2.warpPerspective(small, hom, (_PROBE_W, _PROBE_H), flags=cv2.INTER_LINEAR)
        lum8[i] = probes[i].min(axis=2)
        # A closing fills thin dark strokes (outlines, stripes) but keeps the step of a shadow
        # edge, so ``rel`` below is low on strokes only; solid symbols are caught by colour.
        local[i] = cv2.morphologyEx(lum8[i], cv2.MORPH_CLOSE, _KERNEL7)
    ref = np.median(probes[:, _BAND], axis=1)  # (n, 3)
    lo, hi = ref.min(axis=1), ref.max(axis=1)
    sat = (hi - lo) / np.maximum(hi, 1.0)
    paper = _ramp(lo, 25, 60) * _ramp(-sat, -0.6, -0.4)
    lum = lum8.astype(np.float32)
    rel = lum / np.maximum(local.astype(np.float32), 1.0)
    top = probes.max(axis=3).astype(np.float32)
    chroma = (top - lum) / np.maximum(top, 1.0)
    ink = (rel < 0.86) | (chroma > np.maximum(0.3, sat + 0.18)[:, None, None])
    ink |= lum < 0.45 * lo[:, None, None]
    band_ink = ink[:, _BAND].mean(axis=1)
    inner_ink = ink[:, _INNER].mean(axis=1)
    content = _ramp(inner_ink, 0.003, 0.012) * _ramp(-inner_ink, -0.9, -0.75)
    content = content * _ramp(-band_ink, -0.3, -0.12)
    # Only a quad shaped like two cards side by side (long/short ~1.28 head-on) needs this.
    pairish = np.maximum(_rect_ratio(quads, None, np.zeros(2)), 1e-9)
    pairish = np.maximum(pairish, 1.0 / pairish) < 1.45
    crosswise = np.ones(n)
    for i in np.flatnonzero(pairish & (content > 0)):
        crosswise[i] = _crosswise_share(ink[i] & _INNER)
    # SET symbols lie across the card (wider than tall in an upright card): a quad whose ink
    # stands upright is two cards side by side, or a card seen sideways within something.
    upright = crosswise < 0.4
    content = content * np.where(upright, 0.3, 1.0)
    return paper, content, upright, lo


def _crosswise_share(ink: np.ndarray) -> float:
    """Share of the ink (in blobs of >= 8 px) lying in blobs wider than tall; 1 without ink."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    stats = stats[1:]
    stats = stats[stats[:, cv2.CC_STAT_AREA] >= 8]
    total = stats[:, cv2.CC_STAT_AREA].sum()
    if total == 0:
        return 1.0
    tall = stats[:, cv2.CC_STAT_HEIGHT] >= 1.3 * stats[:, cv2.CC_STAT_WIDTH]
    return float(1.0 - stats[tall, cv2.CC_STAT_AREA].sum() / total)


def _ramp(x: float | np.ndarray, lo: float, hi: float) -> np.ndarray:
    """0 below ``lo``, 1 above ``hi``, linear between."""
    return np.clip((np.asarray(x, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)


def _aspect_score(
    quads: np.ndarray, focal: float, centre: np.ndarray, *, strict: bool = False
) -> np.ndarray:
    """How card-shaped each quad is (N,) in [0, 1].

    The better of two estimates of the long/short side ratio: opposite sides averaged (exact
    for a card seen head-on, robust to corner noise) and the perspective-corrected ratio
    (right for tilted views, but noisy for small quads). Full score within about +-20 % of
    89/57 (+-8 % if ``strict``), none beyond +-38 % (+-16 %): a 45 degree tilt foreshortens a
    card by 30 %.
    """
    lo, hi = (-0.15, -0.08) if strict else (-0.32, -0.18)
    best = np.zeros(len(quads))
    for f in (None, focal):
        ratio = _rect_ratio(quads, f, centre)
        long_short = np.maximum(ratio, 1.0 / np.maximum(ratio, 1e-9))
        err = np.abs(np.log(long_short / _LONG_OVER_SHORT))
        best = np.maximum(best, _ramp(-err, lo, hi))
    return best


# --------------------------------------------------------------------------------------------
# selection


def _inset(inner: np.ndarray, outer: np.ndarray) -> float:
    """Smallest distance (px) from a corner of ``inner`` to a side line of ``outer``, signed
    positive inside; both clockwise quads."""
    a = outer
    d = np.roll(outer, -1, axis=0) - a
    d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
    rel = inner[:, None, :] - a[None, :, :]  # (4 corners, 4 sides, 2)
    signed = rel[..., 1] * d[None, :, 0] - rel[..., 0] * d[None, :, 1]
    return float(signed.min())


def _select(
    quads: np.ndarray,
    scores: np.ndarray,
    min_member: float | None = None,
    framed: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the kept candidates: no composites, no nesting, no duplicates.

    ``framed``: (N,) bool, the surface around the candidate is as bright as its paper (see
    :func:`_white_surround`); of two nested candidates, a framed outer one is a frame around
    the card (a tray cell), an unframed one is the whole card around its lit part.

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
            margin = _inset(quads[small], quads[big])
            # (A card fills over half its tray cell; the box around a card's symbols less.)
            in_frame = framed is not None and framed[big] and margin > -2.0
            in_frame &= areas[small] > 0.5 * areas[big]
            if in_frame or (
                margin > 0.06 * np.sqrt(areas[big]) and areas[small] > 0.35 * areas[big]
            ):
                # A card inside a larger white frame (a tray cell, a box lid): the card.
                prefer = small
            elif areas[big] > 1.15 * areas[small] and scores[big] >= 0.7 * scores[small]:
                # A part of a card (its lit half, the paper inside its edge): the whole card.
                prefer = big
            else:
                prefer = j
            kept[kept.index(j)] = int(prefer)
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
    smallest fitting grid of 2 to 36 cells is used when it is unknown.
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

_SAMPLES: Final = 20  # profiles per side
_STEPS: Final = 25  # samples per profile


def _refine(frame: np.ndarray, quads: np.ndarray, k: int) -> np.ndarray:
    """Snap each side to the strongest nearby edge in the full-resolution frame (two passes)."""
    if len(quads) == 0:
        return quads
    short = np.minimum(
        np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1),
        np.linalg.norm(quads[:, 2] - quads[:, 1], axis=1),
    )
    reach = np.minimum(3.0 * k + 4.0, np.maximum(0.07 * short, 2.0))
    quads = _refine_pass(frame, quads, reach)
    return _refine_pass(frame, quads, np.maximum(reach / 2, 1.5))


def _refine_pass(frame: np.ndarray, quads: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """One pass of :func:`_refine`: the strongest edge within +-reach of each side."""
    out, _ = _snap_sides(frame, quads, -reach, reach, centred=True)
    return out


def _snap_sides(
    image: np.ndarray,
    quads: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    centred: bool,
    min_step: float = 4.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Move each side of each clockwise quad to the strongest edge at offsets [lo, hi] px.

    Offsets are along the side's outward normal (negative: inwards); all sides of all quads
    are sampled with one ``cv2.remap`` (``_SAMPLES`` profiles of ``_STEPS`` points per side).
    With ``centred`` the search favours small moves (a Gaussian weight). An edge is a step of
    at least ``min_step`` grey levels between samples. A side whose edge is unclear, or whose
    new line is not parallel to it, keeps its old line.

    Returns:
        (quads moved (N, 4, 2), (N, 4) bool: the side found an edge).
    """
    n = len(quads)
    h, w = image.shape[:2]
    a = quads.reshape(-1, 2)  # (4n, 2) side starts
    b = np.roll(quads, -1, axis=1).reshape(-1, 2)
    d = b - a
    length = np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
    d = d / length
    normal = np.stack([d[:, 1], -d[:, 0]], axis=1)  # outward for clockwise quads (y down)
    t = np.linspace(0.15, 0.85, _SAMPLES)
    base = a[:, None, :] + t[None, :, None] * length[:, :, None] * d[:, None, :]  # (4n, S, 2)
    u = np.linspace(0.0, 1.0, _STEPS)
    lo4, hi4 = np.repeat(lo, 4), np.repeat(hi, 4)  # (4n,)
    offs = lo4[:, None] + u[None, :] * (hi4 - lo4)[:, None]  # (4n, O)
    pts = base[:, :, None, :] + offs[:, None, :, None] * normal[:, None, None, :]  # (4n,S,O,2)
    maps = pts.reshape(-1, _STEPS, 2).astype(np.float32)
    prof = cv2.remap(
        image, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    prof = prof.astype(np.float32)
    # An edge is a step in grey level (paper against a darker surface) or in warmth (R - B:
    # cream paper against a bluish-white tray or desk, where the grey levels barely differ).
    lum = prof.min(axis=2).reshape(4 * n, _SAMPLES, _STEPS)
    warm = (prof[..., 2] - prof[..., 0]).reshape(4 * n, _SAMPLES, _STEPS)
    grad = np.maximum(np.abs(np.diff(lum, axis=2)), np.abs(np.diff(warm, axis=2)))
    if centred:
        mids = (u[:-1] + u[1:]) - 1.0  # -1 .. 1
        wgrad = grad * np.exp(-0.5 * (mids / 0.6) ** 2)[None, None, :]
    else:
        wgrad = grad
    best = wgrad.argmax(axis=2)
    peak = np.take_along_axis(grad, best[..., None], axis=2)[..., 0]
    left = np.take_along_axis(wgrad, np.maximum(best - 1, 0)[..., None], axis=2)[..., 0]
    right = np.take_along_axis(wgrad, np.minimum(best + 1, _STEPS - 2)[..., None], axis=2)[..., 0]
    mid = np.take_along_axis(wgrad, best[..., None], axis=2)[..., 0]
    denom = left - 2 * mid + right
    sub = np.where(np.abs(denom) > 1e-6, 0.5 * (left - right) / np.where(denom == 0, 1, denom), 0)
    pos = best + 0.5 + np.clip(sub, -0.5, 0.5)  # in steps, between sample i and i+1
    step = (hi4 - lo4) / (_STEPS - 1)
    off = lo4[:, None] + pos * step[:, None]
    edge = base + off[..., None] * normal[:, None, :]  # (4n, S, 2)
    inside = (base[..., 0] >= 0) & (base[..., 0] < w) & (base[..., 1] >= 0) & (base[..., 1] < h)
    valid = inside & (peak > min_step) & (best > 0) & (best < _STEPS - 2)
    # Keep the samples that agree with the median offset: part of a side may show another
    # edge (a neighbour, a shadow, a faint stretch of this one).
    enough = valid.sum(axis=1) >= _SAMPLES // 3
    valid &= enough[:, None]
    if enough.any():
        med = np.zeros(len(off))
        med[enough] = np.nanmedian(np.where(valid[enough], off[enough], np.nan), axis=1)
        valid &= np.abs(off - med[:, None]) < 2.0 + 0.01 * length
    count = valid.sum(axis=1)
    ok = count >= _SAMPLES // 3
    # Total least squares line through each side's samples, all sides at once.
    wts = valid.astype(np.float64)
    cnt = np.maximum(count, 1)[:, None]
    mean = (edge * wts[..., None]).sum(axis=1) / cnt  # (4n, 2)
    dev = (edge - mean[:, None, :]) * wts[..., None]
    sxx, syy = (dev[..., 0] ** 2).sum(axis=1), (dev[..., 1] ** 2).sum(axis=1)
    sxy = (dev[..., 0] * dev[..., 1]).sum(axis=1)
    angle = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    direction = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    direction *= np.where((direction * d).sum(axis=1) < 0, -1.0, 1.0)[:, None]
    # The new line must run along the old side: both ends within the search band and about
    # equally far (else it is another edge: a neighbour's, or a shadow's).
    cross = lambda p: (p - mean)[:, 0] * direction[:, 1] - (p - mean)[:, 1] * direction[:, 0]  # noqa: E731
    dist_a, dist_b = cross(a), cross(b)
    band = np.maximum(np.abs(lo4), np.abs(hi4))
    tol = np.maximum(np.abs(hi4 - lo4) / 2, 1.0)
    ok &= (np.maximum(np.abs(dist_a), np.abs(dist_b)) <= band) & (np.abs(dist_a - dist_b) <= tol)
    rel = edge - mean[:, None, :]
    resid = np.abs(rel[..., 0] * direction[:, None, 1] - rel[..., 1] * direction[:, None, 0])
    straight = ((resid < 1.5) & valid).sum(axis=1) >= 0.3 * _SAMPLES
    point = np.where(ok[:, None], mean, a)
    direction = np.where(ok[:, None], direction, d)
    corners = _intersect_sides(point.reshape(n, 4, 2), direction.reshape(n, 4, 2))
    found = (ok & straight).reshape(n, 4)
    out = quads.copy()
    for c in range(n):
        if corners[c] is None or not np.isfinite(corners[c]).all():
            found[c] = False
            continue
        moved = _clockwise(corners[c])
        reach = max(abs(lo[c]), abs(hi[c]))
        if np.abs(moved - quads[c]).max() > 2.5 * reach:
            found[c] = False
            continue
        if _quad_area(moved) > 0.3 * _quad_area(quads[c]):
            out[c] = moved
    return out, found


def _intersect_sides(point: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """(N, 4, 2) corners: corner i where side i-1 meets side i (lines as point + direction);
    NaN where two sides are parallel."""
    p1, d1 = np.roll(point, 1, axis=1), np.roll(direction, 1, axis=1)
    p2, d2 = point, direction
    det = d1[..., 0] * (-d2[..., 1]) + d1[..., 1] * d2[..., 0]
    rhs = p2 - p1
    t = (rhs[..., 0] * (-d2[..., 1]) + rhs[..., 1] * d2[..., 0]) / np.where(
        np.abs(det) < 1e-9, np.nan, det
    )
    return p1 + t[..., None] * d1


def _white_surround(small: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N,) bool: the surface just outside each quad is as bright as the paper just inside it
    (the quad may be a white frame around a card, not the card itself)."""
    if len(quads) == 0:
        return np.zeros(0, dtype=bool)
    centres = quads.mean(axis=1, keepdims=True)
    t = np.linspace(0.1, 0.9, 8)
    a, b = quads, np.roll(quads, -1, axis=1)
    edge = a[:, :, None, :] + t[None, None, :, None] * (b - a)[:, :, None, :]  # (N,4,8,2)
    edge = edge.reshape(len(quads), -1, 2)
    outside = centres + 1.1 * (edge - centres)
    inside = centres + 0.92 * (edge - centres)
    pts = np.stack([outside, inside], axis=1).astype(np.float32)  # (N, 2, 32, 2)
    flat = pts.reshape(-1, 32, 2)
    vals = cv2.remap(small, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR)
    lum = vals.min(axis=2).astype(np.float32).reshape(len(quads), 2, 32)
    out_l, in_l = np.median(lum[:, 0], axis=1), np.median(lum[:, 1], axis=1)
    return out_l >= 0.85 * in_l


def _inner_cards(small: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each quad, a card-like quad inset inside it (a card in a tray cell or on a white
    box lid, whose own edge is too faint to close a region): (N, 4, 2) and (N,) bool found."""
    short = np.minimum(
        np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1),
        np.linalg.norm(quads[:, 2] - quads[:, 1], axis=1),
    )
    inner, found = _snap_sides(
        small, quads, -0.3 * short, -0.03 * short, centred=False, min_step=2.5
    )
    return inner, found.all(axis=1)


# --------------------------------------------------------------------------------------------
# entry point


def _corner_score(quads: np.ndarray) -> np.ndarray:
    """(N,) 1 when every corner angle is within 35 degrees of square, 0 beyond 45: a card
    tilted up to ~45 degrees keeps its corners within that (a kite or a wedge does not)."""
    prev = quads[:, [3, 0, 1, 2]] - quads
    nxt = quads[:, _NEXT] - quads
    cos = (prev * nxt).sum(axis=2) / np.maximum(
        np.linalg.norm(prev, axis=2) * np.linalg.norm(nxt, axis=2), 1e-9
    )
    worst = np.degrees(np.abs(np.arcsin(np.clip(np.abs(cos).max(axis=1), 0, 1))))
    return _ramp(-worst, -45.0, -35.0)


def _score(
    small: np.ndarray,
    cands: list[tuple],
    focal: float,
    centre: np.ndarray,
    min_score: float = MIN_SCORE,
) -> tuple:
    """Score candidates: (quads, fill, cut, outlines, scores, upright, paper level),
    near-duplicates removed, best first. Only candidates whose shape alone scores at least
    ``min_score`` are probed (the probe can only lower a score)."""
    quads = np.array([c[0] for c in cands], dtype=np.float64)
    fill = np.array([c[1] for c in cands])
    cut = np.array([c[2] for c in cands], dtype=bool)
    # A region clipped by the frame edge counts only if it still has a card's shape (the card
    # is cut by a few pixels at most); it is reported as partial.
    aspect = np.where(
        cut,
        _aspect_score(quads, focal, centre, strict=True),
        _aspect_score(quads, focal, centre),
    )
    pre = aspect * _ramp(fill, 0.8, 0.92) * _corner_score(quads)
    order = _dedupe(quads, pre)
    quads, fill, cut, pre = quads[order], fill[order], cut[order], pre[order]
    outlines = [cands[i][3] for i in order]
    good = pre >= min_score
    scores = np.zeros(len(quads))
    upright = np.zeros(len(quads), dtype=bool)
    level = np.zeros(len(quads))
    paper, content, upright[good], level[good] = _probe_scores(small, quads[good])
    scores[good] = pre[good] * paper * content
    return quads, fill, cut, outlines, scores, upright, level


def find_cards(frame: npt.NDArray[np.uint8], *, min_score: float = MIN_SCORE) -> CardDetections:
    """Find every SET card in a frame.

    Args:
        frame: BGR uint8 image, shape (H, W, 3), any size (large photos are searched at a long
            side of about :data:`WORK_LONG_SIDE` px and refined at full resolution).
        min_score: drop detections scoring below this (0..1).

    Returns:
        :class:`CardDetections` in frame pixels; ``CardDetections.empty()`` when none is found.
        A card whose outline runs along the frame edge is reported, flagged ``partial``, only
        while it still has a card's shape (cut by a few pixels); cards cut further are left
        out. Use :meth:`CardDetections.whole` to drop the partial ones.

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
    masks, edges = _masks(small)
    blobs: list[np.ndarray] = []
    cands = _candidates(masks, _MIN_CARD_AREA, _MAX_CARD_FRACTION * sh * sw, edges, blobs)
    if not cands:
        cands = [
            piece
            for blob in blobs[:12]
            for part in _split_at_notches(blob, (sh, sw))
            if (piece := _contour_candidate(part, (sw, sh), _MIN_CARD_AREA, 1e12)) is not None
        ]
    if not cands:
        return CardDetections.empty()
    focal = 0.85 * max(sh, sw)
    centre = np.array([sw / 2.0, sh / 2.0])
    quads, fill, cut, outlines, scores, upright, level = _score(
        small, cands, focal, centre, min_score
    )
    single = np.flatnonzero(scores >= min_score)
    kept = single[
        _select(quads[single], scores[single], framed=_white_surround(small, quads[single]))
    ]
    # Paper is the brightest surface of its neighbourhood: a "card" far darker than the other
    # cards (a patch of a dark mat, a phone) is not one; a card in shadow is ~half as bright.
    floor = 0.35 * float(np.median(level[kept])) if len(kept) else 0.0
    if len(kept) and (level[kept] < floor).any():
        scores[level < floor] = 0.0
        single = np.flatnonzero(scores >= min_score)
        kept = single[
            _select(quads[single], scores[single], framed=_white_surround(small, quads[single]))
        ]
    areas = _quad_area(quads)
    median = float(np.median(areas[kept])) if len(kept) else None
    # Touching cards that are not aligned (so no grid split applies): cut each large region
    # between its two deepest notches, twice at most (three cards in a row).
    for _ in range(2):
        big = (scores < min_score) & ~cut & (fill < 0.93)
        big &= areas > (1.5 * median if median is not None else 4 * _MIN_CARD_AREA)
        parents = [outlines[i] for i in np.flatnonzero(big)[:12]] + blobs[:12]
        blobs = []
        pieces = [
            found
            for outline in parents
            for piece in _split_at_notches(outline, (sh, sw))
            if (found := _contour_candidate(piece, (sw, sh), _MIN_CARD_AREA, 1e12)) is not None
        ]
        if not pieces:
            break
        q2, f2, c2, o2, s2, u2, l2 = _score(small, pieces, focal, centre, min_score)
        s2[l2 < floor] = 0.0
        quads, fill, cut = np.concatenate([quads, q2]), np.concatenate([fill, f2]), np.r_[cut, c2]
        scores, upright = np.concatenate([scores, s2]), np.r_[upright, u2]
        outlines = outlines + o2
        single = np.flatnonzero(scores >= min_score)
        kept = single[
            _select(quads[single], scores[single], framed=_white_surround(small, quads[single]))
        ]
        areas = _quad_area(quads)
        median = float(np.median(areas[kept])) if len(kept) else None
    # Touching cards whose seam is invisible: split card-grid shaped regions into cells.
    parents = fill >= 0.88  # a row of cards may touch the frame edge
    if median is not None:
        parents &= areas > 1.6 * median
    else:  # no card found: only regions whose ink says "cards side by side"
        parents &= upright
    cells, family = [], []
    for p, quad in enumerate(quads[parents]):
        split = _grid_split(
            quad, focal, centre, None if median is None else _quad_area(quad) / median
        )
        cells += split
        family += [p] * len(split)
    # A card inside a larger white frame (a tray cell, a box lid) whose own edge is too faint
    # to close a region: look for a card-shaped quad inset in each found quad.
    inset = {}
    framed = kept[_white_surround(small, quads[kept]) & ~cut[kept]] if len(kept) else kept
    if len(framed):
        inner, ok = _inner_cards(small, quads[framed])
        if ok.any():
            ratio = _quad_area(inner) / np.maximum(areas[framed], 1e-9)
            ok &= (ratio > 0.5) & (ratio < 0.9)
            paper, content, _, _ = _probe_scores(small, inner)
            inner_scores = _aspect_score(inner, focal, centre) * paper * content
            ok &= inner_scores >= max(min_score, 0.8)
            for idx in np.flatnonzero(ok):
                inset[int(framed[idx])] = inner[idx]
    final = [
        (inset[i] if i in inset else _fit_outline(outlines[i], quads[i]), scores[i], cut[i])
        for i in kept
    ]
    if cells:
        cells_arr = np.array(cells)
        paper, content, _, cell_level = _probe_scores(small, cells_arr)
        cell_scores = 0.95 * _aspect_score(cells_arr, focal, centre) * paper * content
        cell_scores[cell_level < floor] = 0.0
        ok = cell_scores >= min_score
        if median is not None:
            cell_areas = _quad_area(cells_arr)
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
        ok &= ~_points_in_quads(cells_arr.mean(axis=1), found).any(axis=0)
        ok &= ~_points_in_quads(found.mean(axis=1), cells_arr).any(axis=1)
        if ok.any():
            all_quads = np.concatenate([quads[single], cells_arr[ok]])
            all_scores = np.concatenate([scores[single], cell_scores[ok]])
            chosen = _select(
                all_quads,
                all_scores,
                None if median is None else 0.4 * median,
                framed=_white_surround(small, all_quads),
            )
            final = [
                (
                    inset.get(int(single[i]))
                    if int(single[i]) in inset
                    else _fit_outline(outlines[single[i]], all_quads[i]),
                    all_scores[i],
                    cut[single[i]],
                )
                if i < len(single)
                else (all_quads[i], all_scores[i], _touches_border(all_quads[i], sw, sh))
                for i in chosen
            ]
    if not final:
        return CardDetections.empty()
    work = np.array([f[0] for f in final], dtype=np.float64)
    result_scores = np.array([f[1] for f in final], dtype=np.float32)
    partial = np.array([f[2] for f in final], dtype=bool)
    full = _refine(frame, (work + 0.5) * k - 0.5, k)
    full = order_corners(full, focal=focal * k, centre=(frame.shape[1] / 2, frame.shape[0] / 2))
    return CardDetections(full.astype(np.float32), np.clip(result_scores, 0, 1), partial)


def _touches_border(quad: np.ndarray, w: int, h: int, tol: float = 2.0) -> bool:
    """A corner of ``quad`` lies within ``tol`` px of the image border (or beyond it)."""
    x, y = quad[:, 0], quad[:, 1]
    return bool(((x < tol) | (y < tol) | (x > w - 1 - tol) | (y > h - 1 - tol)).any())


def _fit_outline(outline: np.ndarray, quad: np.ndarray, reach: float = 0.03) -> np.ndarray:
    """``quad`` with its sides refitted to the straight parts of the region outline."""
    points = outline.reshape(-1, 2).astype(np.float64)
    for step in range(2):
        refined = _fit_sides(points, quad, reach if step == 0 else 0.03)
        if refined is None:
            break
        quad = refined
    return quad
