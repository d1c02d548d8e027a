"""Warping and white balance of card crops."""

from __future__ import annotations

import numpy as np
import pytest

from vision.warp import CROP_HEIGHT, CROP_WIDTH, PAPER_LEVEL, paper_mask, warp_cards, white_balance


def reference_white_balance(crops: np.ndarray) -> np.ndarray:
    """The defining float implementation (per-pixel multiply) that the fast one must equal."""
    mask = paper_mask(crops.shape[1], crops.shape[2])
    band = crops[:, mask].astype(np.float32)
    luma = band.sum(axis=2)
    bright = luma >= np.median(luma, axis=1, keepdims=True)
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
