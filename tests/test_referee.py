"""The referee (vision.referee, vision.referee_session): settled tables in, game events out, on
synthetic observations (table-driven and a property over whole scripted games), its journal
(rebuild, undo), the watcher on synthetic frames, and the command on a short rendered game."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.cards import Card, full_deck
from vision.game import Penalty
from vision.live import LiveFrame
from vision.referee import (
    Observation,
    Referee,
    TableWatcher,
    parse_players,
    referee_from_journal,
)
from vision.referee_session import Journal, open_journal, undo_last
from vision.render_video import game_script
from vision.rules import Variant, find_sets, is_set
from vision.touch import Touch
from vision.track import LiveTable, TrackedCard

DECK = list(full_deck())


class _Table:
    """A physical table: cards with ids, observed as a referee's settled observations."""

    def __init__(self) -> None:
        self.cards: dict[int, Card] = {}
        self.next_id = 0
        self.frame = 0

    def put(self, cards: list[Card]) -> None:
        for card in cards:
            self.cards[self.next_id] = card
            self.next_id += 1

    def take(self, cards: list[Card]) -> None:
        self.cards = {i: c for i, c in self.cards.items() if c not in cards}

    def ids(self, cards: list[Card]) -> frozenset[int]:
        return frozenset(i for i, c in self.cards.items() if c in cards)

    def seen(
        self, side: str | None = "bottom", lifted: frozenset[int] = frozenset()
    ) -> Observation:
        self.frame += 30
        return Observation(self.frame, self.frame / 30, dict(self.cards), side, lifted)


def _opening(seed: int = 0, with_set: bool = True) -> list[Card]:
    rng = np.random.default_rng(seed)
    while True:
        cards = [DECK[i] for i in rng.permutation(81)[:12]]
        if bool(find_sets(cards)) == with_set:
            return cards


def _a_non_set(cards: list[Card]) -> list[Card]:
    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            for k in range(j + 1, len(cards)):
                if not is_set(cards[i], cards[j], cards[k]):
                    return [cards[i], cards[j], cards[k]]
    raise AssertionError("all SETs")


def _types(events: list) -> list[str]:  # type: ignore[type-arg]
    return [e.type for e in events]


def test_a_deal_a_take_and_a_refill() -> None:
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    opening = _opening()
    table.put(opening)
    assert _types(ref.observe(table.seen("bottom"))) == ["deal"]
    trio = [opening[i] for i in find_sets(opening)[0]]
    table.take(trio)
    events = ref.observe(table.seen("left"))
    assert _types(events) == ["take"] and events[0].player == "Bob" and events[0].side == "left"
    assert events[0].scores == {"Ann": 0, "Bob": 1}
    assert ref.observe(table.seen("left")) == []  # the same table again: nothing
    table.put(list(ref.game.deck[:3]))
    assert _types(ref.observe(table.seen("bottom"))) == ["refill"]


def test_a_wrong_claim_lifted_and_put_back_costs_one_point_once() -> None:
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    wrong = _a_non_set(opening)
    events = ref.observe(table.seen("bottom", lifted=table.ids(wrong)))
    assert _types(events) == ["wrong_claim"] and events[0].player == "Ann"
    assert "lifted and put back" in events[0].message and events[0].scores["Ann"] == -1
    assert ref.observe(table.seen(None)) == []


def test_a_wrong_claim_taken_away_is_warned_and_its_return_is_no_deal() -> None:
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    wrong = _a_non_set(opening)
    table.take(wrong)
    events = ref.observe(table.seen("left"))
    assert _types(events) == ["wrong_claim", "warning"]
    assert "put them back" in events[1].message and events[0].scores["Bob"] == -1
    table.put(wrong)  # put back: new ids, the same cards
    assert ref.observe(table.seen("left")) == []
    assert len(ref.game.table) == 12


