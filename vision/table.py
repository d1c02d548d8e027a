"""The result of reading one photo or frame: :class:`Table` (frozen, one row per card in
reading order), and the reading order itself (rows of cards, top to bottom, left to right).

Shared by the photo pipeline (:mod:`vision.pipeline`), the drawing (:mod:`vision.overlay`) and
the command line; it imports none of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.cards import UNKNOWN_COLOUR, Card

__all__ = ["Table", "fills_frame", "grid_positions", "reading_order"]


@dataclass(frozen=True)
class Table:
    """Everything recognised on one photo. Arrays have one row per card, in reading order
    (rows top to bottom, left to right inside a row); card ``i`` is shown to users as ``#i+1``.

    Attributes:
        width, height: frame size in pixels (as displayed, EXIF orientation applied).
        cards: the N decoded cards.
        corners: (N, 4, 2) float32 pixel corners TL, TR, BR, BL (portrait) in the frame.
        scores: (N,) float32 detector scores.
        partial: (N,) bool, the card is cut by the frame edge (its corners extrapolated).
        confidences: (N,) float32 0..1, probability of each card's reading (product of its four
            attribute probabilities after table-level colour and deck decoding, calibrated by
            the classifier's temperatures when it has them, which temper the model's part of
            the colour but not the inks' evidence: ``vision.decode.decode_table``).
        probabilities: (N, 4, 3) float32 per-attribute probabilities (count, colour, shape,
            fill; values in enum order) after table-level colour fusion.
        model_probabilities: (N, 4, 3) float32, the classifier's own probabilities.
        uncertain: (N,) bool, confidence below the threshold.
        duplicates: (N,) bool, the card's best reading was also another card's (on a
            colourless photo: its count, shape and fill were more than three cards',
            :func:`colourless_repeats`).
        sets: every SET as sorted triples of card positions (0-based) in ``cards``.
        timings_ms: milliseconds per stage (:data:`STAGES`), for the stages that ran.
        mixed_decks: decoded allowing repeated cards (several decks mixed).
        colourless: the photo carries no colour (greyscale, or one tint): no card's colour could
            be read.
        burnt_out: (N,) bool, the card's paper is clipped in every channel over
            :data:`CLIPPED_PAPER` of its border band (overexposed: its stripes may be lost, so
            a striped card may read open); None when not measured.
        paper_edges: no card was found, and the photo has a card's proportions and paper along
            its edges (:func:`vision.detect.whole_frame.paper_framed`): it may be one card
            cropped to its edges whose symbols could not be made out.
    """

    width: int
    height: int
    cards: tuple[Card, ...]
    corners: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]
    partial: npt.NDArray[np.bool_]
    confidences: npt.NDArray[np.float32]
    probabilities: npt.NDArray[np.float32]
    model_probabilities: npt.NDArray[np.float32]
    uncertain: npt.NDArray[np.bool_]
    duplicates: npt.NDArray[np.bool_]
    sets: tuple[tuple[int, int, int], ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    mixed_decks: bool = False
    colourless: bool = False
    burnt_out: npt.NDArray[np.bool_] | None = None
    paper_edges: bool = False

    def __post_init__(self) -> None:
        n = len(self.cards)
        if self.burnt_out is not None and np.shape(self.burnt_out) != (n,):
            raise ValueError(
                f"Table.burnt_out: expected shape ({n},), got {np.shape(self.burnt_out)}"
            )
        expected = {
            "corners": (n, 4, 2),
            "scores": (n,),
            "partial": (n,),
            "confidences": (n,),
            "probabilities": (n, 4, 3),
            "model_probabilities": (n, 4, 3),
            "uncertain": (n,),
            "duplicates": (n,),
        }
        for name, shape in expected.items():
            got = np.shape(getattr(self, name))
            if got != shape:
                raise ValueError(f"Table.{name}: expected shape {shape}, got {got}")

    def __len__(self) -> int:
        return len(self.cards)

    @classmethod
    def empty(
        cls,
        width: int,
        height: int,
        timings_ms: dict[str, float] | None = None,
        paper_edges: bool = False,
    ) -> Table:
        """A table with no cards (``paper_edges``: see :class:`Table`)."""
        return cls(
            width=width,
            height=height,
            cards=(),
            corners=np.zeros((0, 4, 2), np.float32),
            scores=np.zeros(0, np.float32),
            partial=np.zeros(0, bool),
            confidences=np.zeros(0, np.float32),
            probabilities=np.zeros((0, 4, 3), np.float32),
            model_probabilities=np.zeros((0, 4, 3), np.float32),
            uncertain=np.zeros(0, bool),
            duplicates=np.zeros(0, bool),
            sets=(),
            timings_ms=dict(timings_ms or {}),
            paper_edges=paper_edges,
        )

    def label(self, i: int) -> str:
        """Card ``i``'s reading as text: its :attr:`Card.label`, or, on a colourless photo (no
        colour could be read), the same with the colour shown as unknown
        (``"3 (colour?) striped squiggles"``) rather than the colour decoding had to pick."""
        return self._text(self.cards[i])

    def _text(self, card: Card) -> str:
        if not self.colourless:
            return card.label
        return card.label.replace(f" {card.colour.value} ", f" {UNKNOWN_COLOUR} ", 1)

    def _first_read(self, i: int) -> dict[str, str]:
        """``{"first_read": label}`` for a card whose own best reading (per attribute, after
        the table-level colour) was also another card's: what it was read as before the
        one-deck decoding; ``{}`` for the others."""
        if not self.duplicates[i]:
            return {}
        best = self.probabilities[i].argmax(axis=1)
        return {"first_read": self._text(Card.from_positions([int(v) for v in best]))}

    def to_json(self, image: str) -> dict[str, Any]:
        """The ``setvision photo --json`` object for this table (ids are 1-based positions).

        Shape: ``{"image", "width", "height", "cards": [{"id", "count", "colour", "shape",
        "fill", "label", "confidence", "corners", "uncertain", "duplicate", "partial",
        "burnt_out", "fills_photo", "row", "col"}], "sets": [[id, id, id]], "timings_ms":
        {stage: ms}}`` (``burnt_out``: the card's paper is clipped, overexposed, see
        :class:`Table`)
        (``fills_photo``: the card's corners are the photo's own, within 1.5 px: a photo cropped
        to one card, :func:`fills_frame`), plus ``"mixed_decks"`` and
        ``"colourless"`` (a greyscale photo: no colour can be read, so each card's ``"colour"``
        is null, its label says "(colour?)", and the SETs are guesses) and ``"paper_edges"``
        (no card found in a photo that may be one card cropped to its edges); a duplicate card also
        has ``"first_read"``, the label it was read as before the one-deck decoding.
        """
        cards = []
        grid = grid_positions(self.corners)
        for i, (card, quad) in enumerate(zip(self.cards, self.corners)):
            cards.append(
                {
                    "id": i + 1,
                    "count": card.count.value,
                    "colour": None if self.colourless else card.colour.value,
                    "shape": card.shape.value,
                    "fill": card.fill.value,
                    "label": self.label(i),
                    # Rounded down, as shown (vision.decode.format_confidence): a card flagged
                    # under a threshold never reads as reaching it.
                    "confidence": math.floor(float(self.confidences[i]) * 1e4) / 1e4,
                    "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in quad],
                    "uncertain": bool(self.uncertain[i]),
                    "duplicate": bool(self.duplicates[i]),
                    **self._first_read(i),
                    "partial": bool(self.partial[i]),
                    "burnt_out": self.burnt_out is not None and bool(self.burnt_out[i]),
                    "fills_photo": fills_frame(quad, self.width, self.height),
                    "row": int(grid[i, 0]),
                    "col": int(grid[i, 1]),
                }
            )
        return {
            "image": image,
            "width": int(self.width),
            "height": int(self.height),
            "cards": cards,
            "sets": [[i + 1, j + 1, k + 1] for i, j, k in self.sets],
            "timings_ms": {k: round(float(v), 2) for k, v in self.timings_ms.items()},
            "mixed_decks": bool(self.mixed_decks),
            "colourless": bool(self.colourless),
            "paper_edges": bool(self.paper_edges),
        }


def fills_frame(quad: npt.NDArray[np.float32], width: int, height: int) -> bool:
    """Whether a card's (4, 2) corners are the frame's own (within 1.5 px): a photo cropped to
    one card. (The older contour detector took such a photo whole; the learned
    :func:`vision.detect.find_cards` reports the card cut by the frame, a few pixels off it.)"""
    frame = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    q = np.asarray(quad, np.float64)
    return bool(all(np.linalg.norm(q - c, axis=1).min() <= 1.5 for c in frame))


def reading_order(corners: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """Order cards as a person reads a table: rows top to bottom, then left to right.

    The row direction is the table's grid direction (the cards' edge angle modulo 90 degrees), so
    a table photographed at a slant reads row by row; a card starts a new row when its centre
    lies more than half a card's extent across the rows beyond the card before it (in order
    across the rows), so a row that the perspective tilts stays one row.

    Args:
        corners: (N, 4, 2) float32 pixel corners.

    Returns:
        (N,) int64 permutation.
    """
    return np.array([i for row in _rows(corners) for i in row], np.int64)


def grid_positions(corners: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """Row and column (1-based) of each card in the table's rows (see :func:`reading_order`).

    Returns:
        (N, 2) int64 (row, column).
    """
    out = np.zeros((len(corners), 2), np.int64)
    for r, row in enumerate(_rows(corners)):
        for c, i in enumerate(row):
            out[i] = (r + 1, c + 1)
    return out


def _rows(corners: npt.NDArray[np.float32]) -> list[list[int]]:
    """Cards grouped into rows along the table's own grid direction, each row sorted along it."""
    if len(corners) == 0:
        return []
    # Grid direction: the card edges' angle modulo 90 degrees (median over cards), so a table
    # photographed at a slant still reads row by row.
    edges = corners[:, 1] - corners[:, 0]
    angles = np.arctan2(edges[:, 1], edges[:, 0])
    folded = 4.0 * angles  # period 90 degrees -> full circle
    angle = float(np.arctan2(np.sin(folded).mean(), np.cos(folded).mean()) / 4.0)
    cos, sin = np.cos(angle), np.sin(angle)
    along = corners[..., 0] * cos + corners[..., 1] * sin  # (N, 4) coordinate along rows
    across = -corners[..., 0] * sin + corners[..., 1] * cos  # (N, 4) across rows
    centre_along, centre_across = along.mean(axis=1), across.mean(axis=1)
    step = 0.5 * float(np.median(across.max(axis=1) - across.min(axis=1)))
    rows: list[list[int]] = []
    last = -np.inf
    for i in np.argsort(centre_across, kind="stable"):
        if centre_across[i] - last > step:  # a gap between rows, not a row's own slope
            rows.append([])
        last = centre_across[i]
        rows[-1].append(int(i))
    return [sorted(row, key=lambda j: float(centre_along[j])) for row in rows]
