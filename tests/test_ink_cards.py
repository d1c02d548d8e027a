"""Unit tests of helpers in vision.detect.ink_cards."""

from __future__ import annotations

import numpy as np

from vision.detect.ink_cards import _crowded


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
