"""The simulator: the fast path plays exactly the state machine's games, and a seeded run
agrees with the published figures within statistically sound tolerances."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from vision.cli import app
from vision.game import replay
from vision.simulate import (
    CHECK_CONFIDENCE,
    FIGURES,
    Tally,
    estimates,
    format_report,
    play_fast,
    play_reference,
    simulate,
    wilson,
)

#: Tolerance of the statistical checks: 4.5 standard errors. Over the 8 figures, the chance
#: that a correct engine fails is below 1e-4 even for a fresh seed; with the fixed seed the
#: test is deterministic.
Z = 4.5


@pytest.fixture(scope="module")
def run():
    return simulate(games=4000, seed=20261129)


def test_fast_path_plays_the_same_games_as_the_state_machine() -> None:
    fast, slow = Tally(), Tally()
    for game_seed in range(25):
        fast_moves: list[tuple[str, tuple[int, ...]]] = []
        slow_moves: list[tuple[str, tuple[int, ...]]] = []
        play_fast(game_seed, fast, fast_moves)
        game = play_reference(game_seed, slow, slow_moves)
        assert fast_moves == slow_moves, f"game {game_seed} differs"
        assert game.over and replay(game.events).state() == game.state()
    assert fast == slow  # identical statistics, table by table
    assert fast.games == 25 and sum(fast.tables_12) > 25 * 20


def test_seeded_run_is_reproducible() -> None:
    a, b = simulate(games=300, seed=7), simulate(games=300, seed=7)
    assert a.tally == b.tally and a.estimates == b.estimates
    assert simulate(games=300, seed=8).tally != a.tally


def test_run_agrees_with_the_published_figures(run) -> None:
    for estimate in estimates(run.tally, z=Z):
        assert estimate.agrees, (
            f"{estimate.name}: {estimate.value:.5f} in [{estimate.low:.5f}, {estimate.high:.5f}]"
            f" misses {estimate.reference.text}"
        )


@pytest.mark.parametrize(("size", "exact"), [(12, math.comb(12, 3) / 79), (15, 455 / 79)])
def test_mean_number_of_sets_matches_the_exact_expectation(run, size: int, exact: float) -> None:
    tally = run.tally
    total, sq = (
        (tally.sets_12, tally.sets_12_sq) if size == 12 else (tally.sets_15, tally.sets_15_sq)
    )
    n = tally.games
    mean = total / n
    sd = math.sqrt((sq - n * mean * mean) / (n - 1))
    assert abs(mean - exact) < Z * sd / math.sqrt(n)


def test_no_set_gets_likelier_as_the_game_goes_on(run) -> None:
    # The opening deal is 12 random cards; later tables are what is left after SETs were taken,
    # which holds fewer SETs (encyclopedia: 30:1 at first, 14:1 by the fourth round).
    t = run.tally
    later = sum(t.no_set_tables_12[8:]) / sum(t.tables_12[8:])
    first = t.no_set_tables_12[0] / t.tables_12[0]
    se = math.sqrt(first * (1 - first) / t.tables_12[0])
    assert later > first + 2 * se


def test_wilson_interval() -> None:
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(1 - hi) and 0.2 < lo < 0.25
    assert wilson(0, 100)[0] == 0.0 and 0 < wilson(0, 100)[1] < 0.04
    assert wilson(100, 100)[1] == 1.0
    with pytest.raises(ValueError, match="trials"):
        wilson(3, 0)


@pytest.mark.parametrize("seed", range(5))
def test_a_few_games_never_give_a_negative_bound_on_a_count(seed: int) -> None:
    # `simulate --games 2` showed a mean SETs count of [-0.88, 10.88].
    for estimate in simulate(games=2, seed=seed).estimates:
        assert math.isnan(estimate.low) or estimate.low >= 0.0, estimate


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least 2 games"):
        simulate(games=1)
    with pytest.raises(ValueError, match="confidence"):
        simulate(games=10, confidence=1.5)


def test_report_text_and_json(run) -> None:
    text = format_report(run)
    assert "4000 games" in text and "figures agree with their reference" in text
    data = run.to_dict()
    assert len(data["estimates"]) == 8 and data["no_set_12_by_round"][0]["round"] == 0
    json.dumps(data, allow_nan=False)


def test_cli_simulate() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", "--games", "200", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "P(no SET in 12 random cards)" in result.output
    result = runner.invoke(app, ["simulate", "--games", "50", "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["games"] == 50
    assert runner.invoke(app, ["simulate", "--games", "1"]).exit_code == 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tiny_runs_never_claim_certainty(seed: int) -> None:
    # Two games may show no 15-card table without a SET at all: a proportion's interval must
    # still be wide (it was [0%, 0%], which failed --check).
    for estimate in simulate(games=2, seed=seed).estimates:
        if estimate.method != "normal" and not math.isnan(estimate.low):
            assert estimate.high > estimate.low, estimate.name


def test_references_hold_the_true_values_where_they_are_known(run) -> None:
    """The 15-random-card reference covers the value a direct count gives (0.0363%: 3,632 of
    10,000,000 random deals without a SET, independent of the engine); the booklet's "~2500:1"
    taken as exactly 1/2501 did not, so long runs of a right engine failed --check."""
    figures = {e.name: e.reference for e in estimates(run.tally)}
    assert len(figures) == FIGURES
    fifteen = figures["P(no SET in 15 random cards)"]
    assert fifteen.low < 3632 / 10_000_000 < fifteen.high


def test_check_widens_the_intervals_for_all_figures_together() -> None:
    # Eight figures at 95% each: a right engine misses one in about a third of the seeds.
    assert pytest.approx(1 - 0.05 / FIGURES) == CHECK_CONFIDENCE
    result = CliRunner().invoke(app, ["simulate", "--games", "300", "--check"])
    assert "99.375% intervals" in result.output
    assert "only gross errors can show" in result.stderr  # 300 games: said so
    plain = CliRunner().invoke(app, ["simulate", "--games", "300"])
    assert "95% intervals" in plain.output and plain.stderr == ""
