"""Unit tests of the region mending and candidate selection in vision.detect.select."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect.select import complete_cut, mend_cuts, select_cards, split_at_notches


def _outline(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=cv2.contourArea)


def _card_with_symbol(cut_width: int) -> np.ndarray:
    """A 100 x 150 card region with a symbol's outline (a ring, its inside apart) joined to the
    card's left edge by a cut ``cut_width`` px wide: the region less the symbol, notched."""
    mask = np.zeros((200, 160), np.uint8)
    cv2.rectangle(mask, (30, 25), (129, 174), 255, -1)
    cv2.ellipse(mask, (80, 100), (30, 14), 0, 0, 360, 0, -1)  # symbol (ring and inside)
    cv2.rectangle(mask, (30, 100 - cut_width // 2), (52, 100 + (cut_width - 1) // 2), 0, -1)
    return mask


def test_thin_cut_to_a_symbol_is_bridged():
    mask = _card_with_symbol(3)
    outline = _outline(mask)
    assert cv2.contourArea(outline) < 0.9 * 100 * 150
    mended = mend_cuts(outline)
    assert mended is not None
    x, y, w, h = cv2.boundingRect(mended)
    assert (x, y, w, h) == cv2.boundingRect(outline)
    # The symbol is a hole of the mended region, not a notch in its outline.
    assert cv2.contourArea(mended) > 0.97 * 99 * 149


def test_region_without_cuts_and_wide_gap_are_left_alone():
    plain = np.zeros((200, 160), np.uint8)
    cv2.rectangle(plain, (30, 25), (129, 174), 255, -1)
    assert mend_cuts(_outline(plain)) is None
    # A gap as wide as the one between two cards is not a cut.
    assert mend_cuts(_outline(_card_with_symbol(9))) is None


def test_framed_outline_the_card_sticks_out_of_is_not_the_card():
    # A card (80 x 124) and, nearly as good, a larger quad from a tray's drawn line around part
    # of it and part of the tray: the card sticks 3 px out of the larger one's right side.
    card = np.array([[[100, 100], [180, 100], [180, 224], [100, 224]]], np.float64)
    frame = np.array([[[85, 95], [177, 95], [177, 230], [85, 230]]], np.float64)
    quads = np.concatenate([card, frame])
    scores = np.array([1.0, 0.95])
    # On a white surround (a tray) the card is kept; elsewhere the larger quad is the whole
    # card around its lit part (which may stick out of it a little along a shadow's edge).
    assert select_cards(quads, scores, framed=np.array([True, True])).tolist() == [0]
    assert select_cards(quads, scores, framed=np.array([False, False])).tolist() == [1]


def _card_on_a_card() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 100 x 156 card lying across the bottom-left corner of another, their regions joined
    into one (the seam between them has a gap); its outline, the top card's faint outline as
    the edge map, and the top card's corners."""
    mask = np.zeros((240, 280), np.uint8)
    cv2.rectangle(mask, (110, 10), (230, 120), 255, -1)  # the card below
    cv2.rectangle(mask, (40, 40), (139, 195), 255, -1)  # the card on it
    edges = np.zeros_like(mask)
    cv2.rectangle(edges, (40, 40), (139, 195), 255, 1)
    top = np.array([[40, 40], [139, 40], [139, 195], [40, 195]], np.float64)
    return _outline(mask), edges, top


def test_card_with_a_corner_cut_off_by_the_split_is_completed():
    # The cut between the region's two notches runs across the top card's corner: its piece
    # is a pentagon, completed along its two sides that meet at the lost corner.
    parent, edges, top = _card_on_a_card()
    pieces = split_at_notches(parent, edges.shape)
    assert len(pieces) == 2
    quads = [complete_cut(piece, parent, edges) for piece in pieces]
    found = [q for q in quads if q is not None]
    assert len(found) == 1  # not the card below: its sides would run on across the top card
    err = np.abs(np.sort(found[0], axis=0) - np.sort(top, axis=0)).max()
    assert err < 3.0
    # Without the top card's outline there, its sides are not known to reach the corner.
    assert all(complete_cut(piece, parent, np.zeros_like(edges)) is None for piece in pieces)
