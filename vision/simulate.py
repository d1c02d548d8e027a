"""Play many random games of SET and compare the statistics with the published figures.

A check that the game engine is right: if :mod:`vision.game` dealt, refilled or ended games
wrongly, these frequencies would move. Each game is one player who always finds a SET when
there is one and takes one of them uniformly at random (always taking the first one found
biases the later figures); with no SET on the table, 3 more cards are dealt.

The published figures (``../shared/rules``) are mostly *odds*: the Italian booklet's "~33:1"
and "~2500:1" are odds that a SET is present, and the encyclopedia's "1/30", "1/14 to 1/13"
and "1/88" render the odds 30:1, 14:1 to 13:1 and 88:1 against of the simulations it cites
(H. Warne, "SET Probabilities Revisited", 2011, after P. Norvig). Odds of N:1 mean a
probability of 1/(N+1), so each reference is the range between 1/(N+1) and 1/N:

* P(no SET in 12 random cards): booklet 33:1 (1/34), careful simulations 3.2-3.3%; the
  reference range is 3.2-3.3%.
* P(no SET in 15 random cards): booklet "~2500:1", a round figure, read as 2000:1 to 3000:1
  (as "about 30%" below is read as 27.5-32.5%). Taken as exactly 2500:1 it is wrong: a direct
  count over 10,000,000 random 15-card deals (numpy, independent of the game engine: does any
  pair's third card lie among the other 13?) gives 3,632 without a SET, 0.0363% +- 0.0006%,
  1 in 2,753, six standard errors from 1/2501, so a long enough run would always "disagree".
* Mean number of SETs in 12 and 15 random cards: exactly C(12,3)/79 and C(15,3)/79, since any
  three distinct cards form a SET with probability 1/79.
* P(no SET on a 12-card table during play): 30:1 at the first deal, 14:1 from about the fourth
  round on, slowly going to 13:1 (encyclopedia). A "round" here is the number of SETs taken so
  far; "later" pools the 12-card tables from round :data:`LATER_ROUND` on.
* P(no SET in 15 cards during play): 88:1 (encyclopedia; not the 15-random-cards figure, since
  15 cards are only dealt when 12 hold no SET).
* Share of games that never need 15 cards: "about 30%" (encyclopedia), a round figure read as
  27.5-32.5%.

The fast path (:func:`play_fast`) plays on integer cards 0..80 with an 81x81 third-card table
and must follow exactly the rules of :class:`vision.game.Game`; :func:`play_reference` plays
the same seeded game through the state machine, and the tests check both give identical moves
and statistics. The first 12 (15) cards of each shuffled deck are the "random cards"; the
opening deal is therefore the same sample as "12 random cards".

Intervals are 95% by default: Wilson for proportions over games, normal for means, and for
proportions over the tables seen during play (several per game, not independent) a ratio
estimator with a normal interval whose variance is clustered by game. A check of all
:data:`FIGURES` figures at once uses :data:`CHECK_CONFIDENCE` per figure (Bonferroni), so
that a right engine fails it in at most 5% of seeds; at 95% each, about one seed in three
would miss some figure by chance.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from vision.cards import Card
from vision.game import Dealt, Game, SetTaken
from vision.rules import Variant, count_sets, third_card

__all__ = [
    "CHECK_CONFIDENCE",
    "CHECK_MIN_GAMES",
    "FIGURES",
    "Estimate",
    "Reference",
    "SimulationReport",
    "LATER_ROUND",
    "Tally",
    "estimates",
    "format_report",
    "play_fast",
    "play_reference",
    "simulate",
    "wilson",
]

#: ``_THIRD[a][b]``: index of the card completing cards ``a`` and ``b`` (``a != b``) to a SET.
_THIRD: list[list[int]] = [
    [third_card(Card.from_index(a), Card.from_index(b)).index if a != b else -1 for b in range(81)]
    for a in range(81)
]

#: "Later in the game": 12-card tables from this round (SETs taken so far) on.
LATER_ROUND = 4
_ROUNDS = 28  # a standard game takes at most 27 SETs

TABLE = 12


@dataclass
class Tally:
    """Running counts over games (plain integers, so two tallies can be compared exactly).

    Attributes:
        games: games played.
        no_set_12, no_set_15: games whose first 12 (15) cards hold no SET.
        sets_12, sets_12_sq, sets_15, sets_15_sq: sums (and sums of squares) of the number of
            SETs in the first 12 (15) cards.
        tables_12, no_set_tables_12: per round, 12-card tables seen during play and how many
            held no SET.
        later: cluster sums for 12-card tables from :data:`LATER_ROUND` on, ``[sum x, sum n,
            sum x^2, sum n^2, sum x*n]`` with per game ``x`` no-SET tables out of ``n``.
        fifteen: the same cluster sums for 15-card tables during play.
        never_15: games that never needed more than 12 cards.
    """

    games: int = 0
    no_set_12: int = 0
    no_set_15: int = 0
    sets_12: int = 0
    sets_12_sq: int = 0
    sets_15: int = 0
    sets_15_sq: int = 0
    tables_12: list[int] = field(default_factory=lambda: [0] * _ROUNDS)
    no_set_tables_12: list[int] = field(default_factory=lambda: [0] * _ROUNDS)
    later: list[int] = field(default_factory=lambda: [0] * 5)
    fifteen: list[int] = field(default_factory=lambda: [0] * 5)
    never_15: int = 0

    def add_game(
        self, sets_12: int, sets_15: int, tables: list[tuple[int, int, bool]], extra: bool
    ) -> None:
        """Record one game: SETs in its first 12 and 15 cards, and its tables during play.

        Args:
            sets_12, sets_15: SETs among the first 12 (15) cards of the shuffled deck.
            tables: every table at which a move was decided, as ``(round, size, has_set)``.
            extra: whether 3 extra cards were ever dealt.
        """
        self.games += 1
        self.no_set_12 += sets_12 == 0
        self.no_set_15 += sets_15 == 0
        self.sets_12 += sets_12
        self.sets_12_sq += sets_12 * sets_12
        self.sets_15 += sets_15
        self.sets_15_sq += sets_15 * sets_15
        self.never_15 += not extra
        xl = nl = x15 = n15 = 0
        for rnd, size, found in tables:
            if size == TABLE:
                self.tables_12[rnd] += 1
                self.no_set_tables_12[rnd] += not found
                if rnd >= LATER_ROUND:
                    nl += 1
                    xl += not found
            elif size == 15:
                n15 += 1
                x15 += not found
        for sums, x, n in ((self.later, xl, nl), (self.fifteen, x15, n15)):
            sums[0] += x
            sums[1] += n
            sums[2] += x * x
            sums[3] += n * n
            sums[4] += x * n


def play_fast(
    game_seed: int, tally: Tally, trace: list[tuple[str, tuple[int, ...]]] | None = None
) -> None:
    """Play one standard game on integer cards; the fast path of :func:`simulate`.

    Same rules and same random choices as :func:`play_reference`: the deck is shuffled with
    ``random.Random(game_seed)``, then that generator picks ``sets[randrange(len(sets))]`` among
    the SETs on the table in :func:`vision.rules.find_sets` order. The table keeps its order when
    a SET leaves; dealt cards are appended.

    Args:
        game_seed: seeds the game.
        tally: receives the game's statistics.
        trace: if given, receives the moves as ``("deal", cards)`` and ``("set", cards)`` with
            card indices, for comparison with the state machine.
    """
    rng = random.Random(game_seed)
    deck = list(range(81))
    rng.shuffle(deck)
    randrange = rng.randrange
    third = _THIRD
    sets_12 = _count(deck[:12])
    sets_15 = _count(deck[:15])
    table = deck[:TABLE]
    top = TABLE
    if trace is not None:
        trace.append(("deal", tuple(table)))
    # The SETs on the table are kept up to date: when a SET leaves, the others keep their
    # order (positions shift down); only SETs with a newly dealt card are searched for, each
    # once by its two highest positions q < r, with r a new position.
    where = [-1] * 81  # position of each card on the table, -1 if not there
    found: list[tuple[int, int, int]] = []
    fresh = 0  # positions from here on are new since the SETs were last searched
    tables: list[tuple[int, int, bool]] = []
    rnd = 0
    extra = False
    while True:
        n = len(table)
        if fresh < n:
            for r in range(fresh, n):
                card = table[r]
                where[card] = r
                row = third[card]
                for q in range(r):
                    p = where[row[table[q]]]
                    if 0 <= p < q:
                        found.append((p, q, r))
            found.sort()
            fresh = n
        tables.append((rnd, n, bool(found)))
        if found:
            i, j, k = found[randrange(len(found))]
            trio = (table[i], table[j], table[k])
            for card in trio:
                where[card] = -1
            del table[k], table[j], table[i]
            found = [
                (
                    a - (a > i) - (a > j) - (a > k),
                    b - (b > i) - (b > j) - (b > k),
                    c - (c > i) - (c > j) - (c > k),
                )
                for a, b, c in found
                if i not in (a, b, c) and j not in (a, b, c) and k not in (a, b, c)
            ]
            for pos in range(i, len(table)):
                where[table[pos]] = pos
            fresh = len(table)
            rnd += 1
            if trace is not None:
                trace.append(("set", trio))
            if len(table) < TABLE and top < 81:
                table.extend(deck[top : top + 3])
                top += 3
                if trace is not None:
                    trace.append(("deal", tuple(table[-3:])))
        elif top < 81:
            table.extend(deck[top : top + 3])
            top += 3
            extra = True
            if trace is not None:
                trace.append(("deal", tuple(table[-3:])))
        else:
            break
    tally.add_game(sets_12, sets_15, tables, extra)


def _count(cards: list[int]) -> int:
    present = set(cards)
    return sum(_THIRD[a][b] in present for a, b in combinations(cards, 2)) // 3


def play_reference(
    game_seed: int, tally: Tally, trace: list[tuple[str, tuple[int, ...]]] | None = None
) -> Game:
    """Play the game of :func:`play_fast` through :class:`vision.game.Game` (slow, for tests).

    Returns:
        The finished game.
    """
    rng = random.Random(game_seed)
    order = list(Variant.STANDARD.deck())
    rng.shuffle(order)
    game = Game(("sim",), deck=order)
    counts = [count_sets(order[:12]), count_sets(order[:15])]
    tables: list[tuple[int, int, bool]] = []
    rnd = 0
    extra = False
    while not game.over:
        sets = game.sets_on_table()
        tables.append((rnd, len(game.table), bool(sets)))
        if sets:
            i, j, k = sets[rng.randrange(len(sets))]
            table = game.table
            game.claim("sim", (table[i], table[j], table[k]))
            rnd += 1
        else:
            extra = True
            game.deal()
    tables.append((rnd, len(game.table), False))
    tally.add_game(counts[0], counts[1], tables, extra)
    if trace is not None:
        for event in game.events[1:]:
            if isinstance(event, SetTaken):
                trace.append(("set", tuple(c.index for c in event.cards)))
            elif isinstance(event, Dealt):
                trace.append(("deal", tuple(c.index for c in event.cards)))
    return game


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Raises:
        ValueError: if ``trials`` is not positive or ``successes`` is outside 0..trials.
    """
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def _mean_interval(total: int, total_sq: int, n: int, z: float) -> tuple[float, float, float]:
    """Mean of ``n`` non-negative counts with a normal interval, cut at 0 (a count of SETs is
    never negative; a few games' wide interval went below it)."""
    mean = total / n
    var = (total_sq - n * mean * mean) / (n - 1) if n > 1 else 0.0
    half = z * math.sqrt(max(var, 0.0) / n)
    return mean, max(0.0, mean - half), mean + half


