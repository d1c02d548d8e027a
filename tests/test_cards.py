"""Cards: index round trip, deck, parsing and formatting of human text."""

from __future__ import annotations

import pytest

from vision.cards import Card, Colour, Count, Fill, Shape, full_deck, parse_card


def test_deck_has_81_distinct_cards_in_index_order() -> None:
    deck = full_deck()
    assert len(deck) == 81
    assert len(set(deck)) == 81
    assert [c.index for c in deck] == list(range(81))


@pytest.mark.parametrize("index", range(81))
def test_index_and_label_round_trip(index: int) -> None:
    card = Card.from_index(index)
    assert card.index == index
    assert parse_card(card.label) == card
    assert Card.from_positions(card.positions) == card


@pytest.mark.parametrize("bad", [-1, 81, 1.5, "3", True, None])
def test_from_index_rejects_bad_values(bad: object) -> None:
    with pytest.raises(ValueError, match="0..80"):
        Card.from_index(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 red striped diamonds", Card(Count.TWO, Colour.RED, Shape.DIAMOND, Fill.STRIPED)),
        ("1 green open oval", Card(Count.ONE, Colour.GREEN, Shape.OVAL, Fill.OPEN)),
        (
            "three purple shaded squiggles",
            Card(Count.THREE, Colour.PURPLE, Shape.SQUIGGLE, Fill.STRIPED),
        ),
        ("2-red-diamond-empty", Card(Count.TWO, Colour.RED, Shape.DIAMOND, Fill.OPEN)),
        ("  Oval SOLID 1 Red ", Card(Count.ONE, Colour.RED, Shape.OVAL, Fill.SOLID)),
        ("3 purple outline capsules", Card(Count.THREE, Colour.PURPLE, Shape.OVAL, Fill.OPEN)),
        ("1 green filled wave", Card(Count.ONE, Colour.GREEN, Shape.SQUIGGLE, Fill.SOLID)),
        # The shared datasets' vocabulary: blue = purple, partial/dashed = striped, bean = squiggle.
        ("2 blue dashed beans", Card(Count.TWO, Colour.PURPLE, Shape.SQUIGGLE, Fill.STRIPED)),
        ("1 red partial oval.", Card(Count.ONE, Colour.RED, Shape.OVAL, Fill.STRIPED)),
        ("1red solid oval!", Card(Count.ONE, Colour.RED, Shape.OVAL, Fill.SOLID)),
        ("3diamonds green open?", Card(Count.THREE, Colour.GREEN, Shape.DIAMOND, Fill.OPEN)),
    ],
)
def test_parse_accepts_booklet_synonyms(text: str, expected: Card) -> None:
    assert parse_card(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no count, colour, fill or shape;"),
        ("2 red", "no fill or shape;"),
        ("2 red diamonds", "no fill"),
        ("2 pink striped diamonds", "unknown word 'pink'"),
        ("2 red striped squigles", "did you mean 'squiggle'"),
        ("2 3 red striped diamonds", "count given twice"),
        # two cards pasted into one argument were read as one card
        ("1 red solid oval 1 red solid oval", "the same count given twice .*quote each card"),
        ("1 red solid solid oval", "the same fill given twice"),
        ("1 red solid oval 1", "the same count given twice"),
        ("red striped diamonds", "no count"),
        ("-1 red solid oval", "no sign"),
    ],
)
def test_parse_errors_say_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        parse_card(text)
    assert "expected a count" in str(info.value)


def test_labels_use_singular_and_plural() -> None:
    assert Card(Count.ONE, Colour.GREEN, Shape.OVAL, Fill.OPEN).label == "1 green open oval"
    assert Card(Count.TWO, Colour.RED, Shape.DIAMOND, Fill.STRIPED).label == (
        "2 red striped diamonds"
    )


def test_card_is_immutable_and_type_checked() -> None:
    card = Card.from_index(0)
    with pytest.raises(AttributeError):
        card.count = Count.TWO  # type: ignore[misc]
    with pytest.raises(TypeError, match="expected Colour"):
        Card(Count.ONE, "red", Shape.OVAL, Fill.OPEN)  # type: ignore[arg-type]
