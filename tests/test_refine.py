"""Unit tests of vision.detect.refine: each side snapped to the card's edge at full resolution."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect.refine import refine


def _warp(canvas: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The canvas (H, W, 3) uint8 seen by a tilted camera, and the quads (N, 4, 2) there."""
    h, w = canvas.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[60, 30], [w - 60, 50], [w - 10, h - 20], [20, h - 10]])
    m = cv2.getPerspectiveTransform(src, dst)
    image = cv2.warpPerspective(canvas, m, (w, h), flags=cv2.INTER_AREA)
    moved = cv2.perspectiveTransform(quads.reshape(-1, 1, 2).astype(np.float64), m)
    return image, moved.reshape(-1, 4, 2)


def _shift_side(quad: np.ndarray, side: int, by: float) -> np.ndarray:
    """The clockwise quad (4, 2) with side ``side`` moved ``by`` px along its outward normal."""
    d = quad[(side + 1) % 4] - quad[side]
    normal = np.array([d[1], -d[0]]) / np.linalg.norm(d)
    out = quad.copy()
    out[[side, (side + 1) % 4]] += by * normal
    return out


def test_touching_cards_under_perspective_get_their_own_sides():
    # Two cards side by side with no gap; the left card's paper darkens over 10 px towards the
    # seam (a shaded ramp, as rendered), so its working outline ends where the ramp starts,
    # 12 px inside the seam (beyond the plain reach of 10 px at k = 2).
    canvas = np.full((420, 560, 3), (60, 90, 140), np.uint8)
    canvas[60:360, 80:272] = 240
    canvas[60:360, 272:464] = 240
    canvas[60:360, 262:272] = np.linspace(236, 190, 10).astype(np.uint8)[None, :, None]
    cards = np.array(
        [
            [[80, 60], [272, 60], [272, 360], [80, 360]],
            [[272, 60], [464, 60], [464, 360], [272, 360]],
        ],
        np.float64,
    )
    image, truth = _warp(canvas, cards)
    start = truth.copy()
    start[0] = _shift_side(truth[0], 1, -12.0)
    out = refine(image, start, 2)
    assert np.abs(out - truth).max() < 1.5


def test_card_in_a_drawn_frame_keeps_its_own_edge():
    # A cream card on a white board with a pen line 14 px outside its left side (a tray's
    # drawn frame): its own faint edge is found, so the side does not search out to the line.
    canvas = np.full((420, 560, 3), (235, 228, 226), np.uint8)
    canvas[60:360, 120:312] = (200, 225, 232)
    canvas[40:380, 104:107] = (120, 90, 90)
    card = np.array([[[120, 60], [312, 60], [312, 360], [120, 360]]], np.float64)
    image, truth = _warp(canvas, card)
    out = refine(image, truth.copy(), 2)
    assert np.abs(out - truth).max() < 1.5


def test_card_outline_far_inside_a_faint_edge_reaches_it():
    # A card on a pale grey table whose working outline lies 11 px inside every side, beyond
    # the plain reach (no edge there): the sides search outwards and find the card's edge.
    canvas = np.full((420, 560, 3), 150, np.uint8)
    canvas[60:360, 120:312] = 168
    card = np.array([[[120, 60], [312, 60], [312, 360], [120, 360]]], np.float64)
    image, truth = _warp(canvas, card)
    start = truth[0]
    for side in range(4):
        start = _shift_side(start, side, -11.0)
    out = refine(image, start[None], 2)
    assert np.abs(out - truth).max() < 1.5
