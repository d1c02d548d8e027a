"""Unit tests of vision.detect.scoring.dim_patches."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect.scoring import dim_patches, probe_scores


def _box(x: int, y: int, w: int = 60, h: int = 94) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64)


def _card(image: np.ndarray, quad: np.ndarray, paper: int, ink=(40, 40, 200)) -> None:
    x0, y0 = quad[0].astype(int)
    x1, y1 = quad[2].astype(int)
    image[y0:y1, x0:x1] = paper
    cv2.ellipse(image, ((x0 + x1) // 2, (y0 + y1) // 2), (18, 8), 0, 0, 360, ink, -1)


def test_streaked_floor_patch_among_cards_is_dim():
    # Three white cards on a grey, streaked floor; a card-sized patch of the floor (found as a
    # region between its streaks) is far darker than the cards and has no edge of its own.
    image = np.full((240, 400, 3), 100, np.uint8)
    for x in range(0, 400, 9):
        cv2.line(image, (x, 0), (x + 60, 240), (80, 80, 80), 1)
    quads = np.stack([_box(20, 20), _box(100, 20), _box(180, 20), _box(280, 120)])
    for quad in quads[:3]:
        _card(image, quad, 235)
    _, _, _, level = probe_scores(image, quads)
    assert dim_patches(image, quads, level).tolist() == [False, False, False, True]


def test_card_in_a_shadow_on_a_white_desk_is_not_dim():
    # The shadow dims the card and the desk around it alike, but the card's symbol is coloured.
    image = np.full((240, 400, 3), 225, np.uint8)
    quads = np.stack([_box(20, 20), _box(100, 20), _box(180, 20), _box(280, 120)])
    for quad in quads[:3]:
        _card(image, quad, 240)
    image[100:, 250:] = 110  # the shadow
    _card(image, quads[3], 112, ink=(30, 30, 100))
    _, _, _, level = probe_scores(image, quads)
    assert level[3] < 0.6 * np.median(level)
    assert not dim_patches(image, quads, level).any()