def _ratio_interval(sums: list[int], games: int, z: float) -> tuple[float, float, float]:
    sx, sn, sxx, snn, sxn = sums
    if sn == 0:
        return math.nan, math.nan, math.nan
    r = sx / sn
    if games < 2:
        return r, math.nan, math.nan
    if sx == 0 or sx == sn:
        # No spread to estimate a variance from (no event, or only events): a zero-width
        # interval would claim certainty. Wilson over the tables, as if independent, instead.
        lo, hi = wilson(sx, sn, z)
        return r, lo, hi
    nbar = sn / games
    var = (sxx - 2 * r * sxn + r * r * snn) / (games * (games - 1) * nbar * nbar)
    half = z * math.sqrt(max(var, 0.0))
    return r, max(0.0, r - half), r + half


@dataclass(frozen=True, slots=True)
class Reference:
    """A published figure, as a range ``[low, high]`` (equal ends for an exact value)."""

    low: float
    high: float
    text: str


@dataclass(frozen=True, slots=True)
class Estimate:
    """One simulated figure with its confidence interval and the published reference.

    Attributes:
        name: what was measured.
        value: the estimate.
        low, high: the confidence interval.
        method: how the interval was made (wilson, normal, clustered ratio).
        reference: the published figure.
        samples: how many games or tables the estimate rests on.
    """

    name: str
    value: float
    low: float
    high: float
    method: str
    reference: Reference
    samples: int

    @property
    def agrees(self) -> bool:
        """True if the interval overlaps the reference range."""
        return self.low <= self.reference.high and self.reference.low <= self.high


