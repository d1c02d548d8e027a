"""The scene plausibility step of the detector (vision.detect.plausible): colourless print and
small white patches and grainy surfaces (carpet washed out towards white) beside SET cards are
dropped; lone cards, greyscale photos and tilted
tables keep all their cards."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import vision.detect.learned_find as learned_find
from tests.test_detect import CARD_H, CARD_W, match, paste, rect_quad, render_card, scene, tilt
from vision.detect import find_cards
from vision.detect.plausible import (
    MIN_SIZE,
    TEXTURE_MIN,
    colourless,
    paper_texture,
    plausible,
    size_ratios,
    textured,
)

COLOURS = [(40, 40, 220), (60, 160, 40), (140, 40, 120)]  # BGR red, green, purple


def _grey_print() -> np.ndarray:
    """A card-sized white sheet with grey lines of print (a receipt, an envelope)."""
    sheet = np.full((CARD_H, CARD_W, 3), 240, np.uint8)
    for y in range(60, CARD_H - 60, 24):
        cv2.line(sheet, (40, y), (CARD_W - 50 - y % 40, y), (120, 120, 120), 5)
    return sheet


def _label() -> np.ndarray:
    """A card box's small white label with coloured marks (a quarter of a card's area)."""
    label = np.full((CARD_H // 2, CARD_W // 2, 3), 240, np.uint8)
    for j, colour in enumerate(COLOURS):
        cv2.ellipse(label, (CARD_W // 4, 40 + 50 * j), (35, 12), 0, 0, 360, colour, -1)
    return label


def _row_with(extra: np.ndarray, quad: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Three coloured cards in a row on a dark table and ``extra`` pasted at ``quad``."""
    truth = [rect_quad(300 + c * 260, 360, 300, 0) for c in range(3)]
    frame = scene("dark", [])
    for q, colour in zip(truth, COLOURS):
        card, mask = render_card(colour=colour)
        paste(frame, card, mask, q)
    paste(frame, extra, np.full(extra.shape[:2], 255, np.uint8), quad)
    return frame, truth


def _without_step(monkeypatch: pytest.MonkeyPatch, frame: np.ndarray) -> int:
    """Detections of ``frame`` with the plausibility step switched off."""
    with monkeypatch.context() as m:
        m.setattr(learned_find, "plausible", lambda small, quads, part: np.ones(len(quads), bool))
        return len(find_cards(frame))


def test_grey_printed_paper_beside_coloured_cards_dropped(monkeypatch):
    frame, truth = _row_with(_grey_print(), rect_quad(1080, 360, 300, 0))
    assert _without_step(monkeypatch, frame) == 4  # the network takes the sheet for a card
    match(find_cards(frame), truth, 3.0)


def test_small_label_beside_cards_dropped():
    label = rect_quad(1080, 360, 150, 0)
    frame, truth = _row_with(_label(), label)
    # The learned finder drops it before the scene check (under MIN_AREA_SHARE of the
    # median card); the scene check would drop it too.
    quads = np.array(truth + [label], np.float64)
    assert plausible(frame, quads, np.zeros(4, bool)).tolist() == [True, True, True, False]
    match(find_cards(frame), truth, 3.0)


