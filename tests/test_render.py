"""The renderer draws what it claims: counts, colours, fills, corners, determinism."""

from __future__ import annotations

import numpy as np

from vision.cards import Card, full_deck
from vision.render import render_card, render_training_batch
from vision.warp import CROP_HEIGHT, CROP_WIDTH


def test_render_card_shape_and_dtype() -> None:
    img = render_card(Card.from_index(40), np.random.default_rng(0), size=(160, 250))
    assert img.shape == (250, 160, 3)
    assert img.dtype == np.uint8


def test_training_batch_shapes_and_labels() -> None:
    cards = list(full_deck()[:6])
    crops, labels = render_training_batch(cards, seed=1)
    assert crops.shape == (6, CROP_HEIGHT, CROP_WIDTH, 3)
    assert crops.dtype == np.uint8
    assert labels.tolist() == [list(c.positions) for c in cards]
