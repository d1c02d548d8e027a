"""The live and referee evaluation scripts' scoring (scripts/eval_live.py, eval_referee.py):
what they count as found, late, extra or on the table, on synthetic events and frames."""

from __future__ import annotations

import numpy as np
import pytest

from tests._scripts import load_script
from vision.cards import full_deck
from vision.referee import RefereeEvent

DECK = full_deck()


@pytest.fixture(scope="module")
def eval_referee():  # type: ignore[no-untyped-def]
    return load_script("eval_referee")


def _event(kind: str, t: float, cards=(), side=None) -> RefereeEvent:  # type: ignore[no-untyped-def]
    return RefereeEvent(0, t, kind, tuple(cards), side, None, "", {})


@pytest.mark.parametrize(
    ("given", "found", "extra"),
    [
        ([_event("take", 5.6, DECK[:3], "left")], 1, 0),  # on time
        ([_event("take", 6.2, DECK[:3], "left")], 0, 1),  # more than 1 s after the hand left
        ([_event("take", 4.9, DECK[:3], "left")], 0, 1),  # before it happened
        ([_event("take", 5.6, DECK[3:6], "left")], 0, 1),  # other cards
        ([_event("wrong_claim", 5.6, DECK[:3], "left")], 0, 1),  # another type
        ([_event("warning", 5.6, DECK[:3]), _event("take", 5.9, DECK[:3], "top")], 1, 0),
    ],
)
def test_an_event_is_found_with_its_type_and_cards_within_a_second(
    eval_referee, given, found: int, extra: int
) -> None:  # type: ignore[no-untyped-def]
    truth = [{"type": "take", "cards": frozenset(DECK[:3]), "side": "left", "time_s": 5.0}]
    result = eval_referee.match(truth, given)
    assert (result["found"], len(result["extra"])) == (found, extra)
    assert result["given"] == len([e for e in given if e.type != "warning"])


def test_the_side_is_judged_on_takes(eval_referee) -> None:  # type: ignore[no-untyped-def]
    truth = [{"type": "take", "cards": frozenset(DECK[:3]), "side": "left", "time_s": 5.0}]
    result = eval_referee.match(truth, [_event("take", 5.5, DECK[:3], "top")])
    assert (result["sided"], result["side_right"]) == (1, 0)


def test_game_over_may_come_up_to_two_seconds_late(eval_referee) -> None:  # type: ignore[no-untyped-def]
    truth = [{"type": "game_over", "cards": frozenset(), "side": None, "time_s": 10.0}]
    assert eval_referee.match(truth, [_event("game_over", 11.8)])["found"] == 1
    assert eval_referee.match(truth, [_event("game_over", 12.3)])["found"] == 0


def test_a_script_with_rule_breaks_breaks_them(eval_referee) -> None:  # type: ignore[no-untyped-def]
    from vision.game import Game, IllegalMove

    script = eval_referee.broken_script(np.random.default_rng(0))
    assert [s.kind for s in script] == ["deal", "add", "take", "add"]
    game = Game(deal=False, auto_refill=False)
    game.deal(script[0].cards)
    with pytest.raises(IllegalMove, match="no extra cards while a SET"):
        game.deal(script[1].cards)
    game.deal(script[1].cards, despite_rules=True)
    game.claim("player", script[2].cards)
    with pytest.raises(IllegalMove, match="refilled above 12"):
        game.deal(script[3].cards)
