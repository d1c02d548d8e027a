"""Table-level colour: ink measured against the paper, grouped across the table, fused."""

from __future__ import annotations

import numpy as np
import pytest

from vision.cards import Card, Colour, parse_card
from vision.colour import (
    SymbolColours,
    cluster_inks,
    fuse_colour,
    symbol_colours,
    table_colour,
)
from vision.warp import warp_cards

from ._pipeline_fakes import table_frame

RED, GREEN, PURPLE = 0, 1, 2


def crops_of(cards: list[Card], cast: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> np.ndarray:
    frame, corners = table_frame(cards, width=960, height=540)
    lit = np.clip(frame.astype(np.float32) * np.array(cast, np.float32), 0, 255).astype(np.uint8)
    return warp_cards(lit, corners)


def model(colours: list[int], sure: float = 0.9) -> np.ndarray:
    p = np.full((len(colours), 3), (1 - sure) / 2, np.float32)
    p[np.arange(len(colours)), colours] = sure
    return p


MIXED = [parse_card(t) for t in (
    "1 red solid oval", "2 green solid ovals", "3 purple solid ovals",
    "2 red solid ovals", "1 green solid oval", "1 purple solid oval",
)]  # fmt: skip
TRUE = [RED, GREEN, PURPLE, RED, GREEN, PURPLE]


@pytest.mark.parametrize(
    "cast",
    [(1.0, 1.0, 1.0), (0.6, 0.85, 1.0), (1.0, 0.9, 0.6), (0.35, 0.35, 0.35)],
    ids=["neutral", "warm", "cool", "dim"],
)
def test_hue_separates_the_three_inks_under_casts(cast: tuple[float, float, float]) -> None:
    inks = symbol_colours(crops_of(MIXED, cast))
    assert inks.valid.all()
    hue = inks.hue_deg
    assert -15 < hue[0] < 75 and -15 < hue[3] < 75  # red
    assert 100 < hue[1] < 200 and 100 < hue[4] < 200  # green
    assert -90 < hue[2] < -20 and -90 < hue[5] < -20  # purple


def test_blank_card_has_no_valid_ink() -> None:
    crops = crops_of(MIXED[:2])
    crops[1, 30:-30, 20:-20] = crops[1, 5, 80]  # paint the symbols over with paper
    inks = symbol_colours(crops)
    assert inks.valid.tolist() == [True, False]


def test_one_misread_card_is_pulled_into_its_ink_group() -> None:
    crops = crops_of(MIXED, (0.7, 0.9, 1.0))  # warm light: red read as purple
    probs = model(TRUE)
    probs[3] = [0.35, 0.05, 0.60]
    fused, groups, _ = table_colour(crops, probs)
    assert fused.argmax(axis=1).tolist() == TRUE
    assert len(groups.colours) == 3
    assert np.allclose(fused.sum(axis=1), 1.0)


def test_table_out_of_agreement_leaves_the_model_alone() -> None:
    # Both purple cards read as red (dark blue printing): the model disagrees with the inks on a
    # third of the table, so the table does not trust its inks (measured: forcing the inks'
    # grouping there costs more readings than it fixes, scripts/evaluate_colour.py).
    crops = crops_of(MIXED)
    probs = model(TRUE)
    probs[2] = probs[5] = [0.5, 0.1, 0.4]
    fused, groups, _ = table_colour(crops, probs)
    assert groups.weight == 0.0 and groups.agreement < 0.75
    assert np.allclose(fused, probs)


def test_very_sure_model_keeps_its_reading() -> None:
    crops = crops_of(MIXED)
    probs = model(TRUE)
    probs[0] = [0.001, 0.001, 0.998]  # a real purple card whose ink looks red? keep it
    fused, _, _ = table_colour(crops, probs)
    assert fused[0].argmax() == PURPLE


def test_single_colour_table_stays_one_group() -> None:
    cards = [Card.from_positions((c, GREEN, s, 0)) for c in range(3) for s in range(3)]
    crops = crops_of(cards)
    probs = model([GREEN] * 9)
    probs[4] = [0.1, 0.45, 0.45]
    fused, groups, _ = table_colour(crops, probs)
    assert set(groups.labels.tolist()) == {0}
    assert groups.colours.tolist() == [GREEN]
    assert (fused.argmax(axis=1) == GREEN).all()


def test_one_card_table() -> None:
    crops = crops_of(MIXED[2:3])
    fused, groups, _ = table_colour(crops, model([PURPLE], 0.96))
    assert fused.argmax() == PURPLE and fused[0, PURPLE] > 0.96
    assert groups.labels.tolist() == [0] and groups.colours.tolist() == [PURPLE]


def test_cards_without_ink_are_left_alone() -> None:
    inks = SymbolColours(
        ab=np.zeros((2, 2), np.float32),
        lightness=np.zeros(2, np.float32),
        chroma=np.zeros(2, np.float32),
        hue_deg=np.zeros(2, np.float32),
        ink_fraction=np.zeros(2, np.float32),
        valid=np.zeros(2, bool),
    )
    probs = model([RED, GREEN], 0.5)
    groups = cluster_inks(inks, probs)
    assert groups.labels.tolist() == [-1, -1]
    assert np.allclose(fuse_colour(probs, groups, inks), probs)


def test_empty_and_bad_input() -> None:
    assert len(symbol_colours(np.zeros((0, 250, 160, 3), np.uint8))) == 0
    with pytest.raises(ValueError, match="uint8"):
        symbol_colours(np.zeros((1, 250, 160, 3), np.float32))
    inks = symbol_colours(crops_of(MIXED[:2]))
    with pytest.raises(ValueError, match="colour_probs"):
        cluster_inks(inks, np.zeros((3, 3), np.float32))


def test_colour_order_matches_the_enum() -> None:
    assert [c.value for c in Colour] == ["red", "green", "purple"]