@dataclass(frozen=True, slots=True)
class SimulationReport:
    """The estimates of one simulation run."""

    games: int
    seed: int
    seconds: float
    confidence: float
    estimates: tuple[Estimate, ...]
    tally: Tally

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return {
            "games": self.games,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "confidence": self.confidence,
            "estimates": [
                {
                    **{k: _json_number(v) for k, v in asdict(e).items()},
                    "reference": asdict(e.reference),
                    "agrees": e.agrees,
                }
                for e in self.estimates
            ],
            "no_set_12_by_round": [
                {"round": r, "tables": n, "no_set": x}
                for r, (n, x) in enumerate(
                    zip(self.tally.tables_12, self.tally.no_set_tables_12, strict=True)
                )
                if n
            ],
        }


def _json_number(value: Any) -> Any:
    """NaN (no samples) becomes None: JSON has no NaN."""
    return None if isinstance(value, float) and math.isnan(value) else value


#: The number of published figures :func:`estimates` compares with.
FIGURES = 8
#: Confidence of each interval when all :data:`FIGURES` are checked together (``setvision
#: simulate --check``): 95% for the family (Bonferroni).
CHECK_CONFIDENCE = 1 - 0.05 / FIGURES
#: Fewest games for a meaningful check: at 10,000 the 15-random-card figure rests on about 4
#: games without a SET, and the first-deal interval (+-0.49 points at 99.4%) is already nine
#: times as wide as its reference range; far fewer games can only catch gross errors
#: (``setvision simulate --check`` warns).
CHECK_MIN_GAMES = 10_000