def test_a_card_lost_from_sight_during_a_take_is_no_part_of_it_nor_a_deal_seen_again() -> None:
    # The tracker lost a card the hand covered while a SET was taken: four cards left the
    # table. The SET among them was taken; the other is out of sight, still on the table.
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    trio = [opening[i] for i in find_sets(opening)[0]]
    # another card that makes no second SET with two of the three
    other = next(c for c in opening if c not in trio
                 and sum(is_set(*t) for t in combinations([*trio, c], 3)) == 1)  # fmt: skip
    table.take([*trio, other])
    events = ref.observe(table.seen("left"))
    assert _types(events) == ["take", "warning"] and events[0].player == "Bob"
    assert set(events[0].cards) == set(trio) and "1 card left the table" in events[1].message
    table.put([other])  # seen again, under a new id
    assert ref.observe(table.seen(None)) == []
    table.put(list(ref.game.deck[:3]))
    assert _types(ref.observe(table.seen("bottom"))) == ["refill"]
    assert len(ref.game.table) == 12


def test_a_card_found_again_under_a_new_id_is_neither_taken_nor_dealt() -> None:
    # The tracker lost a card and found it again between two settled tables: gone under its
    # old id, new under another. One deck holds each card once: nothing happened to it.
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    table.take([opening[5]])
    table.put([opening[5]])
    assert ref.observe(table.seen(None)) == []
    # ... and three such cards, lifted and put back, are a wrong claim as any other
    wrong = _a_non_set(opening)
    table.take(wrong)
    table.put(wrong)
    events = ref.observe(table.seen("left"))
    assert _types(events) == ["wrong_claim"] and set(events[0].cards) == set(wrong)
    assert len(ref.game.table) == 12


def test_a_wrong_claim_taken_away_and_put_back_under_its_ids_is_one_claim() -> None:
    # The tracker remembers the cards that left: put back where they lay, they keep their ids
    # and are seen as lifted and put back; they were away on the last settled table already.
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    wrong = _a_non_set(opening)
    kept = dict(table.cards)
    table.take(wrong)
    assert _types(ref.observe(table.seen("left"))) == ["wrong_claim", "warning"]
    table.cards = kept
    assert ref.observe(table.seen("left", lifted=table.ids(wrong))) == []
    assert ref.game.scores["Bob"] == -1 and len(ref.game.table) == 12


def test_three_more_dealt_while_a_set_is_on_the_table_is_warned_with_the_set_named() -> None:
    table, ref = _Table(), Referee()
    opening = _opening(with_set=True)
    table.put(opening)
    ref.observe(table.seen())
    extra = [c for c in DECK if c not in opening][:3]
    table.put(extra)
    events = ref.observe(table.seen("right"))
    assert _types(events) == ["warning", "deal_extra"]
    assert "no extra cards while a SET is on the table" in events[0].message
    assert "one SET:" in events[0].message
    assert len(ref.game.table) == 15  # the game follows the table as it is


def test_a_refill_above_12_after_a_set_from_15_is_warned() -> None:
    for seed in range(500):
        opening = _opening(seed, with_set=False)
        rest = [c for c in DECK if c not in opening]
        fifteen = opening + rest[:3]
        if find_sets(fifteen) and find_sets(
            [c for c in fifteen if c not in [fifteen[i] for i in find_sets(fifteen)[0]]]
        ):
            break
    table, ref = _Table(), Referee()
    table.put(opening)
    ref.observe(table.seen())
    table.put(rest[:3])
    assert _types(ref.observe(table.seen())) == ["deal_extra"]
    trio = [fifteen[i] for i in find_sets(fifteen)[0]]
    table.take(trio)
    assert _types(ref.observe(table.seen())) == ["take"]
    table.put(rest[3:6])
    events = ref.observe(table.seen())
    assert events[0].type == "warning" and "refilled above 12" in events[0].message


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda t, o: t.put([o[0]]), "seen twice"),
        (lambda t, o: t.take(o[:2]), "2 cards left the table without a claim"),
    ],
)
def test_what_is_wrong_on_the_table_is_warned(change, words: str) -> None:  # type: ignore[no-untyped-def]
    table, ref = _Table(), Referee()
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    change(table, opening)
    events = ref.observe(table.seen())
    assert any(e.type == "warning" and words in e.message for e in events), events


def test_a_take_from_a_side_nobody_plays_from_scores_for_nobody() -> None:
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:top"))
    opening = _opening()
    table.put(opening)
    ref.observe(table.seen())
    table.take([opening[i] for i in find_sets(opening)[0]])
    events = ref.observe(table.seen("right"))
    assert _types(events) == ["warning"] and "nobody plays" in events[0].message
    assert ref.game.scores == {"Ann": 0, "Bob": 0}


