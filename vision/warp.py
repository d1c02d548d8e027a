"""Perspective-correct each detected card into a flat, upright, white-balanced crop.

The crop is the classifier's input space: every card, whatever the photo, becomes a portrait
``CROP_HEIGHT x CROP_WIDTH`` BGR uint8 image whose paper is near neutral white. The aspect ratio
is the card's own, 57 x 89 mm (measured on a standard deck), so symbols are not distorted.
"""

from __future__ import annotations

import functools
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "CARD_ASPECT",
    "CROP_HEIGHT",
    "BALANCE_BAND_INNER",
    "BALANCE_QUANTILE",
    "BALANCE_SETTINGS",
    "BALANCE_VERSION",
    "CROP_WIDTH",
    "PAPER_LEVEL",
    "hist_median",
    "paper_mask",
    "paper_reference",
    "warp_cards",
    "white_balance",
]

#: Card width / height (57 mm / 89 mm, a standard SET card).
CARD_ASPECT: Final = 57.0 / 89.0
#: Crop size in pixels (portrait). 160 x 250 keeps the stripes of striped symbols resolvable
#: (about 4 px per stripe period on a standard card).
CROP_WIDTH: Final = 160
CROP_HEIGHT: Final = 250
#: Grey level the paper is mapped to by :func:`white_balance` (per channel, BGR).
PAPER_LEVEL: Final = 235.0

# Paper reference band, as fractions of the crop size inset from each edge: far enough in to
# miss the rounded corners and small corner errors, far enough out to miss the symbols.
_BAND_OUTER: Final = 0.035
_BAND_INNER: Final = 0.10

#: Inner edge of the band :func:`white_balance` reads its paper from (fraction of the crop size
#: inset from each edge; the band starts at the same 3.5 % as :func:`paper_mask`'s). Wider than
#: :func:`paper_mask`'s 10 % so that a quad found too large (a tray cell, a card sleeve, a
#: shadow: the table shows round the card) still has paper in it: with a quad 1.2x the card's
#: size, the card's edge lies 8.3 % in, and the 10 % band was three quarters table.
BALANCE_BAND_INNER: Final = 0.14

#: :func:`white_balance` takes the paper as the pixels of its band whose summed B + G + R is at
#: or above this quantile (paper is the brightest surface there): the brightest quarter. With
#: the brighter half, a band half on a darker table balanced on the table.
BALANCE_QUANTILE: Final = 0.75

#: Version of the white balance, for caches of crops (bump it when :func:`white_balance` or its
#: constants change: cached training crops made by another version are stale).
BALANCE_VERSION: Final = 2

#: (band inner edge, quantile) of each white balance version :func:`white_balance` can apply.
#: Version 1 (until 2026-11-30) read the brighter half of a 3.5-10 % band; version 2 is the
#: current one. Version 1 stays for training: models trained on its crops tolerate the table
#: round a card whose quad was found too large (models/README.md, "Retrained on version-2
#: crops").
BALANCE_SETTINGS: Final = {1: (0.10, 0.5), BALANCE_VERSION: (BALANCE_BAND_INNER, BALANCE_QUANTILE)}


