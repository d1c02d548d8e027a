"""Faint straight card sides found by averaging along them.

A white card on a white sill or wall shows its sides as a thin shadow line of a few grey levels
at best, below the pixel noise of a single profile across the side (so
:func:`vision.detect.refine.snap_sides`, which looks for the edge in each profile separately,
misses it). A card's side is straight, so profiles across a hypothesised side are averaged
along it (the mean of their middle half, so a symbol or a neighbour's corner crossing part of
it does not count), at a few tilts: the side's line then stands out from noise and texture
that does not run along it.
Measured on the annotated white-on-white photos (omega697 ``cards_13_wide_shot``, working
resolution): the averaged step across a card's side is 1.3 to 35 grey levels, while the
averaged profile elsewhere on the sill varies by 0.1 to 0.4 levels per step.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import NEXT, intersect_sides, per_side, quad_area, side_frames

__all__ = ["snap_lines"]

#: Profiles across each side (along t in [0.12, 0.88] of it: corners are rounded).
_SAMPLES: Final = 32
#: Points per profile.
_STEPS: Final = 33
#: Tilts tried by default, as the difference between the offsets at the side's two ends over
#: its length (about +-4.6 degrees).
_TILTS: Final = np.linspace(-0.08, 0.08, 9)


def snap_lines(
    image: np.ndarray,
    quads: np.ndarray,
    reach: np.ndarray,
    *,
    outward: np.ndarray | None = None,
    first: bool = True,
    tilts: np.ndarray = _TILTS,
    sides: np.ndarray | None = None,
    min_step: float = 1.0,
    contrast: float = 4.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Move each side of each clockwise quad to the straight line of strongest averaged edge.

    Args:
        image: BGR uint8 working image, or its darkest channel (H, W) uint8 (cheaper when
            called often).
        quads: (N, 4, 2) clockwise quads (x, y) in image pixels.
        reach: (N,) or (N, 4) search distance in px on both sides of each side (side i runs
            from corner i to corner i + 1), along its normal.
        outward: (N,) or (N, 4): search only outwards, from this distance (px) out to
            ``reach`` (the sides of a white card on a white surface, searched from its
            symbols outwards).
        first: with ``outward``, take the first line met rather than the strongest.
        tilts: tilts tried (see :data:`_TILTS`).
        sides: (4,) bool, optional: search only these sides (the others keep their line and
            are reported not found).
        min_step: smallest step, in grey levels (darkest channel) per profile point, of the
            averaged profile at the chosen line.
        contrast: that step must also be this many times the median step of the same averaged
            profile (texture or a shading ramp across the side is not an edge).

    Returns:
        ((N, 4, 2) quads with the sides that found a line moved onto it, the others kept;
        (N, 4) bool: the side found its line). A quad whose new corners do not stay near the
        old ones (within 2.5 x its reach) is returned unchanged, with no side found.
    """
    quads = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    n = len(quads)
    if n == 0:
        return quads.copy(), np.zeros((0, 4), dtype=bool)
    r4 = per_side(reach, n)
    a, b, d, length, normal = side_frames(quads)  # (4n, 2) x 3, (4n,), (4n, 2)
    t = np.linspace(0.12, 0.88, _SAMPLES)
    base = a[:, None, :] + (t[None, :] * length[:, None])[..., None] * d[:, None, :]  # (4n,S,2)
    lo4 = -r4 if outward is None else per_side(outward, n)
    act = np.arange(4 * n) if sides is None else np.flatnonzero(np.tile(sides, n))
    ti, oi, ok = _search(
        image,
        base[act],
        normal[act],
        length[act],
        lo4[act],
        r4[act],
        outward is not None,
        first,
        tilts,
        min_step,
        contrast,
    )
    full_ti, full_oi = np.zeros(4 * n, dtype=int), np.zeros(4 * n, dtype=int)
    full_ok = np.zeros(4 * n, dtype=bool)
    full_ti[act], full_oi[act], full_ok[act] = ti, oi, ok
    ti, oi, ok = full_ti, full_oi, full_ok
    # The line: offset at the side's middle and the tilt.
    step = (r4 - lo4) / (_STEPS - 1)
    off_mid = lo4 + (oi + 0.5) * step
    tilt = tilts[ti]
    point = 0.5 * (a + b) + off_mid[:, None] * normal
    direction = d + tilt[:, None] * normal
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    point = np.where(ok[:, None], point, a)
    direction = np.where(ok[:, None], direction, d)
    corners = intersect_sides(point.reshape(n, 4, 2), direction.reshape(n, 4, 2))
    found = ok.reshape(n, 4)
    finite = np.isfinite(corners).all(axis=(1, 2))
    moved = np.where(finite[:, None, None], corners, quads)
    x, y = moved[..., 0], moved[..., 1]
    turn = (x * y[:, NEXT] - x[:, NEXT] * y).sum(axis=1)
    moved = np.where((turn > 0)[:, None, None], moved, moved[:, ::-1])  # clockwise
    far = np.abs(moved - quads).max(axis=(1, 2)) > 2.5 * r4.reshape(n, 4).max(axis=1)
    take = finite & ~far & (quad_area(moved) > 0.3 * quad_area(quads))
    found[~take] = False
    out = quads.copy()
    out[take] = moved[take]
    return out, found


