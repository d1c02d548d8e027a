"""The physical game of SET as a pure, seedable state machine with an auditable event log.

Rules implemented, each with its source in ``../shared/rules``:

* Deal 12 cards face up, 9 in the beginners' games (Italian booklet "Gioco"; Dutch "Zo bereid je
  het spel voor"; German "SET'S EASY": 3x3 cards).
* Anyone may claim three cards; there are no turns (German "Die Suche"; Italian "Non ci sono
  turni"). A valid SET scores one point for the claimant and leaves the table.
* After a SET the table is refilled to 12 (9) from the deck only if it now holds fewer than 12:
  after a SET taken from 15 cards there is no refill (Italian "Le 3 carte non vengono
  sostituite"; German "Wenn kein SET auftaucht"; Dutch "Veelgemaakte fouten": refilling above
  12 is a common mistake).
* If no SET is on the table, 3 more cards are dealt (15, then 18, 21 if needed; encyclopedia).
  Dealing extra cards while a SET is on the table is rejected, and so is dealing from an empty
  deck.
* The game ends when the deck is empty and no SET remains on the table; the highest score wins
  and ties share the win (Dutch "Wanneer eindigt het spel en wie wint"; Italian "Fine del gioco").
* A wrong claim is penalised by a rule option, :class:`Penalty`: lose one point and the cards go
  back (Italian), or sit out until another player takes a valid SET (German).
* The solo game (Italian "Solo"): each time the player finds no SET and 3 more cards are laid,
  the player owes one penalty SET; a penalty is repaid by a SET found after the deck has run
  out ("tra le ultime 12 carte"), and the game is won only if every penalty is repaid.
* The longer game (Italian: the deal passes left, every player deals once) and the SET'S FOREVER
  tournament (German: the SET-Master rotates and does not play, one point per card won) are in
  :mod:`vision.tournament`.

Every change of state is one frozen event appended to :attr:`Game.events`; :func:`replay`
rebuilds a game from its log and rejects a log the rules would not have produced (an audit).
The table is an ordered tuple: a SET leaves it (the others keep their order) and dealt cards
are appended. :meth:`Game.observe` lets a referee feed an observed table and get back what
happened or what is wrong.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from vision.cards import Card, Colour
from vision.errors import SetVisionError
from vision.rules import Variant, find_sets, has_set, is_set

__all__ = [
    "ClaimRejected",
    "DealReason",
    "Dealt",
    "Event",
    "Game",
    "GameOver",
    "GameStarted",
    "GameState",
    "IllegalMove",
    "Penalty",
    "PenaltyRepaid",
    "ReplayError",
    "SetTaken",
    "SoloPenalty",
    "Verdict",
    "replay",
]

#: 21 cards always hold a SET (the largest SET-free table has 20 cards; encyclopedia).
MAX_TABLE = 21


class IllegalMove(SetVisionError):
    """A move the rules do not allow (the state is unchanged); the message says why."""


class ReplayError(SetVisionError):
    """An event log the rules would not have produced; the message names the first bad event."""


class Penalty(Enum):
    """What a wrong claim costs: the booklets disagree, so this is a rule option."""

    #: Lose one point; the three cards go back on the table (Italian booklet, "Gioco").
    LOSE_POINT = "lose-point"
    #: Sit out until another player takes a valid SET (German rules sheet, "Nach einem Ruf" 4).
    SIT_OUT = "sit-out"
    #: No penalty (a friendly house rule; Dutch booklet "Varianten en huisregels").
    NONE = "none"

    @property
    def source(self) -> str:
        """The booklet this penalty comes from."""
        return {
            Penalty.LOSE_POINT: "Italian rules booklet",
            Penalty.SIT_OUT: "German rules sheet",
            Penalty.NONE: "house rule (Dutch booklet: agree house rules beforehand)",
        }[self]


class DealReason(Enum):
    """Why cards were dealt."""

    OPENING = "opening"  # the first 12 (9) cards
    REFILL = "refill"  # back up to 12 (9) after a SET
    EXTRA = "extra"  # 3 more because no SET is on the table (solo: the player found none)


@dataclass(frozen=True, slots=True)
class GameStarted:
    """The game's configuration and the shuffled deck, top card first."""

    players: tuple[str, ...]
    variant: Variant
    penalty: Penalty
    solo: bool
    auto_refill: bool
    deck: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Dealt:
    """Cards dealt face up from the deck (appended to the table in this order).

    ``despite_rules``: a referee saw these cards dealt although the rules forbid it (3 more
    while a SET was on the table, a refill above 12, the wrong number of cards); it warned,
    and the game goes on with the table as it really is.
    """

    cards: tuple[Card, ...]
    reason: DealReason
    despite_rules: bool = False


