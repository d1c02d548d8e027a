"""Unit tests of vision.detect.refine: side snapping, the inset card in a frame."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect.refine import frame_contrast, inner_cards, refine, snap_sides


def test_darker_out_takes_the_near_edge_of_a_gap():
    # A card in shadow (paper at 120) on a dark table, a gap (30) and a lit neighbour (240)
    # beyond it: the gap's far edge is the stronger step, but the card's side is the step down
    # going outwards at x = 100.
    image = np.full((200, 200, 3), 30, np.uint8)
    image[20:180, 20:100] = 120
    image[20:180, 108:190] = 240
    quad = np.array([[[24.0, 24.0], [105.0, 24.0], [105.0, 176.0], [24.0, 176.0]]])
    reach = np.array([12.0])
    plain, _ = snap_sides(image, quad, -reach, reach, centred=False)
    down, found = snap_sides(image, quad, -reach, reach, centred=False, darker_out=True)
    assert abs(plain[0, 1, 0] - 108) < 1.5  # the far edge of the gap
    assert abs(down[0, 1, 0] - 100) < 1.5 and abs(down[0, 2, 0] - 100) < 1.5
    assert found[0, 1]


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


def _tray_cell(cell_bgr: tuple[int, int, int], card_bgr: tuple[int, int, int]) -> np.ndarray:
    """A 160 x 240 cell of one paper round a 120 x 180 card of another (56 % of it, as a koff
    card in its cell), one dark symbol on the card, on a grey table."""
    image = np.full((200, 280, 3), 90, np.uint8)
    image[20:180, 20:260] = cell_bgr  # the cell, 160 x 240 (landscape)
    image[40:160, 50:230] = card_bgr  # the card, 120 x 180
    cv2.ellipse(image, (140, 100), (40, 20), 0, 0, 360, (90, 40, 110), -1)
    return image


CELL = np.array([[[20.0, 20.0], [259.0, 20.0], [259.0, 179.0], [20.0, 179.0]]])


def test_a_card_in_a_tray_cell_is_inset_and_its_frame_is_another_paper():
    # koff: a cream card in a lavender-white cell.
    image = _tray_cell((250, 238, 240), (200, 225, 232))
    inner, found = inner_cards(image, CELL)
    assert found[0]
    assert np.abs(inner[0] - np.array([[50, 40], [229, 40], [229, 159], [50, 159]])).max() < 2.5
    assert frame_contrast(image, CELL, inner)[0] > 10


def test_an_inset_inside_a_card_of_one_paper_has_no_frame_contrast():
    # The "frame" and the "card" are the same paper (a card taken whole, noise inside it).
    image = _tray_cell((230, 232, 235), (230, 232, 235))
    inner = np.array([[[50.0, 40.0], [229.0, 40.0], [229.0, 159.0], [50.0, 159.0]]])
    assert frame_contrast(image, CELL, inner)[0] < 1.0


def test_the_inset_search_stops_short_of_the_symbols():
    # A card whose own edge is too faint to see (the same paper as its cell), with the outline
    # of a row of symbols 40 px (a quarter of the cell's height) in from the cell's top and
    # bottom: the search may not take the symbols' edge for the card's (it reached 0.3 of
    # the short side, 48 px, before INSET_DEPTH).
    image = _tray_cell((236, 236, 236), (236, 236, 236))
    image[60:140, 30:250] = (60, 30, 90)
    inner, _ = inner_cards(image, CELL)
    assert np.abs(inner[0, :, 1] - 60).min() > 3 and np.abs(inner[0, :, 1] - 139).min() > 3