def test_an_opening_of_another_decks_cards_is_a_warning_not_a_crash() -> None:
    table, ref = _Table(), Referee(variant=Variant.BEGINNER_SOLID)
    table.put([c for c in DECK if c.fill.value != "solid"][:9])
    events = ref.observe(table.seen())
    assert _types(events) == ["warning"] and "cannot be this deck's" in events[0].message
    assert ref.finish(99, 3.3) == []  # no game was started, so none ends


def test_the_end_of_the_video_ends_the_game() -> None:
    table, ref = _Table(), Referee(parse_players("Ann:bottom,Bob:left"))
    table.put(_opening())
    ref.observe(table.seen())
    events = ref.finish(999, 33.3)
    assert _types(events) == ["game_over"] and "the players stopped" in events[0].message
    assert ref.finish(1000, 33.4) == [] or ref.game.over is False


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), takes=st.integers(1, 8))
def test_a_scripted_game_seen_perfectly_is_refereed_exactly(seed: int, takes: int) -> None:
    # Property: whatever legal game is played, perfect observations give exactly its events
    # and its scores.
    rng = np.random.default_rng(seed)
    script = game_script(rng, takes=takes, wrong_claims=1)
    table, ref = _Table(), Referee()
    expected, scores = [], dict.fromkeys(("bottom", "left", "right", "top"), 0)
    count = 0
    for step in script:
        cards = list(step.cards)
        if step.kind in ("deal", "add"):
            kind = "deal" if step.kind == "deal" else ("refill" if count < 12 else "deal_extra")
            table.put(cards)
            count += len(cards)
            obs = table.seen(step.side)
        elif step.kind == "take":
            kind = "take"
            table.take(cards)
            count -= 3
            scores[step.side] += 1
            obs = table.seen(step.side)
        else:
            kind = "wrong_claim"
            scores[step.side] -= 1
            obs = table.seen(step.side, lifted=table.ids(cards))
        expected.append(kind)
        events = ref.observe(obs)
        assert _types(events) == [kind], (step, events)
        assert {frozenset(e.cards) for e in events} == {frozenset(cards)}
    assert ref.game.scores == scores


