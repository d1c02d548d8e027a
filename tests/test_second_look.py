"""The detector's second look (vision.detect.second_look) on synthetic working images: when it
searches again, what it adds and what it refuses."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect import CardDetections
from vision.detect.find import find_cards
from vision.detect.masks import balance, brighten
from vision.detect.second_look import second_look, sharpened, unexplained_ink

from .test_detect import CARD_H, CARD_W, card_corners, render_card


def _quad(x: float, y: float, w: float = 60.0, h: float = 94.0) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64)


def _scene(cards: list[np.ndarray], ink_at: list[tuple[int, int]] = ()) -> np.ndarray:
    """(400, 640, 3) dark table with white paper at ``cards`` (working px) and, off them,
    red ink blobs of symbol size at ``ink_at``."""
    small = np.full((400, 640, 3), 50, np.uint8)
    for q in cards:
        cv2.fillPoly(small, [q.round().astype(np.int32)], (235, 235, 235))
    for x, y in ink_at:
        cv2.ellipse(small, (x, y), (18, 8), 0, 0, 360, (40, 40, 210), -1)
    return small


def _look(small, k, found, search):
    """:func:`second_look` with the working image balanced as the search balances it."""
    return second_look(small, brighten(balance(small))[0], k, found, search)


def _detections(quads: list[np.ndarray], k: int = 1) -> CardDetections:
    corners = np.array([(q + 0.5) * k - 0.5 for q in quads], np.float32).reshape(-1, 4, 2)
    n = len(corners)
    return CardDetections(corners, np.full(n, 0.9, np.float32), np.zeros(n, bool))


@pytest.mark.parametrize(
    ("ink_at", "expected"),
    [
        ([], False),  # nothing off the cards
        ([(90, 150)], False),  # ink on a found card (a symbol)
        ([(330, 147)], True),  # a symbol on paper off the found card: a card was missed
        ([(500, 330)], False),  # coloured, symbol-sized, but on the dark table: not on paper
    ],
)
def test_unexplained_ink(ink_at: list[tuple[int, int]], expected: bool) -> None:
    card, missed = _quad(60, 100), _quad(300, 100)
    small = _scene([card, missed], ink_at)
    assert unexplained_ink(small, card[None]) is expected


def test_unexplained_ink_ignores_blobs_far_larger_than_a_symbol() -> None:
    card = _quad(60, 100)
    small = _scene([card, _quad(300, 100, 300, 280)])  # a large sheet of paper
    small[250:330, 360:560] = (40, 40, 210)  # a red print on it, larger than a card's symbols
    assert not unexplained_ink(small, card[None])


def test_unexplained_ink_with_no_paper_on_the_cards_found() -> None:
    """Every pixel of the found card coloured (a strong cast): nothing to compare with."""
    card = _quad(60, 100)
    small = _scene([card], ink_at=[(330, 147)])
    small[:] = (20, 120, 230)
    assert not unexplained_ink(small, card[None])


def test_sharpened_keeps_shape_and_flat_areas() -> None:
    image = np.full((50, 80, 3), 120, np.uint8)
    image[:, 40:] = 200
    out = sharpened(image)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert (out[:, :30] == 120).all() and (out[:, 50:] == 200).all()
    assert out[:, 39].max() < 120 and out[:, 40].min() > 200  # the step steepened


def test_second_look_adds_only_new_card_sized_cards() -> None:
    found_quad, missed = _quad(60, 100), _quad(300, 100)
    small = _scene([found_quad, missed], ink_at=[(330, 147)])
    searched = []

    def search(copy: np.ndarray) -> CardDetections:
        searched.append(copy.shape)
        return _detections(
            [
                found_quad + 2.0,  # the card found already: not added twice
                missed,  # the card the first search missed
                _quad(500, 250, 12, 19),  # far smaller than the cards: not a card here
            ]
        )

    k = 3
    found = _detections([found_quad], k)
    out = _look(small, k, found, search)
    assert searched == [small.shape]  # the copy searched is the working image
    assert len(out) == 2
    np.testing.assert_allclose(out.corners[1], (missed + 0.5) * k - 0.5, atol=1e-4)
    # No ink off the found cards: no second search at all.
    calm, both = _scene([found_quad, missed]), _detections([found_quad, missed], k)
    assert _look(calm, k, both, search) is both
    assert len(searched) == 1
    # Nothing found the first time: nothing to compare with, no second search.
    empty = CardDetections.empty()
    assert _look(small, k, empty, search) is empty and len(searched) == 1


def test_second_look_refuses_a_quad_on_a_found_card_or_not_paper() -> None:
    found_quad = _quad(60, 100)
    small = _scene([found_quad], ink_at=[(330, 147)])
    half_on = found_quad + np.array([30.0, 0.0])  # half of it lies on the found card
    dark = _quad(300, 100)  # card-shaped, but the table there is dark: no paper
    out = _look(small, 1, _detections([found_quad]), lambda c: _detections([half_on, dark]))
    assert len(out) == 1


def test_find_cards_second_look_can_be_turned_off() -> None:
    card, mask = render_card()
    frame = np.full((700, 900, 3), 60, np.uint8)
    h = cv2.getPerspectiveTransform(
        card_corners(), _quad(200, 150, CARD_W, CARD_H).astype(np.float32)
    )
    warped = cv2.warpPerspective(card, h, (900, 700))
    inside = cv2.warpPerspective(mask, h, (900, 700)) > 0
    frame[inside] = warped[inside]
    a, b = find_cards(frame), find_cards(frame, second_look=False)
    assert len(a) == len(b) == 1
    np.testing.assert_array_equal(a.corners, b.corners)


def test_second_look_on_random_scenes_never_fails() -> None:
    """Noise, blank frames, random white boxes with blobs, found quads anywhere (cut by the
    frame, degenerate): a detections object back, finite, never an error."""
    rng = np.random.default_rng(0)
    for trial in range(30):
        h, w = int(rng.integers(40, 300)), int(rng.integers(40, 300))
        small = (
            rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            if trial % 3 == 0
            else (np.full((h, w, 3), int(rng.integers(0, 256)), np.uint8))
        )
        for _ in range(int(rng.integers(0, 6))):
            x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
            small[y : y + 40, x : x + 25] = 235
            cv2.circle(
                small, (x + 12, y + 20), 6, tuple(int(c) for c in rng.integers(0, 256, 3)), -1
            )
        quads = rng.uniform(-50, 350, (int(rng.integers(1, 4)), 4, 2))
        if trial % 5 == 0:
            quads[0] = quads[0, :1]  # all four corners at one point: no area
        found = _detections(list(quads))
        out = _look(small, 1, found, lambda c: _detections(list(rng.uniform(0, 300, (2, 4, 2)))))
        assert len(out) >= len(found) and np.isfinite(out.corners).all()