def _search(
    image: np.ndarray,
    base: np.ndarray,
    normal: np.ndarray,
    length: np.ndarray,
    lo4: np.ndarray,
    r4: np.ndarray,
    outward: bool,
    first: bool,
    tilts: np.ndarray,
    min_step: float,
    contrast: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For M sides (profile bases (M, S, 2), unit normals, lengths, bands [lo4, r4] px):
    the chosen tilt index, offset index and whether a line was found, each (M,)."""
    m = len(base)
    if m == 0:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0, dtype=bool)
    t = np.linspace(0.12, 0.88, _SAMPLES)
    offs = lo4[:, None] + np.linspace(0.0, 1.0, _STEPS)[None, :] * (r4 - lo4)[:, None]  # (M, O)
    shear = (tilts[:, None] * (t[None, :] - 0.5))[None] * length[:, None, None]  # (M,T,S)
    # Sample points (M, T, S, O): base + (offset + tilt shift) * normal.
    total = offs[:, None, None, :] + shear[..., None]
    pts = base[:, None, :, None, :] + total[..., None] * normal[:, None, None, None, :]
    maps = pts.reshape(-1, _SAMPLES * _STEPS, 2).astype(np.float32)  # rows < 32767 for remap
    prof = cv2.remap(
        image, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    if prof.ndim == 3:
        prof = prof.min(axis=2)
    lum = prof.astype(np.float32).reshape(m, len(tilts), _SAMPLES, _STEPS)
    # The mean of the middle half of the samples along the side: a symbol, a neighbour's
    # corner or glare crossing part of the side does not move the line (and, unlike a median
    # of whole grey levels, it resolves steps of a fraction of a level).
    lo_k, hi_k = _SAMPLES // 4, _SAMPLES - _SAMPLES // 4
    ranked = np.partition(lum, (lo_k, hi_k - 1), axis=2)
    mean = ranked[:, :, lo_k:hi_k].mean(axis=2)  # (M, T, O)
    grad = np.abs(np.diff(mean, axis=2))  # (M, T, O-1)
    rows = np.arange(m)
    floors = np.median(grad, axis=2, keepdims=True)  # (M, T, 1)
    if not outward or not first:
        grid = np.zeros(_STEPS) if outward else np.linspace(-1, 1, _STEPS)
        mids = 0.5 * (grid[:-1] + grid[1:])
        weight = np.exp(-0.5 * (mids / 0.7) ** 2)  # small moves first
        best = (grad * weight).reshape(m, -1).argmax(axis=1)
    else:
        # The first local peak strong enough (over all tilts: the innermost, then strongest).
        left = np.concatenate([np.zeros_like(grad[..., :1]), grad[..., :-1]], axis=2)
        right = np.concatenate([grad[..., 1:], np.zeros_like(grad[..., :1])], axis=2)
        strong = (grad >= min_step) & (grad >= contrast * np.maximum(floors, 1e-3))
        strong &= (grad >= left) & (grad >= right)
        index = np.arange(_STEPS - 1)[None, None, :]
        key = np.where(strong, index * 1e4 - grad, np.inf)
        best = key.reshape(m, -1).argmin(axis=1)
    ti, oi = np.unravel_index(best, grad.shape[1:])
    peak = grad[rows, ti, oi]
    floor = floors[rows, ti, 0]
    inside = (oi > 0) & (oi < _STEPS - 2)  # not at the end of the search band
    ok = inside & (peak >= min_step) & (peak >= contrast * np.maximum(floor, 1e-3))
    return ti, oi, ok
