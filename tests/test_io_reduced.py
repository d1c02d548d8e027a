"""Reduced-size JPEG decoding (``load_image(min_long_side=...)``)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.test_io import encode, half_red, is_red, with_exif_orientation
from vision.io import decode_scale, load_image


def test_decode_scale():
    assert decode_scale(4032, 3024, None) == 1
    assert decode_scale(4032, 3024, 1500) == 2
    assert decode_scale(4032, 3024, 2016) == 2
    assert decode_scale(4032, 3024, 2017) == 1
    assert decode_scale(4032, 3024, 600) == 4
    assert decode_scale(16000, 12000, 10) == 8


def test_reduced_jpeg_matches_a_shrunk_full_decode():
    rng = np.random.default_rng(0)
    img = cv2.GaussianBlur(rng.integers(0, 256, (480, 640, 3), dtype=np.uint8), (9, 9), 3)
    data = encode(img)
    full = load_image(data)
    half = load_image(data, min_long_side=320)
    assert full.shape == (480, 640, 3) and half.shape == (240, 320, 3)
    area = cv2.resize(full, (320, 240), interpolation=cv2.INTER_AREA)
    assert np.abs(half.astype(int) - area).mean() < 2.0
    assert load_image(data, min_long_side=321).shape == full.shape


@pytest.mark.parametrize(
    ("orientation", "shape", "red_at"), [(1, (20, 30), (10, 3)), (6, (30, 20), (3, 10))]
)
def test_reduced_jpeg_keeps_exif_orientation(orientation, shape, red_at):
    img = load_image(with_exif_orientation(encode(half_red()), orientation), min_long_side=30)
    assert img.shape[:2] == shape
    assert is_red(img[red_at])


def test_png_is_not_reduced():
    data = encode(half_red(), ".png")
    assert load_image(data, min_long_side=10).shape == (40, 60, 3)