def _target_corners(width: int, height: int) -> npt.NDArray[np.float32]:
    return np.array(
        [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float32
    )


def warp_cards(
    frame: npt.NDArray[np.uint8],
    corners: npt.NDArray[np.float32],
    *,
    size: tuple[int, int] = (CROP_WIDTH, CROP_HEIGHT),
    balance: bool = True,
    balance_version: int = BALANCE_VERSION,
) -> npt.NDArray[np.uint8]:
    """Warp each card quadrilateral to an upright portrait crop.

    Args:
        frame: BGR uint8 image, shape (H, W, 3).
        corners: (N, 4, 2) float32 pixel coordinates in ``frame``, ordered TL, TR, BR, BL of
            the card in portrait orientation (as :func:`vision.detect.find_cards` returns).
        size: crop (width, height) in pixels.
        balance: apply :func:`white_balance` to each crop (on by default).
        balance_version: which white balance (a key of :data:`BALANCE_SETTINGS`; training only).

    Returns:
        (N, height, width, 3) uint8 BGR crops; (0, height, width, 3) for no cards.

    Raises:
        ValueError: if ``frame`` is not (H, W, 3) uint8, ``corners`` not (N, 4, 2), or
            ``balance_version`` unknown.
    """
    if balance_version not in BALANCE_SETTINGS:
        raise ValueError(f"balance_version: expected one of {sorted(BALANCE_SETTINGS)}")
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"frame: expected (H, W, 3) uint8 BGR, got {frame.shape} {frame.dtype}")
    quads = np.asarray(corners, dtype=np.float32)
    if quads.ndim != 3 or quads.shape[1:] != (4, 2):
        raise ValueError(f"corners: expected (N, 4, 2), got {quads.shape}")
    width, height = size
    out = np.empty((len(quads), height, width, 3), dtype=np.uint8)
    target = _target_corners(width, height)
    for i, quad in enumerate(quads):
        homography = cv2.getPerspectiveTransform(quad, target)
        # INTER_AREA is not supported by warpPerspective; when the card is much larger than the
        # crop (12 MP photos), pre-shrinking the source region avoids aliasing the stripes.
        out[i] = _warp_one(frame, quad, homography, width, height)
    return white_balance(out, version=balance_version) if balance else out


def _warp_one(
    frame: npt.NDArray[np.uint8],
    quad: npt.NDArray[np.float32],
    homography: npt.NDArray[np.float64],
    width: int,
    height: int,
) -> npt.NDArray[np.uint8]:
    side = max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2]))
    scale = float(side) / height
    if scale <= 2.0:
        return cv2.warpPerspective(
            frame, homography, (width, height), flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )  # fmt: skip
    # A card more than twice the crop's size (12 MP photos): average its region down by 2
    # (OpenCV's fast integer INTER_AREA path), once per octave, until it is at most twice the
    # crop's size, then sample it bilinearly. A stripe period is ~1/60 of the card's height,
    # so the stripes stay resolved, and no stripe is aliased; this costs about a quarter of
    # sampling the card at twice the crop size (a quarter of the interpolated pixels).
    f = 1
    while scale > 2.0 * f:
        f *= 2
    h, w = frame.shape[:2]
    margin = 2 * f
    x0 = max(int(np.floor(quad[:, 0].min())) - margin, 0)
    y0 = max(int(np.floor(quad[:, 1].min())) - margin, 0)
    x1 = min(int(np.ceil(quad[:, 0].max())) + margin + 1, w)
    y1 = min(int(np.ceil(quad[:, 1].max())) + margin + 1, h)
    if x1 - x0 < 2 * f or y1 - y0 < 2 * f:  # a quad (nearly) outside the frame
        return cv2.warpPerspective(
            frame, homography, (width, height), flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )  # fmt: skip
    region = frame[y0:y1, x0:x1]
    step = 1
    while step < f:
        rh, rw = region.shape[0] // 2, region.shape[1] // 2
        region = cv2.resize(region[: 2 * rh, : 2 * rw], (rw, rh), interpolation=cv2.INTER_AREA)
        step *= 2
    # Pixel centres: region pixel j averages frame pixels x0 + f*j .. x0 + f*j + f - 1. The
    # corners land a quarter pixel outside the crop's corner pixels, as when the card was
    # sampled at twice the crop size and averaged down by 2 (the crops stay as they were).
    local = ((quad - np.array([x0, y0], np.float32)) - (f - 1) / 2.0) / f
    target = _target_corners(width, height) * np.float32((width - 0.5) / (width - 1)) - 0.25
    target[:, 1] = _target_corners(width, height)[:, 1] * ((height - 0.5) / (height - 1)) - 0.25
    small = cv2.getPerspectiveTransform(local.astype(np.float32), target)
    # OpenCV's bilinear warp of 8-bit images has a vector path for 4 channels, not for 3: on a
    # BGRA copy of the (small, cache-warm) region it costs half as much, with the conversions,
    # and it is the same to the bit (each channel is interpolated on its own, with the same
    # fixed-point weights). A frame-sized copy for the direct path above would cost as much as
    # it saves (the writes go to memory).
    bgra = cv2.warpPerspective(
        cv2.cvtColor(region, cv2.COLOR_BGR2BGRA), small, (width, height),
        flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE,
    )  # fmt: skip
    return cv2.cvtColor(bgra, cv2.COLOR_BGRA2BGR)


