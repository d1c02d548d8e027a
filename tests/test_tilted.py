"""Cards seen by a camera off the image's centre: close-ups cut from a steep photo, where a card
shows proportions no centred camera gives it (2.1 long, or squarish)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.cards import parse_card
from vision.detect import find_cards
from vision.detect.geometry import LONG_OVER_SHORT
from vision.render_card import render_card

W, H = 420, 420


def project(points_mm: np.ndarray, tilt_deg: float, focal: float, centre: tuple) -> np.ndarray:
    """Pinhole view of points on a table (x right, y away from the camera, mm), the camera
    600 mm from the card, looking down at ``tilt_deg`` from the horizontal."""
    t = np.radians(tilt_deg)
    x, y = points_mm[:, 0], points_mm[:, 1]
    # Camera frame: the optical axis meets the table at the origin.
    depth = 600.0 + y * np.cos(t)
    down = -y * np.sin(t)
    u = centre[0] + focal * x / depth
    v = centre[1] + focal * down / depth
    return np.stack([u, v], axis=1).astype(np.float32)


def card_mm(landscape: bool) -> np.ndarray:
    w, h = (89.0, 57.0) if landscape else (57.0, 89.0)
    return np.array([[-w / 2, h / 2], [w / 2, h / 2], [w / 2, -h / 2], [-w / 2, -h / 2]])


def close_up(landscape: bool = True, tilt_deg: float = 45.0) -> tuple[np.ndarray, np.ndarray]:
    """A 420 px close-up of one card, cut from a photo whose centre (the camera's principal
    point) lies 1.2 close-up heights below it, focal length 3 close-up sizes (a telephoto
    crop), on a dark table: (frame, (4, 2) corners TL, TR, BR, BL of the upright card)."""
    corners = project(card_mm(landscape), tilt_deg, 3.0 * W, (W / 2, H / 2 + 1.2 * H))
    corners += np.array([W / 2, H / 2]) - corners.mean(axis=0)
    card = render_card(parse_card("3 green striped diamonds"), np.random.default_rng(0))
    ch, cw = card.shape[:2]
    flat = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    if landscape:  # the portrait card image turned to lie along the x axis
        card = cv2.rotate(card, cv2.ROTATE_90_CLOCKWISE)
        ch, cw = card.shape[:2]
        flat = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    homography = cv2.getPerspectiveTransform(flat, corners.astype(np.float32))
    frame = np.full((H, W, 3), (38, 40, 44), np.uint8)
    warped = cv2.warpPerspective(card, homography, (W, H))
    inside = cv2.warpPerspective(np.full((ch, cw), 255, np.uint8), homography, (W, H)) > 128
    frame[inside] = warped[inside]
    return frame, corners


@pytest.mark.parametrize("landscape", [True, False], ids=["across", "along"])
def test_find_cards_finds_the_card_of_a_steep_close_up(landscape: bool) -> None:
    frame, corners = close_up(landscape)
    ratio = np.linalg.norm(corners[1] - corners[0]) / np.linalg.norm(corners[2] - corners[1])
    assert abs(np.log(max(ratio, 1 / ratio) / LONG_OVER_SHORT)) > 0.25  # 2.1 long, or squarish
    found = find_cards(frame)
    assert len(found.corners) == 1
    centre = np.asarray(found.corners[0]).mean(axis=0)
    assert np.linalg.norm(centre - corners.mean(axis=0)) < 10
