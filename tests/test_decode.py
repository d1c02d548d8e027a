"""Table-level decoding: the deck has each card once; confidences and uncertainty."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.cards import Card, parse_card
from vision.decode import decode_table, identity_log_probs, tempered_log_probs


def probs_for(cards: list[Card], sure: float = 0.9) -> list[np.ndarray]:
    out = []
    for a in range(4):
        p = np.full((len(cards), 3), (1 - sure) / 2, np.float32)
        for i, card in enumerate(cards):
            p[i, card.positions[a]] = sure
        out.append(p)
    return out


def test_identity_log_probs_match_card_index() -> None:
    card = parse_card("2 purple striped squiggles")
    scores = identity_log_probs(tuple(probs_for([card])))
    assert scores.shape == (1, 81)
    assert int(scores.argmax()) == card.index
    assert np.isclose(np.exp(scores[0, card.index]), 0.9**4, rtol=1e-5)


def test_clear_table_decodes_to_its_own_readings() -> None:
    cards = [Card.from_index(i) for i in (0, 17, 40, 80)]
    decoded = decode_table(tuple(probs_for(cards)))
    assert decoded.cards == tuple(cards)
    assert not decoded.duplicates.any() and not decoded.changed.any()
    assert np.allclose(decoded.confidences, 0.9**4, rtol=1e-5)


def test_duplicate_is_resolved_by_the_less_sure_card() -> None:
    a = parse_card("1 red solid oval")
    b = parse_card("1 purple solid oval")
    probs = probs_for([a, a])
    # Card 2 is unsure between red and purple: red 0.55, purple 0.45.
    probs[1][1] = [0.55, 0.0, 0.45]
    decoded = decode_table(tuple(probs))
    assert decoded.cards == (a, b)
    assert decoded.duplicates.tolist() == [True, True]
    assert decoded.changed.tolist() == [False, True]
    assert decoded.uncertain[1]


def test_mixed_decks_keep_repeats() -> None:
    a = parse_card("3 green open diamonds")
    decoded = decode_table(tuple(probs_for([a, a])), mixed_decks=True)
    assert decoded.cards == (a, a)
    assert decoded.duplicates.all() and not decoded.changed.any()


@pytest.mark.parametrize(("threshold", "expected"), [(0.5, False), (0.7, True)])
def test_uncertain_threshold(threshold: float, expected: bool) -> None:
    decoded = decode_table(tuple(probs_for([Card.from_index(5)])), uncertain_below=threshold)
    assert decoded.uncertain[0] == expected  # confidence 0.9**4 = 0.656


def test_empty_table() -> None:
    decoded = decode_table(tuple(np.zeros((0, 3), np.float32) for _ in range(4)))
    assert decoded.cards == () and decoded.confidences.shape == (0,)


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="expected"):
        decode_table((np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((2, 3)), np.zeros((2, 3))))
    with pytest.raises(ValueError, match="4 attribute"):
        decode_table((np.zeros((2, 3)),))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_assignment_is_the_best_distinct_reading(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Peaked probabilities so that conflicts are common.
    probs = tuple(rng.dirichlet(np.ones(3) * 0.3, size=n).astype(np.float32) for _ in range(4))
    probs = tuple(np.where(p > 0, p, 1e-3).astype(np.float32) for p in probs)
    probs = tuple(np.repeat(p[:1], n, axis=0) if seed % 2 else p for p in probs)
    decoded = decode_table(probs)
    chosen = [c.index for c in decoded.cards]
    assert len(set(chosen)) == n
    scores = identity_log_probs(probs)
    # Brute force: an optimal distinct choice uses one of each card's n best identities.
    top = np.argsort(-scores, axis=1)[:, :n]
    best = max(
        scores[np.arange(n), list(combo)].sum()
        for combo in itertools.product(*top.tolist())
        if len(set(combo)) == n
    )
    assert scores[np.arange(n), chosen].sum() == pytest.approx(best, abs=1e-6)


def test_temperatures_change_the_confidence_not_the_reading() -> None:
    from vision.decode import decode_table

    rng = np.random.default_rng(3)
    probs = tuple(rng.dirichlet(np.ones(3) * 0.5, size=6).astype(np.float32) for _ in range(4))
    raw = decode_table(probs)
    temps = (0.5, 0.33, 0.51, 0.42)
    cal = decode_table(probs, temperatures=temps)
    assert cal.cards == raw.cards
    # By hand: each head re-softmaxed at its temperature, at the chosen value.
    expected = np.ones(6)
    for h, (p, t) in enumerate(zip(probs, temps, strict=True)):
        q = np.exp(np.log(p.astype(np.float64)) / t)
        q /= q.sum(axis=1, keepdims=True)
        expected *= q[np.arange(6), [c.positions[h] for c in raw.cards]]
    np.testing.assert_allclose(cal.confidences, expected, rtol=1e-5)
    assert (cal.confidences >= raw.confidences - 1e-6).all()  # T < 1 sharpens the top values
    assert decode_table(probs, temperatures=(1, 1, 1, 1)).confidences == pytest.approx(
        raw.confidences, rel=1e-5
    )
    with pytest.raises(ValueError, match="temperatures"):
        decode_table(probs, temperatures=(0.5, 0.5, 0.5))


def test_evidence_fused_into_a_head_is_not_tempered() -> None:
    from vision.decode import decode_table

    # pclewis shadow4 at JPEG 50, card 3: the model 0.54 red / 0.05 green / 0.41 purple; the
    # table's inks (the outline's hue, shifted by a hand's shadow, nearer the reds) add
    # evidence for red, fused 0.78 red. Tempering the fused probabilities sharpened that
    # evidence too: 0.986, not flagged.
    model = np.array([[0.54, 0.05, 0.41]])
    evidence = np.log(np.array([[0.78, 0.04, 0.18]]) / model)
    fused = np.exp(np.log(model) + evidence)
    fused /= fused.sum()
    sure = np.array([[0.0, 0.0, 1.0]], np.float32) + 1e-7  # the other heads certain
    probs = (sure, fused.astype(np.float32), sure, sure)
    temps = (0.5, 0.34, 0.52, 0.44)
    before = decode_table(probs, temperatures=temps).confidences[0]
    after = decode_table(probs, temperatures=temps, evidence=(None, evidence, None, None))
    assert after.cards[0].colour.value == "red"
    # By hand: the model's part tempered, the evidence added unscaled.
    z = np.log(model[0]) / 0.34 + evidence[0]
    expected = np.exp(z - np.log(np.exp(z).sum()))[0]
    assert after.confidences[0] == pytest.approx(expected, rel=1e-4)
    assert before > 0.98 and after.confidences[0] < 0.9
    # No evidence, or a temperature of 1, is the plain case.
    zero = (None, np.zeros((1, 3)), None, None)
    assert decode_table(probs, temperatures=temps, evidence=zero).confidences[0] == pytest.approx(
        before, rel=1e-5
    )
    ones = decode_table(probs, temperatures=(1, 1, 1, 1), evidence=(None, evidence, None, None))
    assert ones.confidences[0] == pytest.approx(decode_table(probs).confidences[0], rel=1e-4)


@pytest.mark.parametrize(
    ("confidence", "shown"),
    [(0.0, "<1%"), (0.0099, "<1%"), (0.01, "1%"), (0.424, "42%"), (0.29, "29%"),
     (0.8981, "89%"), (0.9, "90%"), (0.9849, "98%"), (0.9899, "98%"), (0.99, "99.0%"),
     (0.9976, "99.7%"), (0.99996, "99.9%"), (1.0, "99.9%")],
)  # fmt: skip
def test_a_confidence_is_shown_rounded_down_in_whole_percent_then_one_decimal_never_0_or_100(
    confidence: float, shown: str
) -> None:
    from vision.decode import format_confidence

    assert format_confidence(confidence) == shown


def test_a_temperature_per_card_tempers_each_card_alone() -> None:
    from vision.decode import decode_table

    rng = np.random.default_rng(4)
    probs = tuple(rng.dirichlet(np.ones(3) * 0.5, size=5).astype(np.float32) for _ in range(4))
    temps = (0.5, 0.34, 0.52, 0.44)
    table = decode_table(probs, temperatures=temps).confidences
    per_card = np.array([0.44, 1.0, 0.44, 1.0, 0.44])
    mixed = decode_table(probs, temperatures=(*temps[:3], per_card)).confidences
    unsharpened = decode_table(probs, temperatures=(*temps[:3], 1.0)).confidences
    np.testing.assert_allclose(mixed[::2], table[::2], rtol=1e-6)
    np.testing.assert_allclose(mixed[1::2], unsharpened[1::2], rtol=1e-6)
    with pytest.raises(ValueError, match="temperatures"):
        decode_table(probs, temperatures=(*temps[:3], np.array([0.4, 0.0, 1, 1, 1])))


@pytest.mark.parametrize("temperature", [0.0, -0.5, float("nan")])
def test_a_temperature_that_is_not_positive_is_refused(temperature) -> None:
    with pytest.raises(ValueError, match="temperature"):  # T = 0 returned NaN
        tempered_log_probs(np.full((2, 3), 1 / 3), temperature)
    np.testing.assert_allclose(
        np.exp(tempered_log_probs([[0.2, 0.3, 0.5]], 1.0)), [[0.2, 0.3, 0.5]]
    )