# -- players ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, {"bottom": "bottom", "left": "left", "right": "right", "top": "top"}),
        ("Ann:bottom, Bob:LEFT", {"bottom": "Ann", "left": "Bob"}),
    ],
)
def test_players_by_side(text: str | None, expected: dict[str, str]) -> None:
    assert parse_players(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [("Ann", "NAME:SIDE"), ("Ann:middle", "not a side"), ("Ann:top,Bob:top", "twice"),
     ("Ann:top,Ann:left", "given twice"), (":top", "NAME:SIDE"),
     ("Ann:bottom;Bob:left", "cannot hold"), ("A:B:top", "cannot hold")],
)  # fmt: skip
def test_bad_players_are_refused(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_players(text)


# -- the journal ----------------------------------------------------------------------------


def _played(path: Path) -> tuple[Referee, _Table]:
    players = parse_players("Ann:bottom,Bob:left")
    journal, ref = open_journal(path, resume=False, players=players, penalty=Penalty.LOSE_POINT,
                                variant=Variant.STANDARD)  # fmt: skip
    table = _Table()
    opening = _opening()
    table.put(opening)
    steps = [table.seen("bottom")]
    trio = [opening[i] for i in find_sets(opening)[0]]
    table.take(trio)
    steps.append(table.seen("left"))
    wrong = _a_non_set(list(table.cards.values()))
    steps.append(table.seen("bottom", lifted=table.ids(wrong)))
    for obs in steps:
        for event in ref.observe(obs):
            journal.write(event.to_json())
    journal.close()
    return ref, table


def test_the_journal_rebuilds_the_game_and_undo_takes_back_the_last_event(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    ref, table = _played(path)
    assert ref.game.scores == {"Ann": -1, "Bob": 1}
    journal, again = open_journal(path, resume=True, players={}, penalty=Penalty.NONE,
                                  variant=Variant.STANDARD)  # fmt: skip
    journal.close()
    a, b = again.game.state(), ref.game.state()  # the deck's order is unknown to a referee
    assert (a.table, a.sets, a.penalty_points, set(a.deck)) == (
        b.table, b.sets, b.penalty_points, set(b.deck))  # fmt: skip
    assert again.players == ref.players
    undone = undo_last(path)
    assert undone is not None and undone.type == "wrong_claim"
    lines = path.read_text().splitlines()
    # nothing erased: the set-up, 3 events, the resume's mark, the undo
    assert json.loads(lines[-1])["type"] == "undo" and len(lines) == 6
    rebuilt = referee_from_journal(lines, players=ref.players)
    assert rebuilt.game.scores == {"Ann": 0, "Bob": 1}
    # Resumed on the same table: it matches, so nothing is said.
    assert rebuilt.observe(table.seen(None)) == []


def test_a_resumed_game_says_when_the_table_in_view_is_not_the_journals(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    _, table = _played(path)
    _, again = open_journal(path, resume=True, players={}, penalty=Penalty.NONE,
                            variant=Variant.STANDARD)  # fmt: skip
    table.take(list(table.cards.values())[:1])
    events = again.observe(table.seen(None))
    assert _types(events) == ["warning"] and "does not match the journal" in events[0].message


@pytest.mark.parametrize(
    ("content", "words"),
    [("", "no set-up"), ("not json\n", "no set-up"),
     ('{"type":"start","players":{"bottom":"A"},"penalty":"none","variant":"standard"}\n'
      '{"type":"take","cards":[{"count":1}]}\n', "cannot be read"),
     ('{"type":"start","players":{"bottom":"A"},"penalty":"none","variant":"standard"}\n'
      '{"type":"dance"}\n', "unknown event type")],
)  # fmt: skip
def test_a_broken_journal_is_one_clear_error(tmp_path: Path, content: str, words: str) -> None:
    from vision.errors import SetVisionError

    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(SetVisionError, match=words):
        open_journal(path, resume=True, players={}, penalty=Penalty.NONE,
                     variant=Variant.STANDARD)  # fmt: skip
    assert path.read_text() == content  # nothing written to it


def test_a_journal_torn_by_a_crash_resumes_without_its_last_half_line(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    _played(path)
    whole = path.read_text()
    path.write_text(whole + whole.splitlines()[-1][:40])  # a line cut short
    journal, again = open_journal(path, resume=True, players={}, penalty=Penalty.NONE,
                                  variant=Variant.STANDARD)  # fmt: skip
    journal.close()
    assert again.game.scores == {"Ann": -1, "Bob": 1}
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "resume"  # written on a line of its own


def test_a_finished_game_is_not_resumed(tmp_path: Path) -> None:
    from vision.errors import SetVisionError

    path = tmp_path / "game.jsonl"
    ref, _ = _played(path)
    with path.open("a") as f:
        f.write(json.dumps(ref.finish(500, 20.0)[0].to_json()) + "\n")
    with pytest.raises(SetVisionError, match="game is over"):
        open_journal(path, resume=True, players={}, penalty=Penalty.NONE,
                     variant=Variant.STANDARD)  # fmt: skip


def test_a_new_journal_never_replaces_one(tmp_path: Path) -> None:
    from vision.errors import SetVisionError

    path = tmp_path / "game.jsonl"
    path.write_text("mine\n")
    with pytest.raises(SetVisionError, match="--resume"):
        Journal(path)
    assert path.read_text() == "mine\n"


# -- the watcher ----------------------------------------------------------------------------


def _live(index: int, cards: dict[int, Card], hand: bool = False, read: bool = True,
          arm_side: str | None = None) -> LiveFrame:  # fmt: skip
    arm = np.zeros((60, 80), bool)
    if arm_side == "left":
        arm[20:40, :30] = True
    tracked = tuple(TrackedCard(i, c, 0.99, False, np.zeros((4, 2), np.float32) + i, True)
                    for i, c in cards.items())  # fmt: skip
    touch = Touch(hand, False, 0.0, np.zeros((60, 80), bool), arm)
    return LiveFrame(index, index / 30, np.zeros((60, 80, 3), np.uint8),
                     LiveTable(tracked, (), hand), touch, read)  # fmt: skip


def test_the_watcher_reports_a_table_once_settled_with_the_hands_side() -> None:
    watcher = TableWatcher()
    cards = dict(enumerate(DECK[:12]))
    seen = []
    for k in range(10):
        seen.append(watcher.update(_live(k, cards, hand=True, arm_side="left")))
    for k in range(10, 40):
        seen.append(watcher.update(_live(k, cards, read=k % 6 == 0)))
    reported = [o for o in seen if o is not None]
    assert len(reported) == 1
    assert reported[0].side == "left" and reported[0].time_s >= 10 / 30 + 0.5
    assert dict(reported[0].cards) == cards


def test_the_watcher_notes_cards_lifted_and_put_back() -> None:
    watcher = TableWatcher()
    cards = dict(enumerate(DECK[:12]))
    for k in range(20):
        watcher.update(_live(k, cards))
    lifted = {i: c for i, c in cards.items() if i not in (1, 2, 3)}
    for k in range(20, 30):
        watcher.update(_live(k, lifted, hand=True, arm_side="left"))
    obs = [watcher.update(_live(k, cards, read=True)) for k in range(30, 60)]
    reported = [o for o in obs if o is not None]
    assert reported and reported[0].lifted == frozenset({1, 2, 3})


def test_a_card_lost_and_found_again_on_a_calm_table_was_not_lifted() -> None:
    """The tracker losing a card for a moment after the hand left (a read that missed it) is
    not a fourth card of the claim: no card moves untouched."""
    watcher = TableWatcher()
    cards = dict(enumerate(DECK[:12]))
    for k in range(20):
        watcher.update(_live(k, cards))
    lifted = {i: c for i, c in cards.items() if i not in (1, 2, 3)}
    for k in range(20, 30):
        watcher.update(_live(k, lifted, hand=True, arm_side="left"))
    flicker = {i: c for i, c in cards.items() if i != 7}
    obs = [watcher.update(_live(k, flicker if k < 36 else cards, read=True))
           for k in range(30, 60)]  # fmt: skip
    reported = [o for o in obs if o is not None]
    assert reported and reported[0].lifted == frozenset({1, 2, 3})


# -- the command ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def game_frames(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short rendered game as a folder of frames: 12 dealt from the bottom, a SET taken
    from the left."""
    import cv2

    from vision.render_video import GameVideo, Step

    rng = np.random.default_rng(4)
    dealt = [DECK[i] for i in rng.permutation(81)[:12]]
    while not find_sets(dealt):
        dealt = [DECK[i] for i in rng.permutation(81)[:12]]
    taken = tuple(dealt[i] for i in find_sets(dealt)[0])
    video = GameVideo([Step("deal", tuple(dealt), "bottom"), Step("take", taken, "left")],
                      np.random.default_rng(2), size=(800, 450), fps=10.0, tilt_deg=10,
                      settle_s=1.2, background="cloth")  # fmt: skip
    folder = tmp_path_factory.mktemp("game")
    for f in video.frames():
        cv2.imwrite(str(folder / f"f{f.index:04d}.png"), f.image)
    return folder


@pytest.mark.slow
def test_the_command_referees_a_rendered_game_and_undo_takes_back(
    game_frames: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.cli import run

    journal = tmp_path / "game.jsonl"
    code = run(["referee", str(game_frames), "--fps", "10", "--no-window", "--events", "-",
                "--journal", str(journal), "--players", "Ann:bottom,Bob:left"])  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["type"] for e in lines] == ["deal", "take", "game_over"]
    assert all(set(e) == {"frame", "time_s", "type", "cards", "side", "player", "message",
                          "scores"} for e in lines)  # fmt: skip
    take = lines[1]
    assert take["player"] == "Bob" and take["side"] == "left" and len(take["cards"]) == 3
    assert lines[-1]["scores"] == {"Ann": 0, "Bob": 1}
    assert len(journal.read_text().splitlines()) == 4  # the set-up, then each event
    assert run(["referee", "undo", str(journal)]) == 0
    assert "took back: the players stopped" in capsys.readouterr().out
    # A second run does not replace the journal.
    assert run(["referee", str(game_frames), "--no-window", "--journal", str(journal)]) == 2
    assert "--resume" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "words"),
    [(["referee", "undo"], "give the journal"),
     (["referee", "a.mp4", "b.mp4"], "one SOURCE"),
     (["referee", "x", "--penalty", "shout"], "--penalty"),
     (["referee", "x", "--variant", "tiny"], "--variant"),
     (["referee", "x", "--players", "Ann:middle"], "not a side"),
     (["referee", "x", "--players", "Ann:top", "--penalty", "sit-out"], "two players")],
)  # fmt: skip
def test_bad_referee_options_are_one_line(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.cli import run

    assert run(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