def test_greyscale_photo_keeps_its_colourless_cards():
    # A greyscale photo: every detection's ink is grey, so none is judged colourless, not
    # even the grey-printed sheet (nothing in the scene says it is not a card).
    frame, truth = _row_with(_grey_print(), rect_quad(1080, 360, 300, 0))
    grey = cv2.cvtColor(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    quads = np.array(truth + [rect_quad(1080, 360, 300, 0)], np.float64)
    assert not colourless(grey, quads).any()
    assert colourless(frame, quads).tolist() == [False, False, False, True]
    assert len(find_cards(grey)) == 4


def test_lone_grey_card_kept():
    # A lone card, or a grey one beside nothing coloured, has no scene to be judged against.
    frame, _ = _row_with(_grey_print(), rect_quad(1080, 360, 300, 0))
    quad = rect_quad(1080, 360, 300, 0)[None].astype(np.float64)
    assert plausible(frame, quad, np.zeros(1, bool)).tolist() == [True]


def test_lone_card_and_a_few_cards_kept():
    truth = [rect_quad(640, 360, 300, 12)]
    match(find_cards(scene("wood", truth)), truth, 2.5)
    assert size_ratios(np.array(truth, np.float64)).tolist() == [1.0]
    # Two or three cards of a tilted table: the near one may be 1.6x the far one.
    pair = np.array([rect_quad(400, 300, 240, 0), rect_quad(800, 500, 300, 0)], np.float64)
    assert (size_ratios(pair) > MIN_SIZE).all()
    three = np.concatenate([pair, rect_quad(600, 400, 270, 0)[None]])
    assert (size_ratios(three) > MIN_SIZE).all()


def test_size_follows_the_perspective_of_a_tilted_table():
    # A 3 x 4 grid on a steeply tilted table: far cards about half the area of near ones.
    grid = [
        tilt(rect_quad(330 + c * 200, 170 + r * 200, 170, 0), 1.2, (640, 360))
        for r in range(3)
        for c in range(4)
    ]
    quads = np.array(grid, np.float64)
    areas = np.abs(np.array([cv2.contourArea(q.astype(np.float32)) for q in quads]))
    assert areas.max() / areas.min() > 2.0
    assert (size_ratios(quads) > 0.9).all()
    # A patch a third of a card's area beside the far row is not a card; the same patch
    # scaled up to the near row's card size would be (the global median would not tell).
    patch = tilt(rect_quad(1130, 170, 100, 0), 1.2, (640, 360))[None]
    ratios = size_ratios(np.concatenate([quads, patch]))
    assert ratios[-1] < MIN_SIZE
    assert (ratios[:-1] > 0.9).all()


def test_small_patch_beside_a_lone_card_dropped():
    quads = np.array([rect_quad(640, 360, 300, 0), rect_quad(300, 360, 60, 0)], np.float64)
    assert size_ratios(quads)[1] < MIN_SIZE
    assert size_ratios(quads)[0] > 1 / MIN_SIZE


def _carpet(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A bright, pale, grainy surface (a carpet in a photo washed out towards white): fibres
    about a pixel wide, +-25 grey levels about 215."""
    rng = np.random.default_rng(seed)
    grain = cv2.GaussianBlur(rng.normal(0, 40, (h, w)).astype(np.float32), (0, 0), 0.7)
    return np.clip(215 + grain, 0, 255).astype(np.uint8)[..., None].repeat(3, axis=2)


def _cards_and_patch(patch: np.ndarray | None, noise: float = 0.0):
    """A working image (600 x 900) of four cards on a mid-grey table and, at the fifth place,
    ``patch`` (card-sized; None: a fifth card); ``noise``: sensor noise (s.d., grey levels)
    over the whole image. Returns the image and the five quads."""
    frame = np.full((600, 900, 3), 120, np.uint8)
    quads = [rect_quad(120 + 165 * c, 300, 200, 0) for c in range(5)]
    for i, q in enumerate(quads):
        if i == 4 and patch is not None:
            paste(frame, patch, np.full(patch.shape[:2], 255, np.uint8), q)
        else:
            card, mask = render_card(colour=COLOURS[i % 3], count=1 + i % 3, solid=i % 2 == 0)
            paste(frame, card, mask, q)
    if noise:
        rng = np.random.default_rng(1)
        frame = np.clip(frame + rng.normal(0, noise, frame.shape), 0, 255).astype(np.uint8)
    return frame, np.array(quads, np.float64)


def test_grainy_patch_beside_cards_is_textured():
    frame, quads = _cards_and_patch(_carpet(CARD_H, CARD_W))
    grain = paper_texture(frame, quads)
    assert (grain[:4] < 1.0).all() and grain[4] > TEXTURE_MIN, grain
    assert textured(frame, quads).tolist() == [False, False, False, False, True]
    assert plausible(frame, quads, np.zeros(5, bool)).tolist() == [True] * 4 + [False]


def test_worn_card_with_grainy_paper_keeps_its_place():
    # A worn or linen-finish card's paper can be as grainy as a carpet, but it has its symbols.
    worn = _carpet(CARD_H, CARD_W)
    cv2.ellipse(worn, (CARD_W // 2, CARD_H // 2), (70, 28), 0, 0, 360, COLOURS[1], 5)
    frame, quads = _cards_and_patch(worn)
    assert paper_texture(frame, quads)[4] > TEXTURE_MIN
    assert not textured(frame, quads).any()


def test_sensor_noise_over_every_card_is_no_texture():
    # Noise as strong as the carpet's grain, over the whole photo: every card's paper is as
    # grainy as the next, so none stands out.
    frame, quads = _cards_and_patch(None, noise=12.0)
    grain = paper_texture(frame, quads)
    assert (grain > TEXTURE_MIN).all(), grain  # grainy, but all alike
    assert not textured(frame, quads).any()


def test_stripes_inside_the_symbols_are_not_grain():
    card, _ = render_card(colour=COLOURS[2], count=3, solid=False)
    stripes = np.zeros(card.shape[:2], np.uint8)
    for fy in (0.25, 0.5, 0.75):
        cv2.ellipse(stripes, (CARD_W // 2, int(fy * CARD_H)), (68, 26), 0, 0, 360, 255, -1)
    lines = np.zeros_like(stripes)
    lines[:, ::4] = 255  # 1 px stripes every 4 px, as fine as stripes get at working size
    card[(stripes > 0) & (lines > 0)] = COLOURS[2]
    frame, quads = _cards_and_patch(card)  # the striped card at the fifth place
    assert paper_texture(frame, quads)[4] < 1.0
    assert not textured(frame, quads).any()


def test_texture_needs_a_scene():
    # Two detections: nothing to judge the grain against.
    frame, quads = _cards_and_patch(_carpet(CARD_H, CARD_W))
    assert not textured(frame, quads[3:]).any()
    assert not textured(frame, quads[4:]).any()
