"""Faint straight sides found by averaging profiles along them (vision.detect.lines)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect.lines import snap_lines

SQUARE = np.array([[100, 80], [220, 80], [220, 260], [100, 260]], np.float64)  # clockwise


def faint_outline(depth: float, noise: float, seed: int = 0) -> np.ndarray:
    """A white image (240) with noise and the outline of SQUARE drawn ``depth`` levels dark."""
    rng = np.random.default_rng(seed)
    image = np.full((340, 320, 3), 240.0) + rng.normal(0, noise, (340, 320, 3))
    line = np.zeros((340, 320), np.uint8)
    cv2.polylines(line, [SQUARE.astype(np.int32)], True, 255, 1)
    image -= depth * (line[..., None] / 255.0)
    return np.clip(image, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("shift", [(-4.0, 3.0), (5.0, -2.0), (0.0, 0.0)])
def test_faint_sides_below_the_pixel_noise_are_found(shift):
    # Each side 6 grey levels dark under noise of s.d. 2.5: unreliable in a single profile.
    image = faint_outline(depth=6.0, noise=2.5)
    moved, found = snap_lines(image, SQUARE + shift, np.full(1, 8.0))
    assert found.all()
    assert np.abs(moved[0] - SQUARE).max() < 1.5


def test_nothing_is_found_on_plain_noise():
    image = faint_outline(depth=0.0, noise=4.0)
    _, found = snap_lines(image, SQUARE[None] + 2.0, np.full(1, 8.0))
    assert not found.any()


def test_outward_takes_the_first_line_met():
    # A second, stronger line 12 px outside the left side: the outward search stops at the
    # first one (a white card's edge before a neighbour's), the symmetric search takes the
    # strongest.
    image = faint_outline(depth=6.0, noise=2.0)
    cv2.line(image, (88, 60), (88, 280), (200, 200, 200), 1)
    inner = SQUARE + np.array([[6, 0], [0, 0], [0, 0], [6, 0]])  # left side 6 px inside
    reach = np.full((1, 4), 20.0)
    start = np.full((1, 4), 2.0)
    moved, found = snap_lines(image, inner[None], reach, outward=start)
    assert found[0, 3]
    assert abs(moved[0, 0, 0] - 100) < 1.5 and abs(moved[0, 3, 0] - 100) < 1.5
