"""A photo cropped to one card: the frame itself is the card (vision.detect.whole_frame)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.cards import Card
from vision.detect.find import find_cards
from vision.detect.whole_frame import FRAME_SCORE, card_filling_frame, paper_framed
from vision.render_card import render_card


def _card(label: str, seed: int = 0, size: tuple[int, int] = (171, 267)) -> np.ndarray:
    """A rendered card filling its image (a tight crop: the paper runs to the frame)."""
    image = render_card(Card.parse(label), np.random.default_rng(seed), size=size)
    cut = round(0.04 * size[0])  # the rounded corners cropped off, as a crop tool would
    return np.ascontiguousarray(image[cut:-cut, cut:-cut])


@pytest.mark.parametrize(
    "label",
    ["1 red solid oval", "2 green striped diamonds", "3 purple open squiggles", "3 red open ovals"],
)
def test_a_photo_cropped_to_one_card_is_that_card(label: str) -> None:
    image = _card(label)
    h, w = image.shape[:2]
    corners = card_filling_frame(image)
    assert corners is not None
    frame = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    np.testing.assert_allclose(corners, frame)  # TL, TR, BR, BL of the portrait card
    found = find_cards(image)
    assert len(found) == 1 and not found.partial[0] and found.scores[0] == FRAME_SCORE
    np.testing.assert_allclose(found.corners[0], frame)


def test_a_landscape_crop_is_ordered_as_a_card_lying_sideways() -> None:
    image = cv2.rotate(_card("2 red solid diamonds"), cv2.ROTATE_90_COUNTERCLOCKWISE)
    h, w = image.shape[:2]
    corners = card_filling_frame(image)
    assert corners is not None
    sides = np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)
    assert sides[0] < sides[1]  # TL -> TR is a short side: the card's top, now on one end
    assert sorted(map(tuple, corners.tolist())) == sorted(
        [(0.0, 0.0), (w - 1.0, 0.0), (w - 1.0, h - 1.0), (0.0, h - 1.0)]
    )


def _four_symbols() -> np.ndarray:
    image = np.full((267, 171, 3), 235, np.uint8)
    for y in (60, 110, 160, 210):
        cv2.ellipse(image, (85, y), (58, 20), 0, 0, 360, (40, 40, 200), -1)
    return image


def _shifted() -> np.ndarray:
    image = _card("1 green solid oval")
    return np.ascontiguousarray(np.roll(image, image.shape[1] // 3, axis=1))  # runs off a side


def _on_wood() -> np.ndarray:
    image = _card("2 purple solid ovals")
    image[:, :14] = (30, 70, 120)  # a brown band down a side: not paper
    image[:, -14:] = (30, 70, 120)
    return image


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("blank paper", lambda: np.full((267, 171, 3), 235, np.uint8)),
        ("square frame", lambda: cv2.resize(_card("1 red solid oval"), (200, 200))),
        ("too long a frame", lambda: cv2.resize(_card("1 red solid oval"), (100, 267))),
        ("four symbols", _four_symbols),
        ("a symbol off the side", _shifted),
        ("no paper border", _on_wood),
        ("dark frame", lambda: np.full((267, 171, 3), 20, np.uint8)),
        ("tiny", lambda: np.full((12, 8, 3), 235, np.uint8)),
    ],
)
def test_what_is_not_one_card_filling_the_frame(name: str, make) -> None:
    assert card_filling_frame(make()) is None, name


def _drawn(inks: list[tuple[int, int, int]], grain: float = 3.0, size=(171, 267)) -> np.ndarray:
    """Paper (with photographic grain, sigma ``grain`` levels) and one solid oval per ink,
    stacked at the printed pitch (0.29 of the height), centred."""
    w, h = size
    image = np.full((h, w, 3), 228.0) + np.random.default_rng(1).normal(0, grain, (h, w, 3))
    image = np.clip(image, 0, 255).astype(np.uint8)
    n = len(inks)
    for k, ink in enumerate(inks):
        y = round(h / 2 + (k - (n - 1) / 2) * 0.29 * h)
        cv2.ellipse(image, (w // 2, y), (round(0.34 * w), round(0.16 * w)), 0, 0, 360, ink, -1)
    return image


RED, GREEN = (40, 40, 200), (60, 160, 40)


@pytest.mark.parametrize(
    ("name", "image", "card"),
    [
        ("two red ovals on grainy paper", _drawn([RED, RED]), True),
        ("the same drawn flat (a drawing, a screenshot)", _drawn([RED, RED], grain=0.0), False),
        ("a red oval above a green one: two inks", _drawn([RED, GREEN]), False),
        ("a 4:3 frame (a camera photo, a tablet screen)", _drawn([RED], size=(300, 400)), False),
        ("a 16:9 frame (a phone screen)", _drawn([RED], size=(270, 480)), False),
    ],
)
def test_drawings_screens_and_mixed_inks_are_not_a_card(name: str, image, card: bool) -> None:
    # A new user's screenshots of 1-3 stacked coloured buttons (1080 x 1920, 1536 x 2048) were
    # read as SET cards at 0.96-0.9998 (trial 7): flat, of a screen's proportions.
    assert (card_filling_frame(image) is not None) is card, name


def test_a_table_of_cards_is_not_one_card() -> None:
    from vision.data import REPO_ROOT

    table = cv2.imread(str(REPO_ROOT / "datasets" / "samples" / "table.jpg"))
    h, w = table.shape[:2]
    assert card_filling_frame(cv2.resize(table, (round(h / 1.56), h))) is None


def test_paper_framed_tells_a_card_crop_from_a_camera_photo_of_no_card() -> None:
    """The "one card cropped to its edges" hint asks it: a new user's trial had the hint on
    every 3:2 photo of no card (a bridge, a desk, black at 1,200 x 800)."""
    card = _card("2 green striped diamonds")
    assert paper_framed(card)
    rng = np.random.default_rng(0)
    blurred = cv2.GaussianBlur(card, (0, 0), 6).astype(np.float32)  # defocused, with grain
    blurred = np.clip(blurred + rng.normal(0, 3, blurred.shape), 0, 255).astype(np.uint8)
    assert paper_framed(blurred)
    assert not paper_framed(_drawn([RED], size=(300, 400)))  # not a card's proportions
    assert not paper_framed(np.zeros((800, 1200, 3), np.uint8))  # black


@pytest.mark.slow
def test_photos_of_no_card_have_no_paper_edges() -> None:
    from vision.data import shared_datasets

    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared photos not available")
    from vision.io import load_image

    for path in (
        "tables/omega697/app/src/androidTest/assets/scenes/desk_no_cards.jpg",
        "tables/piratefsh/images/brooklyn-bridge.jpg",
    ):
        image = load_image(root / path)
        assert not paper_framed(cv2.resize(image, (1200, 800), interpolation=cv2.INTER_AREA))