@dataclass(frozen=True, slots=True)
class SetTaken:
    """A valid SET claimed by ``player``; the three cards left the table."""

    player: str
    cards: tuple[Card, Card, Card]


@dataclass(frozen=True, slots=True)
class ClaimRejected:
    """Three cards on the table that are not a SET; ``penalty`` was applied, the cards stay."""

    player: str
    cards: tuple[Card, Card, Card]
    penalty: Penalty


@dataclass(frozen=True, slots=True)
class SoloPenalty:
    """Solo game: extra cards were laid, so the player owes one more penalty SET (Italian)."""

    player: str
    owed: int


@dataclass(frozen=True, slots=True)
class PenaltyRepaid:
    """Solo game: a SET found after the deck ran out repaid one penalty SET (Italian)."""

    player: str
    owed: int


@dataclass(frozen=True, slots=True)
class GameOver:
    """Deck empty and no SET on the table; ``winners`` share the highest score."""

    scores: tuple[tuple[str, int], ...]
    winners: tuple[str, ...]
    left_on_table: tuple[Card, ...]


Event = GameStarted | Dealt | SetTaken | ClaimRejected | SoloPenalty | PenaltyRepaid | GameOver


@dataclass(frozen=True, slots=True)
class GameState:
    """A snapshot of everything a game knows, for comparisons (e.g. replay against the original).

    Attributes:
        table: cards face up, in table order.
        deck: cards not yet dealt, top first.
        sets: per player, the SETs taken, in order.
        penalty_points: per player, points lost to wrong claims.
        sitting_out: players who may not claim now (German penalty).
        penalty_owed: solo game: penalty SETs not yet repaid.
        over: the game has ended.
        winners: the winners once over, else ``()``.
    """

    table: tuple[Card, ...]
    deck: tuple[Card, ...]
    sets: tuple[tuple[str, tuple[tuple[Card, Card, Card], ...]], ...]
    penalty_points: tuple[tuple[str, int], ...]
    sitting_out: frozenset[str]
    penalty_owed: int
    over: bool
    winners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an observed table change meant: the events it made, and what is wrong with it.

    ``problems`` is empty when everything seen was legal. A wrong claim is both an event (its
    penalty applies) and a problem (the cards must go back).
    """

    events: tuple[Event, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True if nothing was wrong."""
        return not self.problems


def _cards_text(cards: Iterable[Card]) -> str:
    return ", ".join(card.label for card in cards)


