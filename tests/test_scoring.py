"""Unit tests of vision.detect.scoring: dim_patches, ink_shift and the probe's paper under glare."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect.scoring import dim_patches, ink_across, ink_offset, ink_shift, probe_scores


def _box(x: int, y: int, w: int = 60, h: int = 94) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64)


def _card(image: np.ndarray, quad: np.ndarray, paper: int, ink=(40, 40, 200)) -> None:
    x0, y0 = quad[0].astype(int)
    x1, y1 = quad[2].astype(int)
    image[y0:y1, x0:x1] = paper
    cv2.ellipse(image, ((x0 + x1) // 2, (y0 + y1) // 2), (18, 8), 0, 0, 360, ink, -1)


def test_streaked_floor_patch_among_cards_is_dim():
    # Three white cards on a grey, streaked floor; a card-sized patch of the floor (found as a
    # region between its streaks) is far darker than the cards and has no edge of its own.
    image = np.full((240, 400, 3), 100, np.uint8)
    for x in range(0, 400, 9):
        cv2.line(image, (x, 0), (x + 60, 240), (80, 80, 80), 1)
    quads = np.stack([_box(20, 20), _box(100, 20), _box(180, 20), _box(280, 120)])
    for quad in quads[:3]:
        _card(image, quad, 235)
    _, _, _, level = probe_scores(image, quads)
    assert dim_patches(image, quads, level).tolist() == [False, False, False, True]


def test_card_in_a_shadow_on_a_white_desk_is_not_dim():
    # The shadow dims the card and the desk around it alike, but the card's symbol is coloured.
    image = np.full((240, 400, 3), 225, np.uint8)
    quads = np.stack([_box(20, 20), _box(100, 20), _box(180, 20), _box(280, 120)])
    for quad in quads[:3]:
        _card(image, quad, 240)
    image[100:, 250:] = 110  # the shadow
    _card(image, quads[3], 112, ink=(30, 30, 100))
    _, _, _, level = probe_scores(image, quads)
    assert level[3] < 0.6 * np.median(level)
    assert not dim_patches(image, quads, level).any()


def test_ink_shift_is_ink_offsets_offset():
    # Cards with their symbol centred, shifted off centre, outlined, and one with no ink; the
    # quads also shifted over the cards and onto the desk.
    rng = np.random.default_rng(3)
    image = np.clip(230 + rng.normal(0, 3, (240, 480, 3)), 0, 255).astype(np.uint8)
    quads = np.stack([_box(20, 20), _box(110, 20), _box(200, 20), _box(290, 20)])
    for quad in quads[:3]:
        _card(image, quad, 245)
    cv2.ellipse(image, (140, 90), (18, 8), 0, 0, 360, (40, 160, 40), -1)  # off centre
    cv2.ellipse(image, (230, 67), (22, 9), 20, 0, 360, (160, 40, 120), 2)
    probes = np.concatenate([quads, quads + [5.0, 11.0], quads[:, ::-1] - [3.0, 4.0]])
    assert np.allclose(ink_shift(image, probes), ink_offset(image, probes)[0], atol=1e-12)
    assert ink_shift(image, quads[3:])[0] == 1.0  # no ink
    assert len(ink_shift(image, quads[:0])) == 0


def _glared_card() -> tuple[np.ndarray, np.ndarray]:
    """A card under warm room light on a dark table, a lamp's glare clipping most of it white
    (pclewis pcl-bad-set1 card 10, a glass table): the paper outside the glare is warm and a
    third as bright as the glare, so the border band's median is the glare's white."""
    image = np.full((160, 120, 3), (40, 48, 55), np.uint8)
    image[30:124, 30:90] = (72, 100, 122)  # the card's warm paper
    for y in (50, 77, 104):  # three purple ovals
        cv2.ellipse(image, (60, y), (18, 8), 0, 0, 360, (60, 20, 45), -1)
    # The glare: white light added over the card's left and lower part, a soft diagonal edge.
    yy, xx = np.mgrid[0:160, 0:120]
    glare = 200.0 / (1 + np.exp((xx - 50 - 0.5 * (yy - 30)) / 3.0))
    lit = image.astype(np.float64) + glare[:, :, None]
    return np.clip(lit, 0, 255).astype(np.uint8), _box(30, 30)[None]


def test_card_partly_washed_out_by_glare_keeps_its_content():
    # Judged against the glare's white alone, the unlit paper (a third of the border band) is
    # ink, both too dark and too warm; it is paper like the band's unlit part.
    image, quads = _glared_card()
    paper, content, _, level = probe_scores(image, quads)
    assert level[0] > 230  # the band's median is the glare
    assert paper[0] == 1.0
    assert content[0] > 0.9


def test_glare_does_not_make_a_dark_band_paper_without_clipping():
    # The same card without clipped pixels (the glare's white at 200): the dark part stays ink.
    image, quads = _glared_card()
    image = (image.astype(np.float64) * 200 / 255).astype(np.uint8)
    _, content, _, _ = probe_scores(image, quads)
    assert content[0] < 0.5


def _two_light_card(ink=(30, 20, 150)) -> tuple[np.ndarray, np.ndarray]:
    """A card on a dark cloth lit by a bluish lamp from the top right and room light from the
    bottom left (tomwhite's webcam frame 20170529_203823, card 11): its paper runs from blue to
    near white, the border band's median is blue, and two solid symbols of ``ink`` (BGR)."""
    image = np.full((160, 120, 3), 25, np.uint8)
    yy, xx = np.mgrid[0:94, 0:60]
    t = np.clip((xx - 0.6 * yy + 12) / 12.0, 0, 1)[:, :, None]  # 1: the blue light's side
    white, blue = np.array([160.0, 148, 146]), np.array([150.0, 103, 82])
    image[30:124, 30:90] = (t * blue + (1 - t) * white).astype(np.uint8)
    for y in (62, 92):
        cv2.ellipse(image, (60, y), (20, 9), 0, 0, 360, ink, -1)
    return image, _box(30, 30)[None]


def test_paper_lit_by_two_lights_is_not_ink():
    # The paper's whiter part is brighter than the blue median in every channel: more light,
    # not ink (which absorbs), however differently tinted.
    image, quads = _two_light_card()
    paper, content, _, _ = probe_scores(image, quads)
    assert paper[0] * content[0] >= 0.5  # a card (MIN_SCORE)
    assert content[0] > 0.9


def test_ink_darker_than_paper_in_one_channel_stays_ink():
    # Symbols that keep the paper's red but absorb blue and green (red ink on that paper) are
    # still found as the card's content, and a band full of them is not clean paper.
    image, quads = _two_light_card(ink=(40, 30, 200))
    _, content, _, _ = probe_scores(image, quads)
    assert content[0] > 0.9
    striped = image.copy()
    striped[30:124:4, 30:90] = (40, 30, 200)  # red lines over the whole card, border included
    _, content, _, _ = probe_scores(striped, quads)
    assert content[0] < 0.5


def _square_card(symbols: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A card foreshortened to a square (a low camera looking along its long axis): paper 100 x
    100 px on a dark table, ``symbols`` wide ovals stacked down it."""
    image = np.full((160, 160, 3), 35, np.uint8)
    image[30:130, 30:130] = 235
    for j in range(symbols):
        y = 80 + int((j - (symbols - 1) / 2) * 28)
        cv2.ellipse(image, (80, y), (30, 10), 0, 0, 360, (60, 140, 40), -1)
    return image, _box(30, 30, 100, 100)[None]


def test_ink_across_says_which_edge_is_short():
    for symbols in (1, 2, 3):
        image, quads = _square_card(symbols)
        # Edge 0-1 on top: the ovals lie across it (short edge); rolled, along it.
        assert ink_across(image, quads)[0] > 0.9
        assert ink_across(image, np.roll(quads, 1, axis=1))[0] < 0.1
    blank = np.full((160, 160, 3), 235, np.uint8)
    assert ink_across(blank, _box(30, 30, 100, 100)[None])[0] == 1.0  # no ink: no evidence


def _faint_card(noise: float) -> tuple[np.ndarray, np.ndarray]:
    """A card of clean paper (245) on a wooden-brown table with two outlined ovals only 8 %
    darker than the paper (a washed-out photo, gamma 0.5: jtclark2 AllShades), and Gaussian
    noise of ``noise`` grey levels over everything."""
    rng = np.random.default_rng(5)
    image = np.full((160, 120, 3), (90, 140, 190), np.uint8)
    image[30:124, 30:90] = 245
    for y in (62, 92):
        cv2.ellipse(image, (60, y), (18, 8), 0, 0, 360, (226, 222, 230), 2)
    noisy = image.astype(np.float64) + rng.normal(0.0, noise, image.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8), _box(30, 30)[None]


def test_faint_outlines_on_clean_paper_are_content_only_when_asked():
    image, quads = _faint_card(noise=0.0)
    _, strict, _, _ = probe_scores(image, quads)
    _, faint, _, _ = probe_scores(image, quads, faint=True)
    assert strict[0] == 0.0  # under the strict step (14 %): no symbols
    assert faint[0] > 0.9


def test_faint_outlines_on_noisy_paper_stay_no_content():
    # On paper as noisy as the strokes are faint, the step stays strict: noise is no ink.
    image, quads = _faint_card(noise=6.0)
    _, faint, _, _ = probe_scores(image, quads, faint=True)
    assert faint[0] < 0.5
