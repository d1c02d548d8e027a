"""The SET rule: three cards where every attribute is all the same or all different.

Facts used here (rules booklets in ``../shared/rules``; the counting facts are in the encyclopedia
article there):

* Any two distinct cards are completed to a SET by exactly one third card. With value positions
  0..2 per attribute, the third card's position is ``(-a - b) mod 3`` per attribute.
* The 81-card deck holds 1080 SETs; 20 cards can hold no SET (the cap of maximal size), 21 always
  hold one.
* The beginners' game removes one attribute (e.g. only solid cards, or only one colour): 27 cards,
  and a SET is judged on the remaining three attributes. Because the removed attribute is the same
  on every card of that deck, the ordinary rule gives the same answer, so the functions below are
  shared by every variant; :class:`Variant` only decides which cards are in the deck.

Duplicate cards (two identical cards on one table: a misreading, or two decks mixed) are handled
deliberately: a SET needs three *distinct* cards, so identical cards never form a SET together
(``is_set(a, a, a)`` is False, although every attribute is "all the same"). :func:`find_sets`
works on table positions, so a card present twice yields each of its SETs once per copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum
from itertools import combinations
from typing import Final

from vision.cards import Card, Colour, Fill, full_deck

__all__ = [
    "SMALLEST_TABLE", "Variant", "count_sets", "find_sets", "has_set", "is_set",
    "no_set_verdict", "third_card",
]  # fmt: skip


def is_set(a: Card, b: Card, c: Card) -> bool:
    """True if the three cards form a SET.

    Every attribute must be all the same or all different on the three cards, and the three
    cards must be distinct (see the module docstring on duplicates).
    """
    if a in (b, c) or b == c:
        return False
    return all((x + y + z) % 3 == 0 for x, y, z in zip(a.positions, b.positions, c.positions))


def third_card(a: Card, b: Card) -> Card:
    """The unique card that completes ``a`` and ``b`` to a SET.

    Raises:
        ValueError: if ``a == b`` (two identical cards are in no SET).
    """
    if a == b:
        raise ValueError(f"two identical cards ({a}) are in no SET")
    return Card.from_positions([(-x - y) % 3 for x, y in zip(a.positions, b.positions)])


def find_sets(cards: Sequence[Card]) -> list[tuple[int, int, int]]:
    """Every SET among the cards, each exactly once, as sorted index triples ``(i, j, k)``.

    Indices are positions in ``cards``; triples are in lexicographic order, ``i < j < k``.
    Runs in O(n^2) with a lookup of each pair's completing card.

    A card present more than once (a misread, or two decks) takes part once per copy: with
    ``cards = [A, B, C, C]`` where A, B, C form a SET, the result is ``[(0, 1, 2), (0, 1, 3)]``.
    Identical cards never form a SET with each other.
    """
    where: dict[int, list[int]] = {}
    for pos, card in enumerate(cards):
        where.setdefault(card.index, []).append(pos)
    found: list[tuple[int, int, int]] = []
    for i, j in combinations(range(len(cards)), 2):
        a, b = cards[i], cards[j]
        if a == b:
            continue
        for k in where.get(third_card(a, b).index, ()):
            if k > j:
                found.append((i, j, k))
    found.sort()
    return found


def has_set(cards: Sequence[Card]) -> bool:
    """True if at least one SET is among the cards (stops at the first one found)."""
    present = {card.index for card in cards}
    distinct = [Card.from_index(i) for i in sorted(present)]
    return any(third_card(a, b).index in present for a, b in combinations(distinct, 2))


def count_sets(cards: Iterable[Card]) -> int:
    """Number of SETs among the cards (``len(find_sets(cards))``)."""
    return len(find_sets(list(cards)))


class Variant(Enum):
    """Which deck is played (rules booklets in ``../shared/rules``).

    ``STANDARD``: all 81 cards, 12 dealt. ``BEGINNER_SOLID``: only solid cards (Dutch rules,
    "Varianten en tips"), 27 cards. ``BEGINNER_ONE_COLOUR``: only one colour, 27 cards on a 3x3
    table (German rules sheet). In both beginners' games a SET is judged on the other three
    attributes, and 9 cards are dealt.
    """

    STANDARD = "standard"
    BEGINNER_SOLID = "beginner-solid"
    BEGINNER_ONE_COLOUR = "beginner-one-colour"

    def deck(self, colour: Colour = Colour.RED) -> tuple[Card, ...]:
        """The cards of this variant's deck in index order (``colour`` picks the one colour)."""
        if self is Variant.BEGINNER_SOLID:
            return tuple(c for c in full_deck() if c.fill is Fill.SOLID)
        if self is Variant.BEGINNER_ONE_COLOUR:
            return tuple(c for c in full_deck() if c.colour is colour)
        return full_deck()

    @property
    def table_size(self) -> int:
        """Cards dealt face up at the start and kept by refills: 12, or 9 for beginners."""
        return 12 if self is Variant.STANDARD else 9


#: The fewest cards a table holds while the deck lasts: 9, in the beginners' games.
SMALLEST_TABLE: Final = min(v.table_size for v in Variant)


def no_set_verdict(n_cards: int) -> str:
    """What to say when ``n_cards`` cards on the table hold no SET (``n_cards`` >= 1).

    A table of 9 or more cards with no SET gets 3 more cards (the rules: 12 dealt, 9 in the
    beginners' games, 3 more while no SET is on the table). Fewer cards than any table holds is
    the end of a game with the deck out, or cards not seen, so no deal is advised.

    Raises:
        ValueError: if ``n_cards`` is below 1.
    """
    if n_cards < 1:
        raise ValueError(f"n_cards: expected at least 1, got {n_cards}")
    if n_cards >= SMALLEST_TABLE:
        return "no SET on the table: deal 3 more cards"
    return "no SET: only 1 card" if n_cards == 1 else f"no SET among these {n_cards} cards"