class Game:
    """One game of SET, from the opening deal to the end.

    Args:
        players: player names, in seating order (the deal passes to the next name).
        variant: which deck; the beginners' games deal 9 cards.
        penalty: what a wrong claim costs (see :class:`Penalty`). ``SIT_OUT`` needs two or more
            players; if every player ends up sitting out, all of them return (a house rule of
            this project, so that the game cannot stall).
        solo: the solo game of the Italian booklet (exactly one player).
        seed: shuffles the deck with ``random.Random(seed)``; ``None`` shuffles unpredictably.
        deck: an explicit deck order, top card first (instead of ``seed``); a permutation of the
            variant's deck.
        colour: the colour of the one-colour beginners' deck.
        deal: deal the opening cards from the top of the deck now. A referee passes ``False``
            and reports the opening deal it sees with :meth:`deal` or :meth:`observe`.
        auto_refill: refill the table right after each valid SET. A referee passes ``False``
            and reports the refill it sees.

    Raises:
        ValueError: for a bad configuration (no players, duplicate names, solo with several
            players, ``SIT_OUT`` with one player, a deck that is not the variant's, both a
            seed and a deck).
    """

    def __init__(
        self,
        players: Sequence[str] = ("player",),
        *,
        variant: Variant = Variant.STANDARD,
        penalty: Penalty = Penalty.LOSE_POINT,
        solo: bool = False,
        seed: int | None = None,
        deck: Sequence[Card] | None = None,
        colour: Colour = Colour.RED,
        deal: bool = True,
        auto_refill: bool = True,
    ) -> None:
        names = tuple(players)
        if not names or any(not isinstance(p, str) or not p for p in names):
            raise ValueError(f"expected one or more player names, got {names!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"player names must differ, got {names!r}")
        if solo and len(names) != 1:
            raise ValueError(f"the solo game has exactly one player, got {len(names)}")
        if penalty is Penalty.SIT_OUT and len(names) < 2:
            raise ValueError("the sit-out penalty (German rules) needs two or more players")
        if seed is not None and deck is not None:
            raise ValueError("give a seed or a deck order, not both")
        cards = variant.deck(colour)
        if deck is None:
            order = list(cards)
            random.Random(seed).shuffle(order)
        else:
            order = list(deck)
            if sorted(c.index for c in order) != sorted(c.index for c in cards):
                raise ValueError(
                    f"deck must be the {len(cards)} cards of the {variant.value} deck, each once"
                )
        self._start(
            GameStarted(names, variant, penalty, solo, auto_refill, tuple(order)), deal=deal
        )

    @classmethod
    def from_started(cls, started: GameStarted) -> Game:
        """A game at its start, before the opening deal, from a log's first event."""
        game = cls.__new__(cls)
        game._start(started, deal=False)
        return game

    def _start(self, started: GameStarted, *, deal: bool) -> None:
        self._config = started
        self._deck: list[Card] = list(started.deck)
        self._table: list[Card] = []
        self._sets: dict[str, list[tuple[Card, Card, Card]]] = {p: [] for p in started.players}
        self._penalty_points: dict[str, int] = dict.fromkeys(started.players, 0)
        self._sitting_out: set[str] = set()
        self._owed = 0
        self._solo_penalties = 0
        self._over = False
        self._not_back: tuple[Card, ...] = ()  # observe(): a wrong claim's cards not yet back
        self._events: list[Event] = [started]
        if deal:
            self.deal()

    # -- reading the state ------------------------------------------------------------------

    @property
    def config(self) -> GameStarted:
        """The configuration and shuffled deck (the log's first event)."""
        return self._config

    @property
    def players(self) -> tuple[str, ...]:
        """Player names in seating order."""
        return self._config.players

    @property
    def table_size(self) -> int:
        """Cards kept face up by refills: 12, or 9 in the beginners' games."""
        return self._config.variant.table_size

    @property
    def table(self) -> tuple[Card, ...]:
        """The cards face up, in table order."""
        return tuple(self._table)

    @property
    def deck(self) -> tuple[Card, ...]:
        """The cards not yet dealt, top first."""
        return tuple(self._deck)

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event so far, the :class:`GameStarted` first."""
        return tuple(self._events)

    @property
    def over(self) -> bool:
        """True once the deck is empty and no SET remains on the table."""
        return self._over

    @property
    def sitting_out(self) -> frozenset[str]:
        """Players who may not claim until another player takes a valid SET."""
        return frozenset(self._sitting_out)

    @property
    def penalty_owed(self) -> int:
        """Solo game: penalty SETs not yet repaid."""
        return self._owed

    @property
    def needs_refill(self) -> bool:
        """True if the table is below 12 (9) and the deck can refill it (``auto_refill=False``)."""
        return bool(self._deck) and bool(self._table) and len(self._table) < self.table_size

    def sets_taken(self, player: str) -> tuple[tuple[Card, Card, Card], ...]:
        """The SETs ``player`` has taken, in order."""
        return tuple(self._sets[self._known(player)])

    def points(self, per_set: int = 1) -> dict[str, int]:
        """Each player's points: ``per_set`` per SET taken, minus penalties.

        ``per_set=3`` scores one point per card won (German SET'S FOREVER).
        """
        solo = self._solo_penalties * per_set
        return {
            p: per_set * len(self._sets[p]) - self._penalty_points[p] - solo for p in self.players
        }

    @property
    def scores(self) -> dict[str, int]:
        """One point per SET, minus penalties (Italian booklet: may go below zero)."""
        return self.points()

    @property
    def winners(self) -> tuple[str, ...]:
        """Players with the highest score once the game is over (ties share), else ``()``.

        In the solo game the player wins only if every penalty SET was repaid (Italian).
        """
        return self._leaders() if self._over else ()

    def _leaders(self) -> tuple[str, ...]:
        if self._config.solo:
            return self.players if self._owed == 0 else ()
        scores = self.scores
        best = max(scores.values())
        return tuple(p for p in self.players if scores[p] == best)

    def sets_on_table(self) -> list[tuple[int, int, int]]:
        """Every SET on the table as position triples (see :func:`vision.rules.find_sets`)."""
        return find_sets(self._table)

    def state(self) -> GameState:
        """A snapshot of the whole state."""
        return GameState(
            table=self.table,
            deck=self.deck,
            sets=tuple((p, tuple(self._sets[p])) for p in self.players),
            penalty_points=tuple(self._penalty_points.items()),
            sitting_out=self.sitting_out,
            penalty_owed=self._owed,
            over=self._over,
            winners=self.winners,
        )

    # -- moves ------------------------------------------------------------------------------

    def claim(self, player: str, cards: Iterable[Card]) -> tuple[Event, ...]:
        """``player`` calls SET and takes three cards from the table.

        A valid SET scores, leaves the table, and (with ``auto_refill``) the table is refilled
        to 12 (9) only if it now holds fewer. A wrong claim is penalised (:class:`Penalty`) and
        the cards stay. May end the game.

        Returns:
            The events this move produced.

        Raises:
            IllegalMove: the game is over, the player is unknown or sitting out, the claim is
                not three different cards, or a card is not on the table.
        """
        start = len(self._events)
        if self._over:
            raise IllegalMove("the game is over; no more claims")
        name = self._known(player)
        if name in self._sitting_out:
            raise IllegalMove(
                f"{name!r} is sitting out after a wrong claim until another player takes a valid "
                "SET (German rules)"
            )
        trio = tuple(cards)
        if len(trio) != 3 or not all(isinstance(c, Card) for c in trio):
            raise IllegalMove(f"a claim is three cards, got {len(trio)}")
        if len(set(trio)) != 3:
            twice = next(c for c in trio if trio.count(c) > 1)
            raise IllegalMove(f"a claim is three different cards; {twice} is given twice")
        missing = [c for c in trio if c not in self._table]
        if missing:
            raise IllegalMove(f"not on the table: {_cards_text(missing)}")
        a, b, c = trio
        if not is_set(a, b, c):
            self._apply(ClaimRejected(name, (a, b, c), self._config.penalty))
        else:
            self._apply(SetTaken(name, (a, b, c)))
            if self._config.solo and self._owed and not self._deck:
                self._apply(PenaltyRepaid(name, self._owed - 1))
            if self._config.auto_refill and self.needs_refill:
                self._deal_checked(None)
            self._check_over()
        return tuple(self._events[start:])

    def deal(
        self, cards: Sequence[Card] | None = None, *, despite_rules: bool = False
    ) -> tuple[Event, ...]:
        """Deal cards face up: the opening deal, a refill, or 3 extra cards.

        What kind of deal it is follows from the table: empty means the opening deal, below 12
        (9) a refill up to 12 (9), otherwise 3 extra cards, allowed only when no SET is on the
        table (in the solo game: whenever the player finds none, at the cost of a penalty SET).

        Args:
            cards: the cards dealt, as a referee saw them; ``None`` deals from the top.
            despite_rules: a referee saw ``cards`` dealt and says so after warning: a deal the
                rules forbid (extra cards while a SET is on the table, a refill above 12, a
                count the rules do not give) is recorded anyway (``Dealt.despite_rules``). The
                cards must still be in the deck.

        Returns:
            The events this move produced.

        Raises:
            IllegalMove: the game is over, the deck is empty, the wrong number of cards, a card
                not in the deck, or extra cards while a SET is on the table ("refilled above
                12" when that follows a SET taken from 15 cards); with ``despite_rules`` only a
                card not in the deck or an empty ``cards``.
        """
        start = len(self._events)
        if self._over:
            raise IllegalMove("the game is over; no more cards are dealt")
        if despite_rules:
            trio = tuple(cards or ())
            absent = [c for c in trio if c not in self._deck]
            if not trio or absent or len(set(trio)) != len(trio):
                raise IllegalMove(
                    "not in the deck (already dealt, taken, or given twice): "
                    f"{_cards_text(absent or trio)}"
                )
            n, size = len(self._table), self.table_size
            reason = (DealReason.OPENING if n == 0 else DealReason.REFILL if n < size
                      else DealReason.EXTRA)  # fmt: skip
            self._apply(Dealt(trio, reason, despite_rules=True))
            self._check_over()
            return tuple(self._events[start:])
        self._deal_checked(None if cards is None else tuple(cards))
        self._check_over()
        return tuple(self._events[start:])

    def observe(
        self, table: Iterable[Card], player: str | None = None, hidden: Iterable[Card] = ()
    ) -> Verdict:
        """Referee API: compare an observed table with this game's and apply the change.

        Cards gone from the table are a claim by ``player``; new cards are a deal (both may
        happen between two observations: a SET taken and the refill). Illegal changes are
        reported in :attr:`Verdict.problems` and leave the state as it was.

        The same observation twice changes nothing: three cards taken that are not a SET are
        penalised once, and reported again (with no new penalty) until they are back.

        Args:
            table: every card seen face up now (order does not matter).
            player: who took cards, if any were taken.
            hidden: cards of this game's table that could not be seen (a hand over them): not
                taken, whatever ``table`` lacks.

        Raises:
            ValueError: if the game was made with ``auto_refill=True`` (it would refill from a
                deck order the referee cannot know; the referee reports refills instead).
        """
        if self._config.auto_refill:
            raise ValueError("observe() needs a game made with auto_refill=False")
        seen = Counter(table)
        now = Counter(self._table)
        covered = Counter(c for c in hidden if c in now)
        gone = list((now - seen - covered).elements())
        new = list((seen - now).elements())
        events: list[Event] = []
        problems: list[str] = []
        twice = [c for c, n in seen.items() if n > 1]
        if twice:
            return Verdict((), (f"seen twice on the table: {_cards_text(twice)}",))
        if gone and Counter(gone) == Counter(self._not_back):
            problems.append(
                f"took cards that are not a SET ({_cards_text(gone)}): put them back (the "
                "penalty was given when they were taken)"
            )
            gone = []
        elif not gone:
            self._not_back = ()  # the wrong claim's cards are back
        if gone:
            if len(gone) != 3:
                problems.append(
                    f"{len(gone)} cards left the table ({_cards_text(gone)}); a SET is 3 cards"
                )
            elif player is None:
                problems.append(f"three cards were taken ({_cards_text(gone)}) but by whom?")
            else:
                try:
                    made = self.claim(player, gone)
                except IllegalMove as exc:
                    problems.append(str(exc))
                else:
                    events.extend(made)
                    if isinstance(made[0], ClaimRejected):
                        self._not_back = tuple(gone)
                        problems.append(
                            f"took cards that are not a SET ({_cards_text(gone)}): put them back; "
                            f"penalty for {player}: {made[0].penalty.value} "
                            f"({made[0].penalty.source})"
                        )
        if new and not problems:
            try:
                events.extend(self.deal(new))
            except IllegalMove as exc:
                problems.append(str(exc))
        return Verdict(tuple(events), tuple(problems))

    # -- internals --------------------------------------------------------------------------

    def _known(self, player: str) -> str:
        if player not in self._sets:
            raise IllegalMove(
                f"unknown player {player!r}; the players are {', '.join(self.players)}"
            )
        return player

    def _deal_checked(self, cards: tuple[Card, ...] | None) -> None:
        if not self._deck:
            raise IllegalMove("the deck is empty; there are no cards to deal")
        size, n = self.table_size, len(self._table)
        if n == 0:
            reason, need = DealReason.OPENING, min(size, len(self._deck))
        elif n < size:
            reason, need = DealReason.REFILL, min(size - n, len(self._deck))
        else:
            reason, need = DealReason.EXTRA, min(3, len(self._deck))
            sets = len(find_sets(self._table)) if not self._config.solo else 0
            if sets:
                after_set = isinstance(self._events[-1], SetTaken | PenaltyRepaid)
                why = (
                    f"refilled above {size}: after a SET is taken from more than {size} cards "
                    "the table is not refilled (Dutch rules, common mistakes); "
                    if after_set
                    else ""
                )
                raise IllegalMove(
                    f"{why}no extra cards while a SET is on the table ({sets} SET"
                    f"{'s' if sets != 1 else ''} among {n} cards); 3 more are dealt only when "
                    "no SET is on the table"
                )
            if n >= MAX_TABLE:
                raise IllegalMove(f"the table already holds {n} cards, which always hold a SET")
        if cards is None:
            cards = tuple(self._deck[:need])
        if len(cards) != need:
            what = {
                DealReason.OPENING: f"the opening deal is {need} cards",
                DealReason.REFILL: f"the table has {n} cards; the refill to {size} is {need}",
                DealReason.EXTRA: f"extra cards come {need} at a time",
            }[reason]
            above = (
                f"refilled above {size}: "
                if reason is DealReason.REFILL and len(cards) > need
                else ""
            )
            raise IllegalMove(f"{above}{what}, got {len(cards)}")
        absent = [c for c in cards if c not in self._deck]
        if absent or len(set(cards)) != len(cards):
            raise IllegalMove(
                "not in the deck (already dealt, taken, or given twice): "
                f"{_cards_text(absent or cards)}"
            )
        self._apply(Dealt(cards, reason))
        if reason is DealReason.EXTRA and self._config.solo:
            self._apply(SoloPenalty(self.players[0], self._owed + 1))

    def _check_over(self) -> None:
        if not self._deck and not has_set(self._table):
            scores = self.scores
            self._apply(GameOver(tuple(scores.items()), self._leaders(), tuple(self._table)))

    def _apply(self, event: Event) -> None:
        """The one place the state changes; every change is recorded."""
        if isinstance(event, Dealt):
            for card in event.cards:
                self._deck.remove(card)
            self._table.extend(event.cards)
        elif isinstance(event, SetTaken):
            for card in event.cards:
                self._table.remove(card)
            self._sets[event.player].append(event.cards)
            self._sitting_out.clear()  # someone else took a valid SET (German rules)
        elif isinstance(event, ClaimRejected):
            if event.penalty is Penalty.LOSE_POINT:
                self._penalty_points[event.player] += 1
            elif event.penalty is Penalty.SIT_OUT:
                self._sitting_out.add(event.player)
                if self._sitting_out == set(self.players):
                    self._sitting_out.clear()  # house rule: the game cannot stall
        elif isinstance(event, SoloPenalty):
            self._owed = event.owed
            self._solo_penalties += 1
        elif isinstance(event, PenaltyRepaid):
            self._owed = event.owed
        elif isinstance(event, GameOver):
            self._over = True
        self._events.append(event)


def replay(events: Iterable[Event]) -> Game:
    """Rebuild a game from its event log, checking every event against the rules (an audit).

    Moves (deals, claims) are played again; every other event must be exactly what the rules
    produce at that point.

    Raises:
        ReplayError: the log does not start with :class:`GameStarted`, a move is illegal, or
            an event differs from what the rules give (the message names its position).
    """
    log = list(events)
    if not log or not isinstance(log[0], GameStarted):
        raise ReplayError("an event log starts with a GameStarted event")
    game = Game.from_started(log[0])
    i = 1
    while i < len(log):
        produced = game._events
        if i < len(produced):
            if produced[i] != log[i]:
                raise ReplayError(
                    f"event {i}: the log has {log[i]!r}, the rules give {produced[i]!r}"
                )
            i += 1
            continue
        event = log[i]
        try:
            if isinstance(event, SetTaken | ClaimRejected):
                game.claim(event.player, event.cards)
            elif isinstance(event, Dealt):
                game.deal(event.cards, despite_rules=event.despite_rules)
            else:
                raise ReplayError(
                    f"event {i}: the rules do not produce {type(event).__name__} here"
                )
        except IllegalMove as exc:
            raise ReplayError(f"event {i} is illegal: {exc}") from exc
    if len(game._events) > len(log):
        raise ReplayError(f"the log ends early: the rules go on with {game._events[len(log)]!r}")
    return game
