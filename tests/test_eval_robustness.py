"""The geometric alterations of ``scripts/eval_robustness.py`` map detections back exactly."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from ._scripts import load_script

robustness = load_script("eval_robustness")


@pytest.mark.parametrize("name", ["rot90", "rot180", "rot270", "mirror", "small", "none"])
def test_altered_pixels_map_back_to_the_same_pixels(name: str) -> None:
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)  # odd, unequal sides
    if name == "small":
        image = np.repeat(np.repeat(image, 40, axis=0), 40, axis=1)  # over SMALL_SIDE px
    encoded, back = robustness.ALTERATIONS[name](image)
    altered = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    h, w = altered.shape[:2]
    yy, xx = np.mgrid[0:h:7, 0:w:7]
    points = np.stack([xx, yy], axis=-1).reshape(-1, 2).astype(np.float64)
    original = robustness.to_original(points, back)
    assert original.shape == points.shape and original.dtype == np.float32
    if name == "small":  # scaled: the mapping is the scale, pixel centres aside
        scale = max(image.shape[:2]) / max(altered.shape[:2])
        assert np.allclose(original, points * scale, atol=1e-3)
        return
    x, y = np.rint(original).astype(int).T
    assert np.array_equal(altered[points[:, 1].astype(int), points[:, 0].astype(int)], image[y, x])
