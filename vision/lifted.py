"""Was a card under a hand lifted, or is it only covered? Told from its place, in two ways:

* :func:`edge_step`, colour aside: what changed since the table was last still stops at the
  card's outline (its place laid bare), where a hand crosses the outline or ends inside it;
* :func:`shows_table`, from colour: where a card was lifted, its place shows the table, the
  colours the table shows around it; where a hand lies over it, the hand's colours, the ones
  the arm shows elsewhere. Both colour models are learned on the frame itself, so they follow
  the table, the light and the hand: the table's from the last still picture of the table
  (:attr:`vision.touch.Touch.table`) in a ring round the card, less every card; the hand's from
  the arm where it lies over no card. When the two are too few pixels, or too alike to tell (a
  skin tone on a wooden table of its colour), the answer is "cannot tell".

Either way, a card that cannot be told counts as covered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["edge_step", "shows_table"]

#: Histogram bins per colour channel (levels 0-255 in steps of 256 / BINS): coarse enough that
#: a few hundred pixels fill them, fine enough to part a skin tone from most table cloths.
BINS: Final = 8
#: The ring round a card whose table pixels model the table: from the card's outline scaled by
#: RING_INNER to RING_OUTER (about half a card's width beyond it).
RING_INNER: Final = 1.1
RING_OUTER: Final = 1.6
#: The card's place that is looked at: its outline scaled by this (its edge and shadow left out).
PLACE_SCALE: Final = 0.85
#: Least pixels (of the touch copy) of the table ring, of the hand, and of the changed place.
LEAST_PX: Final = 20
#: A colour is the table's when the table's model gives it at least this many times the hand's
#: probability (both histograms smoothed by one pixel a bin).
TABLE_ODDS: Final = 4.0
#: Share of the card's place that must have changed to the table's colours for the card to be
#: lifted: a card only covered shows none (its place shows the hand, or the card itself); the
#: hand that lifted a card may still lie over the rest of its place (measured on the rendered
#: games: a hand holding three cards over their places left 46% of one place in view).
TABLE_SHARE: Final = 0.3
#: Share of the hand's pixels that look like the table above which the two cannot be told
#: apart on this frame.
ALIKE_SHARE: Final = 0.25
#: The change against the still table that stops at a card's outline is its place laid bare:
#: looked at just inside (the outline scaled by STEP_INNER) and just outside (STEP_OUTER) at
#: STEP_POINTS points round it. A hand over a card crosses its outline (changed on both sides)
#: or ends inside it (changed inside, away from the outline); a card lifted leaves a change on
#: the inner side only, all round but where the hand still lies.
STEP_INNER: Final = 0.85
STEP_OUTER: Final = 1.15
STEP_POINTS: Final = 48
#: Share of those points with the step for the card to be lifted.
STEP_SHARE: Final = 0.4


def shows_table(
    quad: npt.NDArray[np.float32],
    others: Sequence[npt.NDArray[np.float32]],
    colour: npt.NDArray[np.int16],
    table: npt.NDArray[np.int16],
    changed: npt.NDArray[np.bool_],
    arm: npt.NDArray[np.bool_],
) -> bool:
    """Whether the place of the card at ``quad`` shows the table (the card was lifted).

    Args:
        quad: (4, 2) the card's corners, px of the touch copy.
        others: every other card's (4, 2) corners, same px.
        colour, table: (h, w, 3) int16 this frame and the still table (:class:`vision.touch.Touch`).
        changed, arm: (h, w) bool what differs from the still table, and the hand and arm.

    Returns:
        True only when enough of the place (:data:`TABLE_SHARE`) has changed to colours like
        the table's and not like the hand's; False when it has not, or when it cannot be told.
    """
    h, w = changed.shape
    cards = np.zeros((h, w), np.uint8)
    for q in (quad, *others):
        cv2.fillPoly(cards, [_scaled(q, RING_INNER)], 1)
    ring = np.zeros((h, w), np.uint8)
    cv2.fillPoly(ring, [_scaled(quad, RING_OUTER)], 1)
    ring = (ring > 0) & (cards == 0)
    place = np.zeros((h, w), np.uint8)
    cv2.fillPoly(place, [_scaled(quad, PLACE_SCALE)], 1)
    place_changed = (place > 0) & changed
    hand = arm & (cards == 0)
    if min(int(ring.sum()), int(hand.sum()), int(place_changed.sum())) < LEAST_PX:
        return False
    p_table = _histogram(table[ring])
    p_hand = _histogram(colour[hand])
    if _table_like(colour[hand], p_table, p_hand).mean() > ALIKE_SHARE:
        return False
    shown = int(_table_like(colour[place_changed], p_table, p_hand).sum())
    return shown >= TABLE_SHARE * int((place > 0).sum())


def edge_step(quad: npt.NDArray[np.float32], changed: npt.NDArray[np.bool_]) -> bool:
    """Whether what changed since the table was last still stops at the card's outline, on the
    inner side, round most of it (:data:`STEP_SHARE`): the card at ``quad`` (corners, px of the
    ``changed`` mask, :attr:`vision.touch.Touch.changed`) was lifted. Colour plays no part: a
    table of the hand's colour shows its cards' places bare all the same."""
    h, w = changed.shape
    corners = quad.astype(np.float64)
    t = np.arange(STEP_POINTS) / STEP_POINTS * 4
    side = t.astype(int)
    frac = (t - side)[:, None]
    outline = corners[side] * (1 - frac) + corners[(side + 1) % 4] * frac
    centre = corners.mean(axis=0)

    def at(k: float) -> npt.NDArray[np.bool_]:
        pts = np.round(centre + (outline - centre) * k).astype(int)
        inside = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
        out = np.zeros(len(pts), bool)
        out[inside] = changed[pts[inside, 1], pts[inside, 0]]
        return out

    step = at(STEP_INNER) & ~at(STEP_OUTER)
    return bool(step.mean() >= STEP_SHARE)


def _scaled(quad: npt.NDArray[np.float32], k: float) -> npt.NDArray[np.int32]:
    centre = quad.mean(axis=0)
    return np.round(centre + (quad - centre) * k).astype(np.int32)


def _bins(pixels: npt.NDArray[np.int16]) -> npt.NDArray[np.intp]:
    b = np.clip(pixels.astype(np.intp), 0, 255) * BINS // 256
    return (b[:, 0] * BINS + b[:, 1]) * BINS + b[:, 2]


def _histogram(pixels: npt.NDArray[np.int16]) -> npt.NDArray[np.float64]:
    """(BINS, BINS, BINS) probabilities of the pixels' colours, each bin spread over its
    neighbours (a colour on a bin's edge)."""
    counts = np.bincount(_bins(pixels), minlength=BINS**3).reshape(BINS, BINS, BINS)
    smooth = counts.astype(np.float64)
    for axis in range(3):
        padded = np.moveaxis(smooth, axis, 0)
        spread = padded.copy()
        spread[1:] += 0.5 * padded[:-1]
        spread[:-1] += 0.5 * padded[1:]
        smooth = np.moveaxis(spread, 0, axis)
    return smooth / max(smooth.sum(), 1e-9)


def _table_like(
    pixels: npt.NDArray[np.int16], p_table: npt.NDArray[np.float64], p_hand: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    index = _bins(pixels)
    pt, ph = p_table.ravel()[index], p_hand.ravel()[index]
    return (pt > 0) & (pt >= TABLE_ODDS * ph)
