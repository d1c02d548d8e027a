"""What a labelled dataset holds: photos, their cards, and whether a person checked them.

:class:`LabelledCard` and :class:`LabelledPhoto` are the in-memory form of a dataset folder's
``annotations.json`` (:mod:`vision.dataset.coco`); every format the dataset is written in (Label
Studio, YOLO, card crops) and the review page are made from them. Corners follow the project's
convention (``datasets/detection/README.md``): pixels of the photo as displayed (EXIF orientation
applied), x right, y down, the top-left pixel's centre at (0, 0), ordered TL, TR, BR, BL of the
card in portrait (TL-TR a short side, clockwise on screen).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from vision.cards import ATTRIBUTES, Card
from vision.evaluation import canonical_order, polygon_area

__all__ = [
    "CORNER_DECIMALS",
    "LabelledCard",
    "LabelledPhoto",
    "card_from_attributes",
    "card_attributes",
    "merge_photos",
    "portrait_order",
]

#: Corners are kept to 1/100 px: finer than any labelling tool places them, and a round trip
#: through Label Studio's percentages (float64) comes back to the same numbers.
CORNER_DECIMALS: Final = 2


def portrait_order(corners: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``corners`` as (4, 2) float64 TL, TR, BR, BL portrait, rounded to :data:`CORNER_DECIMALS`.

    Four points that already run clockwise on screen from a short side are kept in their order
    (the detector's, or a person's choice of which short side is the top: a SET card reads the
    same turned 180 degrees); any other order is put right by
    :func:`vision.evaluation.canonical_order` (the short side nearer the image top first).

    Raises:
        ValueError: if ``corners`` is not four finite points, or encloses no area.
    """
    quad = np.asarray(corners, dtype=np.float64)
    if quad.shape != (4, 2) or not np.all(np.isfinite(quad)):
        raise ValueError(f"corners: expected 4 finite (x, y) points, got {quad.tolist()}")
    if polygon_area(quad) < 1.0:
        raise ValueError(f"corners: a quadrilateral of no area, {quad.tolist()}")
    x, y = quad[:, 0], quad[:, 1]
    clockwise = np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) > 0
    sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
    if not (clockwise and sides[0] + sides[2] <= sides[1] + sides[3]):
        quad = canonical_order(quad)
    return np.round(quad, CORNER_DECIMALS) + 0.0  # + 0.0: no "-0.0" in the files


def card_attributes(card: Card | None) -> dict[str, Any]:
    """``{"count": 2, "colour": "red", "shape": "oval", "fill": "open"}``; ``{}`` for None."""
    if card is None:
        return {}
    return {name: value.value for (name, _), value in zip(ATTRIBUTES, card.values(), strict=True)}


def card_from_attributes(data: dict[str, Any]) -> Card | None:
    """The card named by ``count``, ``colour``, ``shape`` and ``fill`` in ``data``; None when
    none of the four is there (a card a person could not read, e.g. partly hidden).

    Raises:
        ValueError: if only some are there, or one is not a value of ``vision.cards``.
    """
    present = [name for name, _ in ATTRIBUTES if data.get(name) is not None]
    if not present:
        return None
    if len(present) < len(ATTRIBUTES):
        missing = [name for name, _ in ATTRIBUTES if name not in present]
        raise ValueError(f"card attributes: {', '.join(missing)} missing (give all four or none)")
    positions = []
    for name, kind in ATTRIBUTES:
        raw = data[name]
        wanted = [str(v.value) for v in kind]
        if str(raw) not in wanted:
            raise ValueError(f"{name} {raw!r} is not one of {', '.join(wanted)}")
        positions.append(wanted.index(str(raw)))
    return Card.from_positions(positions)


@dataclass(frozen=True, eq=False)  # eq below: the corners are an array
class LabelledCard:
    """One card on a labelled photo.

    Attributes:
        corners: (4, 2) float64 pixels, TL, TR, BR, BL portrait (:func:`portrait_order`).
        card: its identity (count, colour, shape, fill), or None when not read (partial).
        partial: cut by the photo's edge or mostly covered (need not be found by a detector).
        confidence: the model's probability, 0..1, that its reading is right
            (:attr:`vision.table.Table.confidences`); None once a person changed the reading,
            or for a card a person added.
        checked: a person checked this card (its corners and reading).
    """

    corners: npt.NDArray[np.float64]
    card: Card | None
    partial: bool = False
    confidence: float | None = None
    checked: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "corners", portrait_order(self.corners))
        if self.card is not None and not isinstance(self.card, Card):
            raise TypeError(f"LabelledCard.card: expected a Card or None, got {self.card!r}")
        if self.confidence is not None and not 0.0 <= float(self.confidence) <= 1.0:
            raise ValueError(f"confidence: expected 0..1 or None, got {self.confidence!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelledCard):
            return NotImplemented
        mine = (self.card, self.partial, self.confidence, self.checked)
        theirs = (other.card, other.partial, other.confidence, other.checked)
        return mine == theirs and np.array_equal(self.corners, other.corners)


@dataclass(frozen=True)
class LabelledPhoto:
    """One photo of a dataset and its cards.

    Attributes:
        file: the photo's path as the dataset stores it: relative to the dataset folder, with
            forward slashes (``../photos/table1.jpg``), or absolute on another drive.
        width, height: the photo's size as displayed (EXIF orientation applied), pixels.
        cards: every SET card on it, in reading order as pre-labelled (an empty tuple: none).
        checked: a person checked the whole photo: every card, and that none is missing.
        note: free text (what is hard about the photo, what was decided).
    """

    file: str
    width: int
    height: int
    cards: tuple[LabelledCard, ...] = field(default_factory=tuple)
    checked: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        if not self.file:
            raise ValueError("LabelledPhoto.file: empty")
        if int(self.width) < 1 or int(self.height) < 1:
            raise ValueError(f"{self.file}: size {self.width}x{self.height} px")
        object.__setattr__(self, "cards", tuple(self.cards))

    def accepted(self) -> LabelledPhoto:
        """This photo and each of its cards marked checked by a person, readings unchanged."""
        return replace(
            self, checked=True, cards=tuple(replace(c, checked=True) for c in self.cards)
        )


def merge_photos(
    existing: Iterable[LabelledPhoto], new: Iterable[LabelledPhoto], *, replace_unchecked: bool
) -> tuple[list[LabelledPhoto], list[str]]:
    """Add pre-labelled photos to a dataset's, never losing a person's work.

    A new photo whose file the dataset already has is dropped, unless ``replace_unchecked`` and
    neither that photo nor any of its cards was checked (then the fresh pre-labels take its
    place); photos the dataset has stay in their order, new ones follow.

    Returns:
        (the photos, the files kept as they were although pre-labelled again).
    """
    photos = list(existing)
    where = {p.file: i for i, p in enumerate(photos)}
    kept: list[str] = []
    for photo in new:
        i = where.get(photo.file)
        if i is None:
            where[photo.file] = len(photos)
            photos.append(photo)
        elif replace_unchecked and not _touched(photos[i]):
            photos[i] = photo
        else:
            kept.append(photo.file)
    return photos, kept


def _touched(photo: LabelledPhoto) -> bool:
    return photo.checked or any(c.checked for c in photo.cards)
