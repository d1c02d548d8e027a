"""SET cards: the four attributes, the 81-card deck, a compact index and human-readable text.

A card has four attributes with three values each (the rules booklets call them number, colour,
symbol and shading; this project says count, colour, shape and fill everywhere in code):

=========  ==============================
count      1, 2, 3
colour     red, green, purple
shape      oval, diamond, squiggle
fill       solid, striped, open
=========  ==============================

Each value has a position 0..2 inside its attribute (the order in the table above). The compact
index of a card is ``27*count_pos + 9*colour_pos + 3*shape_pos + fill_pos`` (0..80), so
``Card.from_index(i).index == i``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = [
    "ATTRIBUTES",
    "Colour",
    "Count",
    "Card",
    "Fill",
    "Shape",
    "UNKNOWN_COLOUR",
    "full_deck",
    "parse_card",
]


class Count(Enum):
    """Number of symbols on a card (the booklets' "number")."""

    ONE = 1
    TWO = 2
    THREE = 3


#: How a colour that could not be read is shown (a colourless photo:
#: ``vision.table.Table.colourless``).
UNKNOWN_COLOUR: Final = "(colour?)"


class Colour(Enum):
    """Ink colour of the symbols."""

    RED = "red"
    GREEN = "green"
    PURPLE = "purple"


class Shape(Enum):
    """Symbol shape (the booklets' "symbol")."""

    OVAL = "oval"
    DIAMOND = "diamond"
    SQUIGGLE = "squiggle"


class Fill(Enum):
    """Symbol fill (the booklets' "shading")."""

    SOLID = "solid"
    STRIPED = "striped"
    OPEN = "open"


#: Attribute names in index order, with their enum types.
ATTRIBUTES: Final[tuple[tuple[str, type[Enum]], ...]] = (
    ("count", Count),
    ("colour", Colour),
    ("shape", Shape),
    ("fill", Fill),
)

_COUNTS: Final = tuple(Count)
_COLOURS: Final = tuple(Colour)
_SHAPES: Final = tuple(Shape)
_FILLS: Final = tuple(Fill)


@dataclass(frozen=True, slots=True, order=False)
class Card:
    """One SET card: an immutable value. Two cards with equal attributes are equal.

    Attributes:
        count: number of symbols.
        colour: ink colour.
        shape: symbol shape.
        fill: symbol fill.
    """

    count: Count
    colour: Colour
    shape: Shape
    fill: Fill

    def __post_init__(self) -> None:
        for (name, kind), value in zip(ATTRIBUTES, self.values(), strict=True):
            if not isinstance(value, kind):
                raise TypeError(f"Card.{name}: expected {kind.__name__}, got {value!r}")

    def values(self) -> tuple[Count, Colour, Shape, Fill]:
        """The four attribute values in the order count, colour, shape, fill."""
        return (self.count, self.colour, self.shape, self.fill)

    @property
    def positions(self) -> tuple[int, int, int, int]:
        """Each attribute's value position 0..2 (count, colour, shape, fill)."""
        return (
            _COUNTS.index(self.count),
            _COLOURS.index(self.colour),
            _SHAPES.index(self.shape),
            _FILLS.index(self.fill),
        )

    @classmethod
    def from_positions(cls, positions: tuple[int, int, int, int] | list[int]) -> Card:
        """Build a card from four value positions 0..2 (count, colour, shape, fill).

        Raises:
            ValueError: if there are not four positions or one is outside 0..2.
        """
        if len(positions) != 4 or any(p not in (0, 1, 2) for p in positions):
            raise ValueError(f"expected four positions in 0..2, got {tuple(positions)!r}")
        c, k, s, f = (int(p) for p in positions)
        return cls(_COUNTS[c], _COLOURS[k], _SHAPES[s], _FILLS[f])

    @property
    def index(self) -> int:
        """Compact index 0..80 (see the module docstring)."""
        c, k, s, f = self.positions
        return 27 * c + 9 * k + 3 * s + f

    @classmethod
    def from_index(cls, index: int) -> Card:
        """Inverse of :attr:`index`.

        Raises:
            ValueError: if ``index`` is not an integer in 0..80.
        """
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 81:
            raise ValueError(f"card index must be an integer in 0..80, got {index!r}")
        return cls.from_positions((index // 27, index // 9 % 3, index // 3 % 3, index % 3))

    @property
    def label(self) -> str:
        """Human text, e.g. ``"2 red striped diamonds"`` or ``"1 green open oval"``."""
        n = self.count.value
        noun = self.shape.value + ("s" if n > 1 else "")
        return f"{n} {self.colour.value} {self.fill.value} {noun}"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse human text; see :func:`parse_card`."""
        return parse_card(text)


def full_deck() -> tuple[Card, ...]:
    """The 81 distinct cards of a standard deck, in index order."""
    return tuple(Card.from_index(i) for i in range(81))


# Words accepted when parsing. Synonyms come from the rules booklets and from the label
# vocabularies of public datasets (../shared/datasets/README.md): "empty"/"outline" = open,
# "shaded"/"lined"/"partial"/"dashed" = striped, "filled"/"full" = solid, "capsule"/"pill" = oval,
# "wave"/"bean" = squiggle, "blue" = purple (a deck whose purple prints dark blue).
_WORDS: Final[dict[str, Enum]] = {
    "1": Count.ONE, "one": Count.ONE, "single": Count.ONE,
    "2": Count.TWO, "two": Count.TWO,
    "3": Count.THREE, "three": Count.THREE,
    "red": Colour.RED, "green": Colour.GREEN, "purple": Colour.PURPLE, "violet": Colour.PURPLE,
    "blue": Colour.PURPLE,
    "oval": Shape.OVAL, "capsule": Shape.OVAL, "pill": Shape.OVAL,
    "diamond": Shape.DIAMOND, "rhombus": Shape.DIAMOND,
    "squiggle": Shape.SQUIGGLE, "wave": Shape.SQUIGGLE, "squiggly": Shape.SQUIGGLE,
    "bean": Shape.SQUIGGLE,
    "solid": Fill.SOLID, "filled": Fill.SOLID, "full": Fill.SOLID,
    "striped": Fill.STRIPED, "stripes": Fill.STRIPED, "stripe": Fill.STRIPED,
    "shaded": Fill.STRIPED, "lined": Fill.STRIPED, "hatched": Fill.STRIPED,
    "partial": Fill.STRIPED, "dashed": Fill.STRIPED,
    "open": Fill.OPEN, "empty": Fill.OPEN, "outline": Fill.OPEN, "outlined": Fill.OPEN,
    "hollow": Fill.OPEN,
}  # fmt: skip

_EXPECTED = (
    "expected a count (1-3), a colour (red/green/purple), a fill (solid/striped/open) and a "
    'shape (oval/diamond/squiggle), e.g. "2 red striped diamonds"'
)


def _word_value(word: str) -> Enum | None:
    if word in _WORDS:
        return _WORDS[word]
    # Plurals: "ovals", "diamonds", "squiggles", "capsules", "waves".
    if word.endswith("es") and word[:-2] in _WORDS and isinstance(_WORDS[word[:-2]], Shape):
        return _WORDS[word[:-2]]
    if word.endswith("s") and word[:-1] in _WORDS and isinstance(_WORDS[word[:-1]], Shape):
        return _WORDS[word[:-1]]
    return None


def parse_card(text: str) -> Card:
    """Parse a card from human text, in any word order.

    Accepts e.g. ``"2 red striped diamonds"``, ``"1 green open oval"``, ``"three purple shaded
    squiggles"``, ``"2-red-diamond-empty"`` and the booklet synonyms listed in ``_WORDS``.

    Raises:
        ValueError: if an attribute is missing, given twice, or a word is not understood; the
            message says what was expected.
    """
    if not isinstance(text, str):
        raise ValueError(f"expected card text, got {type(text).__name__}")
    if re.search(r"(^|\s)[-+]\d", text):
        raise ValueError(f"cannot read {text!r}: a count has no sign; {_EXPECTED}")
    # "1red" is "1 red"; a sentence's closing mark is not a word.
    spaced = re.sub(r"(\d)([a-z])", r"\1 \2", text.strip().lower().rstrip(".;!?"))
    words = [w for w in re.split(r"[\s,_\-/]+", spaced) if w]
    found: dict[type[Enum], Enum] = {}
    for word in words:
        value = _word_value(word)
        if value is None:
            close = difflib.get_close_matches(word, _WORDS, n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"cannot read {text!r}: unknown word {word!r}{hint}; {_EXPECTED}")
        kind = type(value)
        if kind in found:  # even the same value: "1 red solid oval 1 red solid oval" is 2 cards
            again = "the same " if found[kind] is value else ""
            raise ValueError(
                f"cannot read {text!r}: {again}{_kind_name(kind)} given twice (one card per "
                f"argument; quote each card); {_EXPECTED}"
            )
        found[kind] = value
    # In the order of _EXPECTED (and of "2 red striped diamonds"): count, colour, fill, shape.
    missing = [name for name, kind in ATTRIBUTES if kind not in found]
    missing.sort(key=("count", "colour", "fill", "shape").index)
    if missing:
        listed = f"{', '.join(missing[:-1])} or {missing[-1]}" if len(missing) > 1 else missing[0]
        raise ValueError(f"cannot read {text!r}: no {listed}; {_EXPECTED}")
    return Card(found[Count], found[Colour], found[Shape], found[Fill])  # type: ignore[arg-type]


def _kind_name(kind: type[Enum]) -> str:
    return next(name for name, k in ATTRIBUTES if k is kind)
