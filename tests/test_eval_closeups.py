"""The close-up evaluation (scripts/eval_closeups.py): windows round a card hold the cards wholly
inside them, in the window's pixels; a card is found by a detection centred on it, once."""

from __future__ import annotations

import numpy as np
import pytest

from tests._scripts import load_script

closeups = load_script("eval_closeups")


def _card(cx: float, cy: float, w: float = 60, h: float = 90) -> list[list[float]]:
    return [[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2],
            [cx - w / 2, cy + h / 2]]  # fmt: skip


def test_a_closeup_holds_the_whole_cards_inside_it_in_its_own_pixels() -> None:
    image = np.zeros((1000, 2000, 3), np.uint8)
    cards = np.array([_card(300 + 80 * i, 500) for i in range(20)], np.float64)
    rng = np.random.default_rng(3)
    for _ in range(20):
        window, truth = closeups.closeup(image, cards, rng)
        lo, hi = closeups.LONG_SIDE
        assert lo - 1 <= max(window.shape[:2]) <= hi + 1
        assert 1 <= len(truth) <= 6  # a 2-3.6 card-size window round a card of a row
        assert (truth >= -1e-6).all()
        assert (truth[..., 0] <= window.shape[1]).all() and (truth[..., 1] <= window.shape[0]).all()
        widths = truth[:, 1, 0] - truth[:, 0, 0]  # all the same card, scaled alike
        assert np.allclose(widths, widths[0])


def test_a_card_is_found_once_by_a_detection_centred_on_it() -> None:
    truth = np.array([_card(100, 100), _card(200, 100)], np.float64)
    assert closeups.found_cards(truth, np.zeros((0, 4, 2))) == 0
    assert closeups.found_cards(truth, truth + 5.0) == 2  # a few pixels off: found
    assert closeups.found_cards(truth, truth[:1] + 40.0) == 0  # half a card off: not
    assert closeups.found_cards(truth, truth[:1]) == 1  # one detection finds one card only


@pytest.mark.parametrize("args", [["--per-photo", "0"], ["--enlarge-to", "0"]])
def test_bad_counts_are_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        closeups.main(args)
    assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err
