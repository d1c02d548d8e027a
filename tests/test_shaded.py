"""extend_sides: a side stopped on a shadow's edge inside a card is moved out to the card's
edge on a dark table, and nowhere else."""

from __future__ import annotations

import numpy as np

from vision.detect.shaded import extend_sides

#: Three cards (x0, x1) in a row, 120 px tall, on a dark table.
_CARDS = ((40, 120), (160, 240), (280, 360))


def _table(paper: int = 230, table: int = 40) -> np.ndarray:
    image = np.full((200, 400, 3), table, np.uint8)
    for x0, x1 in _CARDS:
        image[40:160, x0:x1] = paper
        image[80:120, x0 + 25 : x1 - 25] = (60, 60, 200)  # a red symbol
    return image


def _quads(right_of_middle: float = 239.0) -> np.ndarray:
    quads = np.array([[[x0, 40], [x1 - 1, 40], [x1 - 1, 159], [x0, 159]] for x0, x1 in _CARDS])
    quads = quads.astype(np.float64)
    quads[1, 1:3, 0] = right_of_middle
    return quads


def test_side_on_a_shadow_edge_moves_to_the_card_edge():
    image = _table()
    image[40:160, 225:240] = (np.array([230, 230, 230]) * 0.5).astype(np.uint8)  # shade
    image[:, 240:265] = (image[:, 240:265] * 0.5).astype(np.uint8)
    grown = extend_sides(image, _quads(224.0), np.ones(3, dtype=bool), 40.0)
    assert np.abs(grown[1, 1:3, 0] - 239.5).max() < 1.5
    assert np.abs(grown[1, [0, 3], 0] - 160.0).max() < 1e-9  # the other sides stay
    assert (grown[[0, 2]] == _quads()[[0, 2]]).all()


def test_nothing_moves_on_a_white_sheet():
    # Cards on a white sheet ruled with dark lines: the sheet beyond a card's side looks like
    # paper and a line beyond it like a table, but the cards lie on no dark table.
    image = _table(table=225)
    image[:, 250:262] = 60
    grown = extend_sides(image, _quads(), np.ones(3, dtype=bool), 40.0)
    assert (grown == _quads()).all()


def test_nothing_moves_into_a_touching_card():
    # The paper beyond the middle card's side is a touching card found on its own, with a dark
    # symbol near its side.
    image = _table()
    image[40:160, 160:280] = 230
    image[80:120, 170:190] = (60, 60, 200)
    image[50:150, 206:226] = 50
    quads = _quads(199.0)
    quads[2, [0, 3], 0] = 200.0
    grown = extend_sides(image, quads, np.ones(3, dtype=bool), 40.0)
    assert (grown == quads).all()


def test_partial_cards_stay():
    image = _table()
    image[40:160, 225:240] = 115
    quads = _quads(224.0)
    grown = extend_sides(image, quads, np.array([True, False, True]), 40.0)
    assert (grown == quads).all()