@functools.lru_cache(maxsize=8)
def _paper_mask_cached(height: int, width: int) -> npt.NDArray[np.bool_]:
    mask = np.zeros((height, width), dtype=bool)
    oy, ox = round(_BAND_OUTER * height), round(_BAND_OUTER * width)
    iy, ix = round(_BAND_INNER * height), round(_BAND_INNER * width)
    mask[oy : height - oy, ox : width - ox] = True
    mask[iy : height - iy, ix : width - ix] = False
    mask.setflags(write=False)
    return mask


@functools.lru_cache(maxsize=8)
def _band_blocks(height: int, width: int, inner: float) -> tuple[tuple[slice, slice], ...]:
    """The band from 3.5 % to ``inner`` in from the edges as (rows, columns) slices of
    disjoint rectangles: the strips above, below, left and right of the inner area, or the
    whole outer area where the inner one is empty."""
    oy, ox = round(_BAND_OUTER * height), round(_BAND_OUTER * width)
    iy, ix = round(inner * height), round(inner * width)
    if iy >= height - iy or ix >= width - ix:
        return ((slice(oy, height - oy), slice(ox, width - ox)),)
    return (
        (slice(oy, iy), slice(ox, width - ox)),
        (slice(height - iy, height - oy), slice(ox, width - ox)),
        (slice(iy, height - iy), slice(ox, ix)),
        (slice(iy, height - iy), slice(width - ix, width - ox)),
    )


def paper_mask(height: int = CROP_HEIGHT, width: int = CROP_WIDTH) -> npt.NDArray[np.bool_]:
    """Boolean (height, width) mask of the paper reference band of a crop (see module text)."""
    return _paper_mask_cached(height, width).copy()


def white_balance(
    crops: npt.NDArray[np.uint8], *, version: int = BALANCE_VERSION
) -> npt.NDArray[np.uint8]:
    """Scale each crop's channels so its paper becomes neutral grey ``PAPER_LEVEL``.

    The paper reference is the per-channel median of the brightest quarter
    (:data:`BALANCE_QUANTILE`) of the pixels in a band round the crop, 3.5 % to 14 %
    (:data:`BALANCE_BAND_INNER`) in from its edges; using only the brightest pixels ignores a
    finger, a shadow edge, background showing at a rounded corner, and the table round a card
    whose quad was found too large. This is a per-card von Kries (diagonal) white balance: it
    removes warm/cool casts and exposure differences between cards of one photo.

    Measured (the 1,043 annotated table-photo cards warped from their corners scaled about
    the centre, each read by the cross-validation model that never saw its source): with the
    brighter half of a 3.5-10 % band (version 1), a quad 1.2x the card's size left 67.7 % of the
    cards read right, 1.3x 43.1 %; now 98.7 % and 82.3 % (as found: 99.6 -> 99.7 %); with each
    card's own gains from its exact quad, 98.7 % and 84.0 %.

    Each channel is mapped through a 256-entry table holding ``clip(v * gain)`` computed in
    float32, so the result is the same as multiplying every pixel, at a fraction of the cost.

    Args:
        crops: (N, h, w, 3) uint8 BGR crops (or one (h, w, 3) crop).
        version: the band and quantile of :data:`BALANCE_SETTINGS` to use; the run time uses
            the default, :data:`BALANCE_VERSION` (the training script can make version-1 crops).

    Returns:
        New array, same shape, uint8 BGR.

    Raises:
        ValueError: for a ``version`` not in :data:`BALANCE_SETTINGS`.
    """
    if version not in BALANCE_SETTINGS:
        raise ValueError(f"version: expected one of {sorted(BALANCE_SETTINGS)}, got {version!r}")
    single = crops.ndim == 3
    batch = crops[None] if single else crops
    if len(batch) == 0:
        return batch.copy()
    refs = paper_reference(batch, version=version)
    gains = np.minimum(PAPER_LEVEL / np.maximum(refs, 1.0), 8.0)  # cap: black 'paper'
    levels = np.arange(256, dtype=np.float32)[None, :, None]
    tables = np.clip(levels * gains[:, None, :], 0, 255).astype(np.uint8)  # (N, 256, 3)
    source = np.ascontiguousarray(batch)
    out = np.empty_like(source)
    for i in range(len(batch)):
        cv2.LUT(source[i], tables[i].reshape(1, 256, 3), dst=out[i])
    return out[0] if single else out


