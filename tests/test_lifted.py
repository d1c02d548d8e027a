"""vision.lifted: a card's place under a hand shows the table (lifted) or the hand (covered)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.lifted import edge_step, shows_table

H, W = 120, 200
TABLE = (40, 120, 110)  # BGR olive cloth
SKIN = (120, 150, 200)
CARD = (235, 235, 235)
QUAD = np.array([[80, 30], [110, 30], [110, 72], [80, 72]], np.float32)
OTHER = np.array([[130, 30], [160, 30], [160, 72], [130, 72]], np.float32)


def scene(place: tuple[int, int, int], skin: tuple[int, int, int] = SKIN, table=TABLE):
    """The still table (cards on cloth) and this frame: an arm from the bottom edge up to the
    card's lower half, the card's place showing ``place`` above the arm."""
    rng = np.random.default_rng(0)
    still = np.empty((H, W, 3), np.int16)
    still[:] = table
    still += rng.integers(-4, 5, still.shape).astype(np.int16)
    for q in (QUAD, OTHER):
        still[int(q[0, 1]):int(q[2, 1]), int(q[0, 0]):int(q[1, 0])] = CARD
    now = still.copy()
    now[32:70, 82:108] = place
    arm = np.zeros((H, W), bool)
    arm[55:, 86:104] = True
    now[arm] = skin
    changed = np.abs(now - still).max(axis=2) > 18
    return now, still, changed, arm & changed


@pytest.mark.parametrize(
    ("place", "skin", "table", "expected"),
    [
        (TABLE, SKIN, TABLE, True),  # the card's place shows the cloth: lifted
        (SKIN, SKIN, TABLE, False),  # the hand lies over all of it: covered
        ((20, 60, 200), SKIN, TABLE, False),  # something else (a sleeve): not the table
        (TABLE, (42, 118, 112), TABLE, False),  # a hand of the table's colour: cannot tell
    ],
)
def test_shows_table(place, skin, table, expected):
    now, still, changed, arm = scene(place, skin, table)
    assert shows_table(QUAD, [OTHER], now, still, changed, arm) is expected


def test_too_few_pixels_cannot_tell():
    now, still, changed, arm = scene(TABLE)
    assert shows_table(QUAD, [OTHER], now, still, changed, np.zeros_like(arm)) is False


def _changed(lifted: bool, arm: bool) -> np.ndarray:
    """What changed against the still table: the card's place (lifted) and an arm strip from the
    bottom edge over the card's lower half."""
    changed = np.zeros((H, W), bool)
    if lifted:
        changed[30:73, 80:111] = True
    if arm:
        changed[55:, 88:102] = True
    return changed


@pytest.mark.parametrize(
    ("lifted", "arm", "expected"),
    [
        (True, True, True),  # the place laid bare, the hand still over part of it
        (True, False, True),
        (False, True, False),  # a hand over the card: the change crosses its outline
        (False, False, False),
    ],
)
def test_edge_step_tells_a_place_laid_bare_whatever_the_colours(lifted, arm, expected):
    assert edge_step(QUAD, _changed(lifted, arm)) is expected


def test_a_hand_ending_inside_a_card_is_no_step():
    changed = np.zeros((H, W), bool)
    changed[45:60, 88:102] = True  # a fingertip's change, inside the card, away from its edge
    assert edge_step(QUAD, changed) is False
