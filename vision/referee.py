"""A referee for a physical game of SET seen through a camera: the live tracker's frames in,
game events out, checked by the rules engine (:mod:`vision.game`).

Camera referees of other games wait for the board to be still and ignore frames with a hand
in view; this one does the same. :class:`TableWatcher` turns the tracker's frames
(:class:`vision.live.LiveFrame`) into *settled observations*: the cards on the table once no
hand has been in view and nothing has moved for :data:`SETTLE_S`, with a read of the table since
the hand left, the side of the frame the hand came from meanwhile, and the cards that were
lifted and put back (those the tracker saw leave the table, their places showing the table
(:mod:`vision.lifted`), and come back; a card the hand kept hidden throughout is not guessed).
:class:`Referee` compares each observation with the last and turns the
change into events (``deal``, ``take``, ``wrong_claim``, ``refill``, ``deal_extra``,
``game_over``, and ``warning`` for a rule broken), each checked by :class:`vision.game.Game`.

The events are what ``setvision referee --events`` writes, one JSON object a line
(:meth:`RefereeEvent.to_json`), and what its journal keeps: :func:`referee_from_journal` rebuilds
a game from one (``--resume``), and an ``undo`` line takes back the event before it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from vision.cards import Card, parse_card
from vision.game import (
    ClaimRejected,
    DealReason,
    Dealt,
    Game,
    GameOver,
    IllegalMove,
    Penalty,
    SetTaken,
)
from vision.live import LiveFrame
from vision.rules import Variant, find_sets, is_set
from vision.touch import SIDES

__all__ = [
    "EVENT_TYPES",
    "SETTLE_S",
    "Observation",
    "Referee",
    "RefereeEvent",
    "TableWatcher",
    "parse_players",
    "referee_from_journal",
]

#: Seconds with no hand in view and nothing moving before a table counts as settled (camera
#: referees of Go and chess wait about half a second).
SETTLE_S: Final = 0.5
#: Event types, in the order a game meets them.
EVENT_TYPES: Final = ("deal", "take", "wrong_claim", "refill", "deal_extra", "game_over",
                      "warning")  # fmt: skip
#: Share of the frame's side taken as "that edge" when telling where the arm comes from.
EDGE_SHARE: Final = 0.04


@dataclass(frozen=True)
class Observation:
    """A settled table.

    Attributes:
        frame, time_s: the frame it was seen on.
        cards: track id -> card, every card on the table.
        side: the frame edge the hand reached in from since the last observation (one of
            ``bottom``, ``left``, ``right``, ``top``), or None when no hand was seen.
        lifted: ids of cards that left the table and came back since the last observation.
    """

    frame: int
    time_s: float
    cards: Mapping[int, Card]
    side: str | None
    lifted: frozenset[int]


@dataclass(frozen=True)
class RefereeEvent:
    """One thing that happened in the game.

    Attributes:
        frame, time_s: when it was seen (the settled frame).
        type: one of :data:`EVENT_TYPES`.
        cards: the cards it concerns.
        side: where the hand came from (None where no hand is involved); player: who that is.
        message: what happened, in the booklets' terms.
        scores: every player's score after it.
    """

    frame: int
    time_s: float
    type: str
    cards: tuple[Card, ...]
    side: str | None
    player: str | None
    message: str
    scores: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        """``{"frame", "time_s", "type", "cards": [{"count", "colour", "shape", "fill"}],
        "side", "player", "message", "scores"}``."""
        return {
            "frame": self.frame,
            "time_s": round(self.time_s, 3),
            "type": self.type,
            "cards": [
                {
                    "count": c.count.value,
                    "colour": c.colour.value,
                    "shape": c.shape.value,
                    "fill": c.fill.value,
                }
                for c in self.cards
            ],  # fmt: skip
            "side": self.side,
            "player": self.player,
            "message": self.message,
            "scores": dict(self.scores),
        }


def parse_players(text: str | None) -> dict[str, str]:
    """``"Ann:bottom,Bob:left"`` -> side -> name; None or empty: each side its own player.

    Raises:
        ValueError: an unknown side, a side or name given twice, an empty name.
    """
    if not text or not text.strip():
        return {side: side for side in SIDES}
    players: dict[str, str] = {}
    for item in text.split(","):
        name, sep, side = item.strip().rpartition(":")
        side = side.strip().lower()
        if not sep or not name.strip():
            raise ValueError(f"--players: expected NAME:SIDE, got {item.strip()!r}")
        if any(ch in name for ch in ":;"):
            raise ValueError(f"--players: {item.strip()!r}: a name cannot hold ':' or ';' "
                             "(separate players with commas: Ann:bottom,Bob:left)")  # fmt: skip
        if side not in SIDES:
            raise ValueError(f"--players: {side!r} is not a side; the sides are "
                             f"{', '.join(SIDES)}")  # fmt: skip
        if side in players:
            raise ValueError(f"--players: the {side} side is given twice")
        if name.strip() in players.values():
            raise ValueError(f"--players: {name.strip()!r} is given twice")
        players[side] = name.strip()
    return players


class TableWatcher:
    """Turns the tracker's frames into settled observations (see the module docstring).

    Args:
        settle_s: seconds with no hand and no motion before the table counts as settled.
    """

    def __init__(self, settle_s: float = SETTLE_S) -> None:
        self.settle_s = settle_s
        self._calm_since: float | None = None
        self._read_since_calm = False
        self._sides: Counter[str] = Counter()
        self._last_ids: set[int] = set()
        self._left: dict[int, bool] = {}  # gone ids -> a hand or motion seen since
        self._lifted: set[int] = set()
        self._reported: tuple[tuple[int, Card], ...] | None = None

    def update(self, live: LiveFrame) -> Observation | None:
        """Look at the next frame; an observation when the table has just settled (once per
        settled table: a table that stays as it is is not reported again)."""
        ids = {c.id for c in live.table.cards}
        calm = not live.table.hand and not live.touch.moving
        # A card is lifted when it left and came back with a hand or motion in between: one
        # lost and found again on a calm table is the tracker's, since no card moves untouched.
        for i in self._last_ids - ids:
            self._left[i] = not calm
        if not calm:
            self._left = dict.fromkeys(self._left, True)
        self._lifted |= {i for i in ids & self._left.keys() if self._left[i]}
        for i in ids:
            self._left.pop(i, None)
        self._last_ids = ids
        if live.table.hand:
            side = _arm_side(live.touch.arm)
            if side is not None:
                self._sides[side] += 1
        if not calm:
            self._calm_since, self._read_since_calm = None, False
            return None
        if self._calm_since is None:
            self._calm_since = live.time_s
        self._read_since_calm |= live.read
        if live.time_s - self._calm_since < self.settle_s or not self._read_since_calm:
            return None
        key = tuple(sorted((c.id, c.card) for c in live.table.cards))
        if key == self._reported and not self._sides:
            return None
        self._reported = key
        side = self._sides.most_common(1)[0][0] if self._sides else None
        lifted = frozenset(self._lifted)
        self._sides.clear()
        self._lifted.clear()
        return Observation(live.index, live.time_s, {c.id: c.card for c in live.table.cards},
                           side, lifted)  # fmt: skip


def _arm_side(arm: npt.NDArray[np.bool_]) -> str | None:
    """The frame edge most of the arm mask touches (None: it touches none)."""
    h, w = arm.shape
    band = max(1, int(round(EDGE_SHARE * min(h, w))))
    counts = {
        "top": int(arm[:band].sum()),
        "bottom": int(arm[-band:].sum()),
        "left": int(arm[:, :band].sum()),
        "right": int(arm[:, -band:].sum()),
    }
    side = max(counts, key=lambda k: counts[k])
    return side if counts[side] else None


@dataclass
class _Physical:
    """The table as it really is (the game's table may differ after a broken rule)."""

    cards: dict[int, Card] = field(default_factory=dict)


class Referee:
    """Turns settled observations into game events, checked by the rules.

    Args:
        players: side -> player name (:func:`parse_players`).
        penalty: what a wrong claim costs.
        variant: the deck (the beginners' games open with 9 cards).
    """

    def __init__(
        self,
        players: Mapping[str, str] | None = None,
        *,
        penalty: Penalty = Penalty.LOSE_POINT,
        variant: Variant = Variant.STANDARD,
    ) -> None:
        self.players = dict(players or parse_players(None))
        self.penalty = penalty
        self.variant = variant
        names = tuple(dict.fromkeys(self.players.values()))
        self.game = Game(names, variant=variant, penalty=penalty if len(names) > 1 or
                         penalty is not Penalty.SIT_OUT else Penalty.LOSE_POINT,
                         deal=False, auto_refill=False)  # fmt: skip
        self._table = _Physical()
        self._started = False
        self._not_back: tuple[Card, ...] = ()  # a wrong claim's cards, taken away
        # Cards that left with no claim: still the game's (a card covered or misread for a
        # while), so seen again they are no deal.
        self._out_of_sight: list[Card] = []
        self.events: list[RefereeEvent] = []
        self._frame, self._time = 0, 0.0
        self._check_resumed = False  # the first table seen is compared with the journal's

    # -- observations -----------------------------------------------------------------------

    def observe(self, obs: Observation) -> list[RefereeEvent]:
        """The events an observation makes (also appended to :attr:`events`)."""
        start = len(self.events)
        self._frame, self._time = obs.frame, obs.time_s
        if self.game.over:
            return []
        now = dict(obs.cards)
        twice = [c for c, n in Counter(now.values()).items() if n > 1]
        if twice:
            self._warn(f"a card is seen twice on the table: {_text(twice)} (two decks mixed, "
                       "or a misread)", twice, obs.side)  # fmt: skip
        if self._check_resumed:
            self._check_resumed = False
            self._table.cards = now
            seen, kept = Counter(now.values()), Counter(self.game.table)
            missing, extra = list((kept - seen).elements()), list((seen - kept).elements())
            if extra and not missing:
                # Dealt while the referee was away: a deal like any other, if the rules allow.
                try:
                    made = self.game.deal(extra)
                except IllegalMove:
                    pass
                else:
                    self._said_dealt(made, extra, None)
                    self._over_check()
                    return self.events[start:]
            if missing or extra:
                parts = ([f"missing {_text(missing)}"] if missing else []) + (
                    [f"not in the journal {_text(extra)}"] if extra else [])  # fmt: skip
                self._warn("the table in view does not match the journal's: "
                           + "; ".join(parts), missing + extra, None)  # fmt: skip
            return self.events[start:]
        before = self._table.cards
        gone = [card for i, card in before.items() if i not in now]
        new = [card for i, card in now.items() if i not in before]
        # A card gone and back under a new id (the tracker lost it and found it again) is
        # neither taken nor dealt (one deck holds each card once): it was lifted and put back.
        again = Counter(gone) & Counter(new)
        lifted_ids = set(obs.lifted)
        if again:
            gone = list((Counter(gone) - again).elements())
            new = list((Counter(new) - again).elements())
            lifted_ids |= {i for i, card in now.items() if i not in before and card in again}
        self._table.cards = now
        if not self._started:
            if len(now) >= self.game.table_size or (now and obs.side is not None):
                self._opening(list(now.values()), obs.side)
            return self.events[start:]
        player = self._player(obs.side)
        # Cards put back after a wrong claim took them away: no deal.
        if self._not_back and Counter(new) == Counter(self._not_back):
            self._not_back, new = (), []
        back = [c for c in new if c in self._out_of_sight]
        if back:
            self._out_of_sight = [c for c in self._out_of_sight if c not in back]
            new = [c for c in new if c not in back]
        if gone:
            self._taken(gone, obs.side, player)
        elif len(lifted_ids) == 3 and not new:
            # Lifted and put back since the last settled table (cards that were away on it,
            # a claim's cards taken away and now back, are not lifted again).
            lifted = [now[i] for i in lifted_ids
                      if i in now and (i in before or now[i] in again)]  # fmt: skip
            if len(lifted) == 3:
                self._claim(lifted, obs.side, player, put_back=True)
        if new:
            self._dealt(new, obs.side)
        self._over_check()
        return self.events[start:]

    def finish(self, frame: int, time_s: float) -> list[RefereeEvent]:
        """The players stopped (the video ended): the game is over if it was not."""
        start = len(self.events)
        self._frame, self._time = frame, time_s
        if self._started and not self.game.over:
            self._emit("game_over", (), None, None, "the players stopped: " + self._standing())
        return self.events[start:]

    # -- the moves --------------------------------------------------------------------------

    def _opening(self, cards: list[Card], side: str | None) -> None:
        size = self.game.table_size
        self._started = True
        try:
            self.game.deal(cards)
        except IllegalMove:
            try:
                self.game.deal(cards, despite_rules=True)
            except IllegalMove as error:  # a card not in this deck (the variant's, or misread)
                self._started = False
                self._warn(f"the opening deal cannot be this deck's: {error}", cards, side)
                return
            self._warn(f"the opening deal is {size} cards; {len(cards)} were dealt", cards, side)
        self._emit("deal", tuple(cards), side, None, f"{len(cards)} cards dealt")

    def _taken(self, gone: list[Card], side: str | None, player: str | None) -> None:
        if len(gone) > 3:
            # More than a claim left: if exactly one SET is among them, it was taken, and the
            # rest are out of sight (a card the hand covered, lost by the tracker for a while).
            sets = [trio for trio in combinations(gone, 3) if is_set(*trio)]
            if len(sets) == 1:
                self._claim(list(sets[0]), side, player, put_back=False)
                gone = [c for c in gone if c not in sets[0]]
        if len(gone) != 3:
            self._out_of_sight += gone
            many = f"{len(gone)} card{'s' if len(gone) != 1 else ''}"
            self._warn(f"{many} left the table without a claim: {_text(gone)} (a SET is 3 "
                       "cards)", gone, side)  # fmt: skip
            return
        self._claim(gone, side, player, put_back=False)

    def _claim(self, cards: list[Card], side: str | None, player: str | None,
               *, put_back: bool) -> None:  # fmt: skip
        if player is None:  # no hand seen, or a side nobody plays from: nobody scores
            where = f"the {side} side, where nobody plays" if side else "no side seen"
            kind = "taken" if not put_back else "lifted and put back"
            self._warn(f"three cards {kind} from {where} ({_text(cards)}): not scored; name the "
                       "players of every side with --players", cards, side)  # fmt: skip
            if not put_back:
                self._not_back = ()  # the table as it is: they are gone
            return
        name = player
        try:
            made = self.game.claim(name, cards)
        except IllegalMove as error:
            self._warn(f"{name}: {error}", cards, side)
            return
        for event in made:
            if isinstance(event, SetTaken):
                self._emit("take", tuple(cards), side, name,
                           f"{name} took a SET: {_text(cards)}")  # fmt: skip
            elif isinstance(event, ClaimRejected):
                why = _why_not(*cards)
                how = "lifted and put back" if put_back else "taken away"
                cost = f"penalty {event.penalty.value} ({event.penalty.source})"
                self._emit("wrong_claim", tuple(cards), side, name,
                           f"{name} claimed three cards that are not a SET ({why}), {how}: "
                           f"{cost}")  # fmt: skip
                if not put_back:
                    self._not_back = tuple(cards)
                    self._warn(f"not a SET taken away: {_text(cards)}; put them back",
                               cards, side, player=name)  # fmt: skip

    def _dealt(self, cards: list[Card], side: str | None) -> None:
        size, n = self.game.table_size, len(self.game.table)
        try:
            made = self.game.deal(cards)
        except IllegalMove as error:
            sets = find_sets(list(self.game.table))
            named = ""
            if sets and n >= size:
                trio = [self.game.table[i] for i in sets[0]]
                named = f" (one SET: {_text(trio)})"
            self._warn(f"{error}{named}", cards, side)
            try:
                made = self.game.deal(cards, despite_rules=True)
            except IllegalMove as again:  # a card not in the deck: seen twice, or misread
                self._warn(str(again), cards, side)
                return
        self._said_dealt(made, cards, side)

    def _said_dealt(self, made: Sequence[Any], cards: list[Card], side: str | None) -> None:
        """The events of a deal the rules took (``made``: :meth:`vision.game.Game.deal`'s)."""
        for event in made:
            if isinstance(event, Dealt):
                kind = {DealReason.OPENING: "deal", DealReason.REFILL: "refill",
                        DealReason.EXTRA: "deal_extra"}[event.reason]  # fmt: skip
                message = {
                    "deal": f"{len(cards)} cards dealt",
                    "refill": f"3 cards dealt: the table is back to {len(self.game.table)}",
                    "deal_extra": f"no SET on the table: 3 more dealt ({len(self.game.table)} "
                                  "on the table)",
                }[kind]  # fmt: skip
                self._emit(kind, tuple(cards), side, None, message)

    def _over_check(self) -> None:
        over = [e for e in self.game.events if isinstance(e, GameOver)]
        if over and not any(e.type == "game_over" for e in self.events):
            self._emit("game_over", (), None, None,
                       "the deck is out and no SET remains: " + self._standing())  # fmt: skip

    # -- helpers ----------------------------------------------------------------------------

    def _player(self, side: str | None) -> str | None:
        if side is None:
            return None
        return self.players.get(side)

    def _standing(self) -> str:
        scores = self.game.scores
        table = ", ".join(f"{p} {s}" for p, s in scores.items())
        if not any(scores.values()):
            return f"nobody scored ({table})"
        best = max(scores.values())
        winners = [p for p, s in scores.items() if s == best]
        return f"{' and '.join(winners)} win{'s' if len(winners) == 1 else ''} ({table})"

    def _warn(self, message: str, cards: Iterable[Card], side: str | None,
              player: str | None = None) -> None:  # fmt: skip
        self._emit("warning", tuple(cards), side, player or self._player(side), message)

    def _emit(self, kind: str, cards: tuple[Card, ...], side: str | None, player: str | None,
              message: str) -> None:  # fmt: skip
        self.events.append(RefereeEvent(self._frame, self._time, kind, cards, side, player,
                                        message, dict(self.game.scores)))  # fmt: skip

    def replay(self, entry: Mapping[str, Any], cards: list[Card]) -> None:
        """Apply one journal event (``entry``, its cards parsed) as it was recorded."""
        kind, player = entry["type"], entry.get("player")
        if kind in ("deal", "refill", "deal_extra"):
            try:
                self.game.deal(cards)
            except IllegalMove:
                self.game.deal(cards, despite_rules=True)
            self._started = True
        elif kind in ("take", "wrong_claim") and player is not None:
            self.game.claim(player, cards)
        self._frame, self._time = int(entry.get("frame", 0)), float(entry.get("time_s", 0.0))
        self._emit(kind, tuple(cards), entry.get("side"), player, str(entry.get("message", "")))

    def resumed(self) -> None:
        """The game was rebuilt from a journal: the first table seen is checked against it."""
        self._check_resumed = self._started

    def undone(self, previous: Referee) -> None:
        """This referee was rebuilt from the journal without ``previous``'s last event: the
        next settled table is checked against the game as it now stands, as after a resume
        (cards dealt since are taken as a deal; anything else is said in a warning)."""
        self._frame, self._time = previous._frame, previous._time
        self._check_resumed = self._started

    @property
    def deck_left(self) -> int:
        """Cards not dealt yet."""
        return len(self.game.deck)


def _text(cards: Iterable[Card]) -> str:
    return ", ".join(c.label for c in cards)


def _why_not(a: Card, b: Card, c: Card) -> str:
    """Which attribute breaks the SET rule (two alike, one different)."""
    names = ("count", "colour", "shape", "fill")
    bad = [n for n, x, y, z in zip(names, a.values(), b.values(), c.values())
           if len({x, y, z}) == 2]  # fmt: skip
    return "two alike and one different in " + " and ".join(bad) if bad else "not a SET"


def referee_from_journal(lines: Iterable[str], **options: Any) -> Referee:
    """Rebuild a referee from its journal (the ``--events`` lines, ``undo`` lines taking back
    the event before them): the same game, scores and table.

    Raises:
        ValueError: a line that is not one of the journal's.
    """
    kept: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            kind = entry["type"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ValueError(f"journal line {number}: not a referee event") from None
        if kind == "undo":  # takes back the last event of the game (and warnings after it)
            while kept and kept[-1]["type"] == "warning":
                kept.pop()
            if kept:
                kept.pop()
            continue
        if kind in ("start", "resume"):  # the set-up (options); where a run continued
            continue
        if kind not in EVENT_TYPES:
            raise ValueError(f"journal line {number}: unknown event type {kind!r}")
        kept.append(entry)
    referee = Referee(**options)
    for entry in kept:
        if not isinstance(entry.get("cards", []), list):
            raise ValueError("journal: an event's cards are not a list")
        try:
            cards = [parse_card(" ".join(str(c[k]) for k in ("count", "colour", "fill", "shape")))
                     for c in entry.get("cards", [])]  # fmt: skip
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"journal: an event's cards cannot be read ({error})") from None
        try:
            referee.replay(entry, cards)
        except IllegalMove as error:
            raise ValueError(f"journal: a {entry['type']} the rules refuse ({error})") from None
    referee.resumed()
    return referee