def paper_reference(
    crops: npt.NDArray[np.uint8], *, version: int = BALANCE_VERSION
) -> npt.NDArray[np.float32]:
    """(N, 3) float32 B, G, R level of each crop's paper, as :func:`white_balance` takes it: the
    per-channel median of the brightest :data:`BALANCE_QUANTILE` of the pixels in the band of
    :data:`BALANCE_SETTINGS` ``version``. Unbalanced crops give the paper as photographed.

    Args:
        crops: (N, h, w, 3) uint8 BGR crops, N >= 1.
        version: a key of :data:`BALANCE_SETTINGS`.

    Raises:
        ValueError: for a ``version`` not in :data:`BALANCE_SETTINGS`.
    """
    if version not in BALANCE_SETTINGS:
        raise ValueError(f"version: expected one of {sorted(BALANCE_SETTINGS)}, got {version!r}")
    band_inner, quantile = BALANCE_SETTINGS[version]
    n, h, w = crops.shape[:3]
    # (N, P, 3) uint8 band pixels, in strips (the histograms below do not depend on the order).
    band = np.concatenate(
        [crops[:, rows, cols].reshape(n, -1, 3) for rows, cols in _band_blocks(h, w, band_inner)],
        axis=1,
    )
    planes = np.ascontiguousarray(band.reshape(-1, 3).T)  # (3, N * P)
    luma = (planes[0].astype(np.intp) + planes[1] + planes[2]).reshape(n, -1)  # 0..765
    rows = np.arange(n)[:, None]
    cum = np.bincount((luma + rows * 766).ravel(), minlength=n * 766).reshape(n, 766).cumsum(1)
    cut = (cum > (quantile * cum[:, -1])[:, None]).argmax(axis=1)  # quantile level
    # Histogram bins of the brighter pixels: 256 per card; the darker ones all fall past them.
    base = np.where(luma >= cut[:, None], rows * 256, n * 256).ravel()
    refs = np.empty((n, 3), dtype=np.float32)
    for c in range(3):
        hist = np.bincount(planes[c] + base, minlength=(n + 1) * 256)
        refs[:, c] = hist_median(hist[: n * 256].reshape(n, 256))
    return refs


def hist_median(hist: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Row medians (M,) from integer histograms (M, L), equal to ``np.median`` of the values
    (the mean of the two middle values for an even count)."""
    total = hist.sum(axis=1)
    cum = np.cumsum(hist, axis=1)
    lower = (cum > ((total - 1) // 2)[:, None]).argmax(axis=1)
    upper = (cum > (total // 2)[:, None]).argmax(axis=1)
    return (lower + upper) / 2.0