def _z(confidence: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def estimates(tally: Tally, z: float = 1.96) -> tuple[Estimate, ...]:
    """The published figures estimated from a tally, with intervals of half-width ``z`` sigma.

    Raises:
        ValueError: if the tally holds fewer than two games.
    """
    g = tally.games
    if g < 2:
        raise ValueError(f"need at least 2 games, got {g}")
    out: list[Estimate] = []

    def prop(name: str, x: int, n: int, ref: Reference) -> None:
        lo, hi = wilson(x, n, z)
        out.append(Estimate(name, x / n, lo, hi, "wilson", ref, n))

    prop(
        "P(no SET in 12 random cards)",
        tally.no_set_12,
        g,
        Reference(0.032, 0.033, "3.2-3.3% (careful simulations); booklet 33:1 = 1/34"),
    )
    prop(
        "P(no SET in 15 random cards)",
        tally.no_set_15,
        g,
        Reference(1 / 3001, 1 / 2001, "~2500:1 (booklet; a round figure, 2000-3000:1)"),
    )
    for size, total, sq, exact in (
        (12, tally.sets_12, tally.sets_12_sq, math.comb(12, 3) / 79),
        (15, tally.sets_15, tally.sets_15_sq, math.comb(15, 3) / 79),
    ):
        m, lo, hi = _mean_interval(total, sq, g, z)
        ref = Reference(exact, exact, f"C({size},3)/79 = {exact:.4f} (exact)")
        out.append(Estimate(f"mean SETs in {size} random cards", m, lo, hi, "normal", ref, g))
    first_n, first_x = tally.tables_12[0], tally.no_set_tables_12[0]
    prop(
        "P(no SET in 12 cards during play), first deal",
        first_x,
        first_n,
        Reference(1 / 31, 1 / 30, "odds 30:1 (encyclopedia)"),
    )
    r, lo, hi = _ratio_interval(tally.later, g, z)
    out.append(
        Estimate(
            f"P(no SET in 12 cards during play), round {LATER_ROUND} on",
            r,
            lo,
            hi,
            "clustered ratio",
            Reference(1 / 15, 1 / 14, "odds 14:1 to 13:1 (encyclopedia)"),
            tally.later[1],
        )
    )
    r, lo, hi = _ratio_interval(tally.fifteen, g, z)
    out.append(
        Estimate(
            "P(no SET in 15 cards during play)",
            r,
            lo,
            hi,
            "clustered ratio",
            Reference(1 / 89, 1 / 88, "odds 88:1 (encyclopedia)"),
            tally.fifteen[1],
        )
    )
    prop(
        "share of games never needing 15 cards",
        tally.never_15,
        g,
        Reference(0.275, 0.325, "about 30% (encyclopedia)"),
    )
    return tuple(out)  # fmt: skip


def simulate(
    games: int = 100_000,
    seed: int = 0,
    confidence: float = 0.95,
    progress: Callable[[int], None] | None = None,
) -> SimulationReport:
    """Play ``games`` random games with the fast path and estimate the published figures.

    Args:
        games: number of games (at least 2).
        seed: seeds the per-game seeds, so a run is reproducible.
        confidence: of the intervals, e.g. 0.95.
        progress: called with the number of games played, every 1000 games.

    Raises:
        ValueError: if ``games < 2`` or ``confidence`` is not in (0, 1).
    """
    if games < 2:
        raise ValueError(f"need at least 2 games, got {games}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    seeds = random.Random(seed)
    tally = Tally()
    start = time.perf_counter()
    for played in range(games):
        play_fast(seeds.getrandbits(64), tally)
        if progress is not None and (played + 1) % 1000 == 0:
            progress(played + 1)
    seconds = time.perf_counter() - start
    return SimulationReport(
        games, seed, seconds, confidence, estimates(tally, _z(confidence)), tally
    )


def _fmt(value: float, mean: bool) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.4f}" if mean else f"{100 * value:#.4g}%"


def format_report(report: SimulationReport) -> str:
    """The report as a readable text table: estimate, interval, reference, and agreement."""
    pct = f"{100 * report.confidence:g}%"
    lines = [
        f"{report.games} games, seed {report.seed}, {report.seconds:.1f} s; {pct} intervals "
        "(Wilson for proportions over games, normal for means, clustered by game for tables "
        "during play)",
        "",
        f"{'figure':<50} {'estimate':>9}  {pct + ' interval':<23} {'reference':<19} inside  source",
    ]
    for e in report.estimates:
        mean = e.method == "normal"
        ref = e.reference
        ref_text = (
            _fmt(ref.low, mean)
            if ref.low == ref.high
            else f"{_fmt(ref.low, mean)}-{_fmt(ref.high, mean)}"
        )
        interval = f"[{_fmt(e.low, mean)}, {_fmt(e.high, mean)}]"
        lines.append(
            f"{e.name:<50} {_fmt(e.value, mean):>9}  {interval:<23} {ref_text:<19} "
            f"{'yes' if e.agrees else 'NO':<6}  {ref.text}"
        )
    agree = sum(e.agrees for e in report.estimates)
    lines += [
        "",
        "The opening deal is 12 random cards, so the first and the fifth line are one sample.",
        f"{agree} of {len(report.estimates)} figures agree with their reference",
    ]
    return "\n".join(lines)
