"""Games of several rounds in which the dealer rotates (rules booklets in ``../shared/rules``).

Each round is an ordinary :class:`vision.game.Game`; this module only decides who deals, who
plays, how a round's SETs turn into points and who wins overall.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from enum import Enum

from vision.game import Game, IllegalMove, Penalty
from vision.rules import Variant

__all__ = ["Tournament", "TournamentStyle"]


class TournamentStyle(Enum):
    """A game of several rounds in which the dealer rotates."""

    #: Italian booklet, "Fine del gioco": for a longer game the deal passes to the left and the
    #: deck is reshuffled; when every player has dealt, the highest total wins. The dealer plays.
    LONG_GAME = "long-game"
    #: German rules sheet, "SET'S FOREVER": three or more players, as many rounds as players;
    #: the SET-Master of the round shuffles, deals and refills but does not play; every card won
    #: is one point.
    SETS_FOREVER = "sets-forever"


class Tournament:
    """Several rounds of :class:`Game`, the dealer passing left (to the next name) each round.

    Args:
        players: names in seating order; round ``r`` is dealt by ``players[r]``.
        style: see :class:`TournamentStyle`.
        penalty: wrong-claim penalty; by default the one of the style's booklet (Italian: lose
            a point; German: sit out).
        variant: which deck.
        seed: seeds every round's shuffle (``None``: unpredictable).
        auto_refill: passed to each round's game.

    Raises:
        ValueError: fewer than 2 players (3 for SET'S FOREVER) or duplicate names.
    """

    def __init__(
        self,
        players: Sequence[str],
        *,
        style: TournamentStyle = TournamentStyle.LONG_GAME,
        penalty: Penalty | None = None,
        variant: Variant = Variant.STANDARD,
        seed: int | None = None,
        auto_refill: bool = True,
    ) -> None:
        names = tuple(players)
        least = 3 if style is TournamentStyle.SETS_FOREVER else 2
        if len(names) < least:
            raise ValueError(f"the {style.value} tournament needs {least} or more players")
        if len(set(names)) != len(names):
            raise ValueError(f"player names must differ, got {names!r}")
        self.players = names
        self.style = style
        self.penalty = penalty or (
            Penalty.SIT_OUT if style is TournamentStyle.SETS_FOREVER else Penalty.LOSE_POINT
        )
        self.variant = variant
        self.auto_refill = auto_refill
        self._rng = random.Random(seed)
        self.games: list[Game] = []

    @property
    def rounds(self) -> int:
        """As many rounds as players: everyone deals once."""
        return len(self.players)

    @property
    def points_per_set(self) -> int:
        """1 (a point per SET, Italian) or 3 (a point per card, German SET'S FOREVER)."""
        return 3 if self.style is TournamentStyle.SETS_FOREVER else 1

    @property
    def dealer(self) -> str:
        """Who deals the round being played, or the next round if none is being played."""
        if self._playing():
            return self.players[len(self.games) - 1]
        return self.players[len(self.games) % self.rounds]

    @property
    def over(self) -> bool:
        """True when every player has dealt and the last round is over."""
        return len(self.games) == self.rounds and self.games[-1].over

    def _playing(self) -> bool:
        return bool(self.games) and not self.games[-1].over

    def next_round(self, *, deal: bool = True) -> Game:
        """Start the next round, dealt by the next player; returns its game.

        Raises:
            IllegalMove: the current round is not over, or every player has dealt.
        """
        if self._playing():
            raise IllegalMove(f"round {len(self.games)} is not over yet")
        if len(self.games) == self.rounds:
            raise IllegalMove(f"the tournament is over: all {self.rounds} players have dealt")
        dealer = self.players[len(self.games)]
        playing = (
            tuple(p for p in self.players if p != dealer)
            if self.style is TournamentStyle.SETS_FOREVER
            else self.players
        )
        game = Game(
            playing,
            variant=self.variant,
            penalty=self.penalty,
            seed=self._rng.getrandbits(64),
            deal=deal,
            auto_refill=self.auto_refill,
        )
        self.games.append(game)
        return game

    @property
    def totals(self) -> dict[str, int]:
        """Each player's points over the rounds so far (the dealer scores 0 in SET'S FOREVER)."""
        totals = dict.fromkeys(self.players, 0)
        for game in self.games:
            for player, points in game.points(self.points_per_set).items():
                totals[player] += points
        return totals

    @property
    def winners(self) -> tuple[str, ...]:
        """Highest total once the tournament is over (ties share), else ``()``."""
        if not self.over:
            return ()
        totals = self.totals
        best = max(totals.values())
        return tuple(p for p in self.players if totals[p] == best)
