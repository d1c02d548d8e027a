"""Warping and white balance of card crops."""

from __future__ import annotations

import numpy as np
import pytest

from vision.warp import (
    BALANCE_BAND_INNER,
    BALANCE_QUANTILE,
    BALANCE_SETTINGS,
    BALANCE_VERSION,
    CROP_HEIGHT,
    CROP_WIDTH,
    PAPER_LEVEL,
    warp_cards,
    white_balance,
)


def balance_band(height: int, width: int, inner: float = BALANCE_BAND_INNER) -> np.ndarray:
    """(height, width) bool: the band white_balance reads, 3.5 % to ``inner`` in from the
    edges."""
    mask = np.zeros((height, width), dtype=bool)
    oy, ox = round(0.035 * height), round(0.035 * width)
    iy, ix = round(inner * height), round(inner * width)
    mask[oy : height - oy, ox : width - ox] = True
    mask[iy : height - iy, ix : width - ix] = False
    return mask


def reference_white_balance(
    crops: np.ndarray, inner: float = BALANCE_BAND_INNER, quantile: float = BALANCE_QUANTILE
) -> np.ndarray:
    """The defining float implementation (per-pixel multiply) that the fast one must equal:
    the per-channel median of the band's pixels at or above its luma quantile."""
    band = crops[:, balance_band(crops.shape[1], crops.shape[2], inner)].astype(np.float32)
    luma = band.sum(axis=2)
    cut = np.sort(luma, axis=1)[:, int(quantile * luma.shape[1])]
    bright = luma >= cut[:, None]
    refs = np.stack([np.median(band[i][bright[i]], axis=0) for i in range(len(crops))])
    gains = np.minimum(PAPER_LEVEL / np.maximum(refs, 1.0), 8.0)
    return np.clip(crops.astype(np.float32) * gains[:, None, None, :], 0, 255).astype(np.uint8)


@pytest.mark.parametrize("version", sorted(BALANCE_SETTINGS))
@pytest.mark.parametrize("seed", range(6))
def test_white_balance_equals_reference(seed, version):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    crops = rng.integers(0, 256, (n, 60, 40, 3), dtype=np.uint8)
    crops[:, :10] = rng.integers(120, 256, (n, 10, 40, 3), dtype=np.uint8)
    if seed % 2:
        crops //= 4  # dim, large gains
    ref = reference_white_balance(crops, *BALANCE_SETTINGS[version])
    np.testing.assert_array_equal(white_balance(crops, version=version), ref)
    np.testing.assert_array_equal(white_balance(crops[0], version=version), ref[0])


def test_balance_versions_read_different_bands() -> None:
    """Version 1 reads the brighter half of 3.5-10 % in from the edges; version 2 (the run
    time's) the brightest quarter of 3.5-14 %: a brighter ring at 10-14 % sets only version 2's
    paper."""
    assert BALANCE_SETTINGS[BALANCE_VERSION] == (BALANCE_BAND_INNER, BALANCE_QUANTILE)
    crop = np.empty((CROP_HEIGHT, CROP_WIDTH, 3), np.uint8)
    crop[:] = (180, 200, 220)  # paper (BGR)
    iy, ix = round(0.10 * CROP_HEIGHT), round(0.10 * CROP_WIDTH)
    crop[iy:-iy, ix:-ix] = (250, 240, 230)  # a brighter ring from 10 % in ...
    iy, ix = round(0.14 * CROP_HEIGHT), round(0.14 * CROP_WIDTH)
    crop[iy:-iy, ix:-ix] = (90, 90, 90)  # ... to 14 %, then the symbols' area
    v1, v2 = white_balance(crop, version=1), white_balance(crop, version=2)
    np.testing.assert_allclose(v1[15, 80], PAPER_LEVEL, atol=1)  # paper at 6 %
    np.testing.assert_allclose(v2[30, 80], PAPER_LEVEL, atol=1)  # the ring at 12 %
    assert np.abs(v1[30, 80].astype(int) - PAPER_LEVEL).max() > 10
    np.testing.assert_array_equal(white_balance(crop), v2)
    for bad in (0, 3):
        with pytest.raises(ValueError, match="version"):
            white_balance(crop, version=bad)
        with pytest.raises(ValueError, match="balance_version"):
            warp_cards(crop, np.zeros((0, 4, 2), np.float32), balance_version=bad)


def test_white_balance_removes_cast():
    crop = np.empty((1, CROP_HEIGHT, CROP_WIDTH, 3), np.uint8)
    crop[:] = (150, 190, 230)  # warm paper (BGR)
    out = white_balance(crop)
    assert np.abs(out[0, 5:-5, 5:-5].astype(int) - round(PAPER_LEVEL)).max() <= 1
    assert white_balance(np.zeros((0, 10, 10, 3), np.uint8)).shape == (0, 10, 10, 3)


@pytest.mark.parametrize("scale", [1.0, 1.1, 1.2])
@pytest.mark.parametrize("table", [(20, 40, 70), (60, 110, 150), (90, 90, 90)])
def test_white_balance_on_a_quad_found_too_large(scale, table):
    """A quad larger than its card (a tray cell, a sleeve, a shadow) shows the table round the
    card: the paper, not the table, must set the balance."""
    frame = np.empty((600, 600, 3), np.uint8)
    frame[:] = table  # a darker table (BGR: brown wood, warm cloth, grey)
    card = np.array([[236, 164], [364, 164], [364, 364 + 36], [236, 364 + 36]], np.float32)
    x0, y0 = card[0].astype(int)
    x1, y1 = card[2].astype(int)
    frame[y0:y1, x0:x1] = (170, 200, 215)  # paper under a warm light
    centre = card.mean(axis=0)
    crop = warp_cards(frame, (centre + scale * (card - centre))[None])[0]
    inset = (1 - 1 / scale) / 2 + 0.02  # the card's edge in the crop, and a margin
    h, w = crop.shape[:2]
    paper = crop[int(inset * h) + 2 : -int(inset * h) - 2, int(inset * w) + 2 : -int(inset * w) - 2]
    np.testing.assert_allclose(np.median(paper.reshape(-1, 3), axis=0), PAPER_LEVEL, atol=2)


def test_warp_orientation_and_shape():
    frame = np.zeros((400, 600, 3), np.uint8)
    frame[100:120, 200:220] = (0, 0, 255)  # a red mark near the card's TL corner
    corners = np.array([[[200, 100], [328, 100], [328, 300], [200, 300]]], np.float32)
    crops = warp_cards(frame, corners, balance=False)
    assert crops.shape == (1, CROP_HEIGHT, CROP_WIDTH, 3) and crops.dtype == np.uint8
    assert crops[0, 5, 5, 2] > 200 and crops[0, -5, -5, 2] < 50
    assert warp_cards(frame, np.zeros((0, 4, 2), np.float32)).shape == (
        0,
        CROP_HEIGHT,
        CROP_WIDTH,
        3,
    )
    with pytest.raises(ValueError, match="corners"):
        warp_cards(frame, np.zeros((1, 3, 2), np.float32))
