"""vision.lifted: a card's place under a hand shows the table (lifted) or the hand (covered)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.lifted import shows_table

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
