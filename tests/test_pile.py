"""Cards in a pile (:mod:`vision.detect.pile`), on synthetic frames."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect import pile
from vision.detect.geometry import clockwise
from vision.detect.masks import shrink

from .test_detect import background, paste, rect_quad, render_card

#: Four cards lying apart (found by the region search) and a pile of two: ``TOP`` lies over the
#: lower right corner of ``UNDER``, hiding about a tenth of it.
APART = [rect_quad(x, y, 300, 0) for x, y in ((150, 190), (400, 190), (150, 530), (400, 530))]
UNDER = rect_quad(780, 300, 300, 8)
TOP = rect_quad(905, 470, 300, -6)


def _drop_shadow(frame: np.ndarray, quad: np.ndarray) -> None:
    """Darken ``frame`` in place under ``quad`` shifted by 3 px, blurred: the thin shadow line a
    card casts on the card or table under it."""
    shade = np.zeros(frame.shape[:2], np.uint8)
    cv2.fillConvexPoly(shade, np.rint(quad + 3).astype(np.int32), 255)
    alpha = cv2.GaussianBlur(shade, (7, 7), 0).astype(np.float32)[..., None] / 255.0
    frame[:] = (frame * (1 - 0.3 * alpha)).astype(np.uint8)


def _frame(with_top: bool = True, blank_under: bool = False) -> np.ndarray:
    frame = background("dark", 720, 1280)
    for quad, colour in zip(APART, ((40, 40, 220), (40, 160, 40), (150, 40, 120), (40, 40, 220))):
        card, mask = render_card(colour)
        _drop_shadow(frame, quad)
        paste(frame, card, mask, quad)
    card, mask = render_card((150, 40, 120), count=3, solid=not blank_under)
    if blank_under:  # a sheet of paper with nothing printed on it
        card[:] = 245
    _drop_shadow(frame, UNDER)
    paste(frame, card, mask, UNDER)
    if with_top:
        card, mask = render_card((40, 160, 40), count=1)
        card = (card * 0.96).astype(np.uint8)  # a shade apart from the card under it
        _drop_shadow(frame, TOP)
        paste(frame, card, mask, TOP)
    return frame


def _search(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    small, k = shrink(frame)
    found = np.array([(q + 0.5) / k - 0.5 for q in APART], np.float64)
    sh, sw = small.shape[:2]
    quads, scores = pile.pile_cards(
        frame, small, k, found, 0.85 * max(sh, sw), np.array([sw / 2, sh / 2]), 0.5
    )
    return quads, scores, k


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = cv2.contourArea(a.astype(np.float32)) + cv2.contourArea(b.astype(np.float32)) - inter
    return float(inter / union)


def test_top_and_covered_cards_of_a_pile_are_found() -> None:
    quads, scores, k = _search(_frame())
    full = (quads + 0.5) * k - 0.5
    for truth in (TOP, UNDER):
        best = max(
            (_iou(clockwise(q), clockwise(truth.astype(np.float64))) for q in full), default=0
        )
        assert best > 0.9, f"best IoU {best:.2f}: {full.round().tolist()}"
    assert len(quads) == 2
    assert (scores >= 0.5).all()


def test_a_blank_sheet_beside_the_cards_is_not_searched() -> None:
    quads, _, _ = _search(_frame(with_top=False, blank_under=True))
    assert len(quads) == 0


def test_nothing_is_searched_without_a_card_found() -> None:
    frame = _frame()
    small, k = shrink(frame)
    quads, scores = pile.pile_cards(
        frame, small, k, np.zeros((0, 4, 2)), 500.0, np.array([320.0, 180.0]), 0.5
    )
    assert quads.shape == (0, 4, 2) and scores.shape == (0,)


@pytest.mark.parametrize(
    ("quad", "convex"),
    [
        ([[0, 0], [10, 0], [10, 10], [0, 10]], True),
        ([[0, 0], [0, 10], [10, 10], [10, 0]], True),  # the other way round
        ([[0, 0], [10, 0], [2, 2], [0, 10]], False),  # a dart
        ([[0, 0], [10, 10], [10, 0], [0, 10]], False),  # a bow tie
    ],
)
def test_convex(quad: list, convex: bool) -> None:
    assert pile._convex(np.array([quad], float))[0] == convex


@pytest.mark.parametrize(
    ("side", "along"),
    [
        (((50, 50), (150, 50)), True),  # on the found card's bottom side
        (((50, 56), (150, 56)), True),  # within 6% of that side's 200 px
        (((50, 70), (150, 70)), False),  # parallel, 20 px off
        (((150, 50), (260, 50)), True),  # half of it along the side, half past its end
        (((190, 50), (300, 50)), False),  # a tenth of it along the side
        (((50, 50), (150, 70)), False),  # across it at 11 degrees
    ],
)
def test_a_side_along_a_found_cards_side_is_a_piece(side: tuple, along: bool) -> None:
    found = np.array([[[0, 0], [200, 0], [200, 50], [0, 50]]], float)  # below it: y > 50
    (x0, y0), (x1, y1) = side
    quad = np.array([[(x0, y0), (x1, y1), (x1, y1 + 150), (x0, y0 + 150)]], float)
    assert pile._side_on_side(quad, found)[0] == along


def test_hidden_share_counts_the_grid_under_the_cards_on_top() -> None:
    under = np.zeros((100, 100), np.uint8)
    under[:, 50:] = 1
    quads = np.array(
        [
            [[0, 0], [100, 0], [100, 100], [0, 100]],  # half under
            [[0, 0], [40, 0], [40, 40], [0, 40]],  # clear
            [[60, 60], [90, 60], [90, 90], [60, 90]],  # all under
        ],
        float,
    )
    share = pile._hidden_share(quads, under, n=10)
    np.testing.assert_allclose(share, [0.5, 0.0, 1.0])


@pytest.mark.parametrize(
    ("quad", "on"),
    [
        ([[20, 20], [180, 20], [180, 120], [20, 120]], [True] * 4),  # the sheet's own corners
        # Its side runs on past the sheet's corner along the same line, onto the table: the
        # corner taken a tenth of the way in is still 32 px off the paper.
        ([[20, 20], [180, 20], [180, 120], [20, 160]], [True, True, True, False]),
        ([[60, 40], [140, 40], [140, 100], [60, 100]], [True] * 4),  # inside the sheet
    ],
)
def test_a_quads_corners_lie_on_paper(quad: list, on: list) -> None:
    filled = np.zeros((300, 300), np.uint8)
    filled[20:121, 20:181] = 255  # a sheet of paper on a dark table
    assert pile._corners_on(np.array([quad], float), filled)[0].tolist() == on


def test_line_support_is_the_backed_share_of_a_side() -> None:
    roi = np.full((200, 300, 3), 200, np.uint8)
    roi[100:, 50:250] = 60  # one straight edge along y = 100 from x = 50 to 250
    lines = pile._lines(roi, 20.0, lambda p: np.ones(len(p), bool))
    (i,) = [j for j in range(len(lines)) if abs(abs(lines.n[j, 1]) - 1) < 1e-3]
    a = np.array([[50.0, 100.0], [0.0, 100.0], [250.0, 100.0]])
    b = np.array([[250.0, 100.0], [100.0, 100.0], [300.0, 100.0]])
    support = lines.support(np.array([i, i, i]), a, b)
    assert support[0] > 0.9  # along the edge
    assert 0.4 < support[1] < 0.6  # half of it on the edge
    assert support[2] < 0.1  # past its end


@pytest.mark.parametrize(("ink", "searched"), [((40, 40, 200), True), ((90, 90, 90), False)])
def test_only_paper_holding_coloured_symbols_is_searched(ink: tuple, searched: bool) -> None:
    # A white tray round cards that were all found has grey gaps round them, not symbols.
    small = np.full((300, 400, 3), 30, np.uint8)
    small[20:120, 20:90] = 240  # a card found
    small[100:280, 150:390] = 240  # paper no found card explains
    cv2.ellipse(small, (270, 190), (30, 12), 0, 0, 360, ink, -1)
    paper = np.where(small.min(axis=2) > 150, 255, 0).astype(np.uint8)
    found = np.array([[[20, 20], [89, 20], [89, 119], [20, 119]]], float)
    regions = pile._unexplained(small, paper, found, pile.MIN_UNEXPLAINED * 70 * 100)
    assert bool(regions) == searched


def test_sample_splits_maps_over_remaps_row_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenCV's remap takes maps of under 32,767 rows: the samples go in chunks of rows.
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
    points = rng.uniform(-2.0, 62.0, (5000, 2)).astype(np.float32)
    whole = pile._sample(image, points)
    monkeypatch.setattr(pile, "_REMAP_ROWS", 2)  # 1,024 points a row: 3 chunks
    assert np.array_equal(pile._sample(image, points), whole)
    assert pile._sample(image, points[:0]).shape == (0, 3)
