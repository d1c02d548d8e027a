"""Warping and white balance of card crops."""

from __future__ import annotations

import numpy as np
import pytest

from vision.warp import (
    BALANCE_BAND_INNER,
    BALANCE_QUANTILE,
    CROP_HEIGHT,
    CROP_WIDTH,
    PAPER_LEVEL,
    warp_cards,
    white_balance,
)


def balance_band(height: int, width: int) -> np.ndarray:
    """(height, width) bool: the band white_balance reads, 3.5 % to 14 % in from the edges."""
    mask = np.zeros((height, width), dtype=bool)
    oy, ox = round(0.035 * height), round(0.035 * width)
    iy, ix = round(BALANCE_BAND_INNER * height), round(BALANCE_BAND_INNER * width)
    mask[oy : height - oy, ox : width - ox] = True
    mask[iy : height - iy, ix : width - ix] = False
    return mask


def reference_white_balance(crops: np.ndarray) -> np.ndarray:
    """The defining float implementation (per-pixel multiply) that the fast one must equal:
    the per-channel median of the band's pixels at or above its luma quantile."""
    band = crops[:, balance_band(crops.shape[1], crops.shape[2])].astype(np.float32)
    luma = band.sum(axis=2)
    cut = np.sort(luma, axis=1)[:, int(BALANCE_QUANTILE * luma.shape[1])]
    bright = luma >= cut[:, None]
    refs = np.stack([np.median(band[i][bright[i]], axis=0) for i in range(len(crops))])
    gains = np.minimum(PAPER_LEVEL / np.maximum(refs, 1.0), 8.0)
    return np.clip(crops.astype(np.float32) * gains[:, None, None, :], 0, 255).astype(np.uint8)


@pytest.mark.parametrize("seed", range(6))
def test_white_balance_equals_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    crops = rng.integers(0, 256, (n, 60, 40, 3), dtype=np.uint8)
    crops[:, :10] = rng.integers(120, 256, (n, 10, 40, 3), dtype=np.uint8)
    if seed % 2:
        crops //= 4  # dim, large gains
    np.testing.assert_array_equal(white_balance(crops), reference_white_balance(crops))
    np.testing.assert_array_equal(white_balance(crops[0]), reference_white_balance(crops[:1])[0])


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
