"""Side snapping: each side of a quad moved to the strongest nearby edge of the full-resolution
frame. The network sees the frame shrunk to 512 px, so on a 12 MP photo its quad is off by up
to a few frame pixels a side; the crops the classifier reads are cut at these snapped corners
(the project README, "The card detector", says what it is measured to add)."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import (
    NEXT,
    intersect_sides,
    per_side,
    points_in_quads,
    quad_area,
    side_frames,
)

__all__ = ["SAMPLES", "STEPS", "refine", "snap_sides"]


SAMPLES: Final = 20  # profiles per side


STEPS: Final = 25  # samples per profile


# Fixed sampling of snap_sides: profile positions along a side (fractions of its length),
# sample positions along a profile (fractions of the band) and the centred search's weight of
# each step between samples (built once: NumPy calls on these few values cost more than the
# arithmetic).
_ALONG: Final = np.linspace(0.15, 0.85, SAMPLES)
_ACROSS: Final = np.linspace(0.0, 1.0, STEPS)
_STEP_MIDS: Final = 0.5 * (_ACROSS[:-1] + _ACROSS[1:])
_CENTRED_WEIGHT: Final = np.exp(-0.5 * (((_ACROSS[:-1] + _ACROSS[1:]) - 1.0) / 0.6) ** 2)


def refine(frame: np.ndarray, quads: np.ndarray, k: int) -> np.ndarray:
    """Snap each side to the strongest nearby edge in the full-resolution frame (two passes).

    Args:
        frame: BGR uint8 frame (H, W, 3).
        quads: (N, 4, 2) float64 clockwise quads in frame pixels, from an image shrunk by
            ``k``.
        k: the shrink factor of the image the quads were found in (its pixel is k frame
            pixels). An edge needs a step of 4 grey levels in the frame.

    Returns:
        (N, 4, 2) float64 refined quads.

    The first pass searches +-reach (0.07 x the card's short side, at most 3k + 4 px) about
    each side. A side that finds no edge there, or that faces another quad closer than 1.5 x
    its outward reach (touching cards), searches outwards up to 0.1 x the square root of the
    quad's area (at most 6k + 6 px; the area, not the short side, so that a card foreshortened
    by a steep camera still reaches its seam): the working outline of a card on a pale table,
    or of one of touching cards (whose seam is a shaded ramp darkening to the true edge, the
    ramp's inner end the stronger edge at the working scale), may lie that far inside the
    card. Measured: synthetic touching cards (8 scenes) corner error p95 10.9 -> 1 px,
    touching_tilt_45 15 -> 3 cards lost (IoU < 0.85); on the annotated photos corner p95
    3.4 -> 2.8 px (a card on a pale grey table, maormagori 20200221_162013, was 8-12 px inside
    its edges). Sides that found an edge keep the small reach: farther out they would snap to
    a tray's drawn line (koff) or a shadow.
    """
    if len(quads) == 0:
        return quads
    short = np.minimum(
        np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1),
        np.linalg.norm(quads[:, 2] - quads[:, 1], axis=1),
    )
    reach = np.minimum(3.0 * k + 4.0, np.maximum(0.07 * short, 2.0))
    out = np.minimum(6.0 * k + 6.0, np.maximum(0.1 * np.sqrt(quad_area(quads)), 2.0))
    first, found = snap_sides(frame, quads, -reach, reach)
    wide = ~found | _touching(quads, 1.5 * out)
    redo = wide.any(axis=1)
    if redo.any():
        hi = np.where(wide, out[:, None], reach[:, None])[redo]
        first[redo] = snap_sides(frame, quads[redo], -reach[redo], hi, about_zero=True)[0]
    quads = first
    reach = np.maximum(reach / 2, 1.5)
    return snap_sides(frame, quads, -reach, reach)[0]


def _touching(quads: np.ndarray, out: np.ndarray) -> np.ndarray:
    """(N, 4) bool: side i of clockwise quad n (N, 4, 2) faces another quad within ``out`` (N,)
    px: a point out there, at a quarter, half or three quarters along the side, lies in it."""
    n = len(quads)
    a, _, d, length, normal = side_frames(quads)  # (4n, 2), -, (4n, 2), (4n,), (4n, 2)
    along = np.array([0.25, 0.5, 0.75])[None, :, None] * length[:, None, None] * d[:, None]
    probe = a[:, None] + along + np.repeat(out, 4)[:, None, None] * normal[:, None]  # (4n, 3, 2)
    inside = points_in_quads(probe.reshape(-1, 2), quads).reshape(n, n, 4, 3)
    own = np.arange(n)
    inside[own, own] = False
    return inside.any(axis=(0, 3))


def snap_sides(
    image: np.ndarray,
    quads: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    min_step: float = 4.0,
    about_zero: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Move each side of each clockwise quad to the strongest edge at offsets [lo, hi] px.

    Offsets are along the side's outward normal (negative: inwards); all sides of all quads
    are sampled with one ``cv2.remap`` (``SAMPLES`` profiles of ``STEPS`` points per side).
    The search favours small moves (a Gaussian weight from the band's middle). An edge is a
    step of at least ``min_step`` grey levels between samples. A side whose edge is unclear, or
    whose new line is not parallel to it, keeps its old line. ``lo`` and ``hi`` are (N,) per
    quad or (N, 4) per side (side i runs from corner i to corner i + 1). With ``about_zero`` the
    weight falls with the offset from the side's present line, over ``-lo`` inwards and ``hi``
    outwards (a band wider on one side), instead of from the band's middle.

    Returns:
        (quads moved (N, 4, 2), (N, 4) bool: the side found an edge).
    """
    n = len(quads)
    h, w = image.shape[:2]
    a, b, d, length, normal = side_frames(quads)  # (4n, 2) x 3, (4n,), (4n, 2)
    t, u = _ALONG, _ACROSS
    base = a[:, None, :] + t[None, :, None] * length[:, None, None] * d[:, None, :]  # (4n,S,2)
    lo4, hi4 = per_side(lo, n), per_side(hi, n)  # (4n,)
    offs = lo4[:, None] + u[None, :] * (hi4 - lo4)[:, None]  # (4n, O)
    # Sample points (4n*S, O) as two float32 maps, computed in float64 (the same values as
    # before) straight into the maps: no (4n, S, O, 2) temporary, no strided map copies.
    map_x = np.empty((4 * n, SAMPLES, STEPS), np.float32)
    map_y = np.empty((4 * n, SAMPLES, STEPS), np.float32)
    np.add(base[:, :, 0, None], offs[:, None, :] * normal[:, None, 0, None], out=map_x)
    np.add(base[:, :, 1, None], offs[:, None, :] * normal[:, None, 1, None], out=map_y)
    prof = cv2.remap(
        image,
        map_x.reshape(-1, STEPS),
        map_y.reshape(-1, STEPS),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    # An edge is a step in grey level (paper against a darker surface) or in warmth (R - B:
    # cream paper against a bluish-white tray or desk, where the grey levels barely differ).
    # Integer steps (int16), exactly the float ones.
    lum = cv2.min(cv2.min(prof[..., 0], prof[..., 1]), prof[..., 2]).astype(np.int16)
    lum = lum.reshape(4 * n, SAMPLES, STEPS)
    warm = (prof[..., 2].astype(np.int16) - prof[..., 0]).reshape(4 * n, SAMPLES, STEPS)
    grad = np.maximum(np.abs(np.diff(lum, axis=2)), np.abs(np.diff(warm, axis=2)))
    if about_zero:
        mids = lo4[:, None] + _STEP_MIDS[None, :] * (hi4 - lo4)[:, None]
        mids = mids / np.where(mids < 0, np.abs(lo4)[:, None], np.abs(hi4)[:, None])  # -1..0..1
        wgrad = grad * np.exp(-0.5 * (mids / 0.6) ** 2)[:, None, :]
    else:
        wgrad = grad * _CENTRED_WEIGHT[None, None, :]  # weights -1 .. 1 across the band
    best = wgrad.argmax(axis=2)  # (4n, S)
    # The best step and its neighbours (clipped to the profile) as flat indices: four plain
    # gathers, cheaper than four take_along_axis.
    at = best + np.arange(0, best.size * (STEPS - 1), STEPS - 1).reshape(best.shape)
    peak = grad.ravel().take(at)
    left = wgrad.ravel().take(at - (best > 0))
    right = wgrad.ravel().take(at + (best < STEPS - 2))
    mid = wgrad.ravel().take(at)
    denom = left - 2 * mid + right
    sub = np.where(np.abs(denom) > 1e-6, 0.5 * (left - right) / np.where(denom == 0, 1, denom), 0)
    pos = best + 0.5 + np.clip(sub, -0.5, 0.5)  # in steps, between sample i and i+1
    step = (hi4 - lo4) / (STEPS - 1)
    off = lo4[:, None] + pos * step[:, None]
    edge = base + off[..., None] * normal[:, None, :]  # (4n, S, 2)
    inside = (base[..., 0] >= 0) & (base[..., 0] < w) & (base[..., 1] >= 0) & (base[..., 1] < h)
    valid = inside & (peak > min_step) & (best > 0) & (best < STEPS - 2)
    # Keep the samples that agree with the median offset: part of a side may show another
    # edge (a neighbour, a shadow, a faint stretch of this one).
    enough = valid.sum(axis=1) >= SAMPLES // 3
    valid &= enough[:, None]
    if enough.any():
        med = np.zeros(len(off))
        med[enough] = _masked_median(off[enough], valid[enough])
        valid &= np.abs(off - med[:, None]) < 2.0 + 0.01 * length[:, None]
    count = valid.sum(axis=1)
    ok = count >= SAMPLES // 3
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
    straight = ((resid < 1.5) & valid).sum(axis=1) >= 0.3 * SAMPLES
    point = np.where(ok[:, None], mean, a)
    direction = np.where(ok[:, None], direction, d)
    corners = intersect_sides(point.reshape(n, 4, 2), direction.reshape(n, 4, 2))
    found = (ok & straight).reshape(n, 4)
    out = quads.copy()
    finite = np.isfinite(corners).all(axis=(1, 2))
    moved = np.where(finite[:, None, None], corners, quads)
    x, y = moved[..., 0], moved[..., 1]
    turn = (x * y[:, NEXT] - x[:, NEXT] * y).sum(axis=1)
    moved = np.where((turn > 0)[:, None, None], moved, moved[:, ::-1])  # clockwise
    reach = np.maximum(np.abs(lo4), np.abs(hi4)).reshape(n, 4).max(axis=1)
    far = np.abs(moved - quads).max(axis=(1, 2)) > 2.5 * reach
    found[~finite | far] = False
    take = finite & ~far & (quad_area(moved) > 0.3 * quad_area(quads))
    out[take] = moved[take]
    return out, found


def _masked_median(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Median of each row of ``values`` (N, M) over the entries where ``mask`` is True (every
    row has at least one); the same as ``np.nanmedian`` with NaN outside the mask, faster."""
    ranked = np.sort(np.where(mask, values, np.inf), axis=1)
    count = mask.sum(axis=1)
    rows = np.arange(len(values))
    return 0.5 * (ranked[rows, (count - 1) // 2] + ranked[rows, count // 2])
