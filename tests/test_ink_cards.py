"""Unit tests of helpers in vision.detect.ink_cards."""

from __future__ import annotations

import cv2
import numpy as np

from tests.test_detect import _white_desk, rect_quad, render_card
from vision.detect.geometry import clockwise
from vision.detect.ink_cards import _crowded, _recentre, ink_cards
from vision.detect.scoring import ink_offset


def test_words_round_a_card_crowd_it_neighbouring_cards_do_not():
    # A card 60 x 94 px at (100, 100); its own two symbols inside.
    card = np.array([[[100.0, 100.0], [160.0, 100.0], [160.0, 194.0], [100.0, 194.0]]])
    own = [[130.0, 133.0], [130.0, 161.0]]
    # Neighbouring cards a 4 % gap away: symbols of the card to the right (its middle ones)
    # and of the card below (its top one of three).
    right = [[130.0 + 62.4, 147.0]]
    below = [[130.0, 147.0 + 97.8 - 28.2]]
    assert not _crowded(card, np.array(own + right + below))[0]
    # Words on a page: the next words in the rows, under a card's width from its middle.
    assert _crowded(card, np.array([*own, [175.0, 133.0]]))[0]
    assert _crowded(card, np.array([*own, [80.0, 161.0]]))[0]
    assert not _crowded(card, np.zeros((0, 2)))[0]


def test_a_side_beyond_the_card_is_mirrored_back_a_side_inside_it_is_not():
    # A white card as bright as the white desk (no edge of its own), three centred symbols.
    card, _ = render_card(colour=(150, 50, 120), count=3, solid=True)
    card[(card == 245).all(axis=2)] = 240
    truth = rect_quad(640, 360, 300, 0).astype(np.float64)
    frame = _white_desk([truth.astype(np.float32)], [card], rim=0.0)
    grey = cv2.min(cv2.min(frame[..., 0], frame[..., 1]), frame[..., 2])
    wide, short = truth.copy(), truth.copy()
    wide[[0, 3], 0] -= 26  # the left side out on the desk (a neighbour's edge)
    short[[0, 3], 0] += 26  # the left side inside the card
    quads = np.stack([clockwise(wide), clockwise(short)])
    offset, colour = ink_offset(frame, quads)
    assert (offset > 0.05).all()
    out, new_offset = _recentre(frame, grey, quads, offset, colour, 1088.0, np.array([640, 360]))
    err = np.abs(np.sort(out[0], axis=0) - np.sort(truth, axis=0)).max()
    assert err < 2.0 and new_offset[0] < 0.05
    # Mirrored, the left side would move out; the right side mirrored in makes it too narrow.
    assert np.array_equal(out[1], quads[1]) and new_offset[1] == offset[1]


def test_symbols_chained_beyond_a_card_give_no_card_and_no_error():
    # Four same-size symbols stacked at the printed pitch link into one chain, more than a
    # card holds: no group is left. (Found on an omega697 chip, where find_cards raised.)
    img = np.full((400, 400, 3), 235, np.uint8)
    for k in range(4):
        cv2.ellipse(img, (200, 110 + 60 * k), (55, 20), 0, 0, 360, (60, 160, 40), -1)
    unplaced: list[np.ndarray] = []
    quads, scores = ink_cards(img, np.zeros((0, 4, 2)), 400.0, np.array([200.0, 200.0]), 0.3,
                              2000.0, unplaced)  # fmt: skip
    assert quads.shape == (0, 4, 2) and scores.shape == (0,) and unplaced == []
