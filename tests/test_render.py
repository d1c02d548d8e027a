"""The renderer draws what it claims: counts, colours, fills, corners, determinism."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.cards import Card, Colour, Fill, Shape, full_deck
from vision.render import (
    BACKGROUNDS,
    INK_HUES,
    CardStyle,
    apply_camera,
    jitter_corners,
    render_card,
    render_card_and_mask,
    render_table,
    render_training_batch,
    render_training_crop,
    sample_style,
    symbol_polygon,
)
from vision.warp import CROP_HEIGHT, CROP_WIDTH, paper_mask, warp_cards

DECK = full_deck()


def _ink_mask(img: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Pixels that are not paper: clearly darker than the paper or coloured."""
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    paper = np.median(img[paper_mask(*img.shape[:2])], axis=0).astype(np.float32)
    darker = (paper.mean() - img.astype(np.float32).mean(axis=2)) > 35
    ink = darker | (hsv[:, :, 1] > 70)
    # Ignore the outer border: table or background may show there (rounded corners, jitter).
    h, w = ink.shape
    by, bx = round(0.05 * h), round(0.08 * w)
    ink[:by], ink[h - by :], ink[:, :bx], ink[:, w - bx :] = False, False, False, False
    return ink


def _blobs(ink: npt.NDArray[np.bool_], min_area: int) -> list[npt.NDArray[np.bool_]]:
    """Connected components of ink (8-connected, stripes bridged), each as a filled region."""
    mask = ink.astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = []
    for c in contours:
        region = np.zeros_like(mask)
        cv2.drawContours(region, [c], -1, 255, -1)
        if np.count_nonzero(region) >= min_area:
            out.append(region > 0)
    return out


def _card_crop(card: Card, seed: int) -> npt.NDArray[np.uint8]:
    """A clean rendered card, paper outside the rounded corners (no camera effects)."""
    rng = np.random.default_rng(seed)
    style = sample_style(rng)
    img, mask = render_card_and_mask(card, rng, style, (CROP_WIDTH, CROP_HEIGHT))
    return img


@pytest.mark.parametrize("index", range(81))
def test_card_has_count_blobs_of_the_claimed_fill(index: int) -> None:
    card = Card.from_index(index)
    img = _card_crop(card, seed=index)
    ink = _ink_mask(img)
    blobs = _blobs(ink, min_area=300)
    assert len(blobs) == card.count.value, card.label
    for region in blobs:
        inside = cv2.erode(region.astype(np.uint8), np.ones((13, 13), np.uint8)) > 0
        cover = float(ink[inside].mean())
        if card.fill is Fill.SOLID:
            assert cover > 0.95, (card.label, cover)
        elif card.fill is Fill.OPEN:
            assert cover < 0.05, (card.label, cover)
        else:
            assert 0.1 < cover < 0.8, (card.label, cover)
        # A scanline across the symbol's middle row: stripes alternate ink/paper many times.
        ys, xs = np.nonzero(inside)
        row = int(np.median(ys))
        line = ink[row, xs.min() : xs.max() + 1] & inside[row, xs.min() : xs.max() + 1]
        changes = int(np.count_nonzero(np.diff(line.astype(np.int8))))
        if card.fill is Fill.STRIPED:
            assert changes >= 10, (card.label, changes)
        else:
            assert changes <= 2, (card.label, changes)


def _hue_degrees(img: npt.NDArray[np.uint8], ink: npt.NDArray[np.bool_]) -> float:
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV_FULL).astype(np.float32)
    sel = ink & (hsv[:, :, 1] > 80)
    angle = hsv[:, :, 0][sel] / 256.0 * 2 * np.pi
    mean = np.arctan2(np.sin(angle).mean(), np.cos(angle).mean())
    return float(np.degrees(mean))


@pytest.mark.parametrize("colour", list(Colour))
@pytest.mark.parametrize("seed", range(6))
def test_dominant_ink_hue_is_the_claimed_colour(colour: Colour, seed: int) -> None:
    card = Card.parse(f"3 {colour.value} solid ovals")
    img = _card_crop(card, seed)
    hue = _hue_degrees(img, _ink_mask(img))
    lo, hi = INK_HUES[colour]
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    off = (hue - centre + 180.0) % 360.0 - 180.0
    assert abs(off) <= half + 6.0, (colour, hue)


def test_squiggle_has_one_handedness_and_is_point_symmetric() -> None:
    for seed in range(10):
        poly = symbol_polygon(Shape.SQUIGGLE, sample_style(np.random.default_rng(seed)))
        left, right = poly[np.argmin(poly[:, 0])], poly[np.argmax(poly[:, 0])]
        assert left[1] > right[1]  # image y down: the left end is the low one
        # Turned by 180 degrees it is the same outline (a real card may lie either way round).
        d = np.linalg.norm(poly[:, None, :] + poly[None, :, :], axis=2)
        assert d.min(axis=1).max() < 1e-6


def test_render_card_shape_dtype_and_corners() -> None:
    img = render_card(DECK[40], np.random.default_rng(0), size=(160, 250), corner_colour=(0, 0, 0))
    assert img.shape == (250, 160, 3)
    assert img.dtype == np.uint8
    assert img[0, 0].max() < 60 and img[125, 2].min() > 150  # rounded corner vs paper edge


def test_render_card_is_deterministic() -> None:
    a = render_card(DECK[7], np.random.default_rng(3))
    b = render_card(DECK[7], np.random.default_rng(3))
    c = render_card(DECK[7], np.random.default_rng(4))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_apply_camera_keeps_shape_and_zero_strength_is_identity() -> None:
    img = render_card(DECK[20], np.random.default_rng(0), size=(160, 250))
    assert np.array_equal(apply_camera(img, np.random.default_rng(0), 0.0), img)
    for seed in range(8):
        out = apply_camera(img, np.random.default_rng(seed), 1.0)
        assert out.shape == img.shape and out.dtype == np.uint8
    with pytest.raises(ValueError, match="expected"):
        apply_camera(img[:, :, 0], np.random.default_rng(0))


def test_jitter_corners_moves_a_few_pixels() -> None:
    quad = np.array([[10, 10], [170, 10], [170, 260], [10, 260]], np.float32)
    moved = jitter_corners(quad, np.random.default_rng(0))
    assert moved.shape == (4, 2) and moved.dtype == np.float32
    assert 0 < np.abs(moved - quad).max() <= 0.03 * 160 + 1e-4
    assert jitter_corners(quad[None], np.random.default_rng(0)).shape == (1, 4, 2)


@pytest.mark.parametrize(
    ("background", "layout", "seed"),
    [("wood", "grid", 0), ("dark_felt", "loose", 1), ("white_desk", "grid", 2),
     ("carpet", "loose", 3), ("cloth", "grid", 4)],
)  # fmt: skip
def test_table_corners_match_the_drawn_cards(background: str, layout: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    cards = [DECK[i] for i in rng.choice(81, 12, replace=False)]
    frame, corners = render_table(
        cards, rng, background, (960, 720), layout=layout, distractors=2, strength=0.0
    )
    assert frame.shape == (720, 960, 3) and frame.dtype == np.uint8
    assert corners.shape == (12, 4, 2) and corners.dtype == np.float32
    assert (
        (corners >= -1).all() and (corners[..., 0] <= 960).all() and (corners[..., 1] <= 720).all()
    )
    # Portrait order: the TL-TR edge is a short side.
    short = np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    long = np.linalg.norm(corners[:, 3] - corners[:, 0], axis=1)
    assert (short < long).all()
    crops = warp_cards(frame, corners)
    band = paper_mask()
    for card, crop in zip(cards, crops, strict=True):
        hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)
        assert np.median(hsv[:, :, 2][band]) > 200, card.label  # a white paper border
        assert np.median(hsv[:, :, 1][band]) < 30, card.label
        assert len(_blobs(_ink_mask(crop), min_area=300)) == card.count.value, card.label


def test_table_with_camera_effects_and_every_background() -> None:
    for seed, background in enumerate(BACKGROUNDS):
        rng = np.random.default_rng(seed)
        frame, corners = render_table(DECK[:5], rng, background, (640, 480), strength=0.6)
        assert frame.shape == (480, 640, 3) and corners.shape == (5, 4, 2)
        crops = warp_cards(frame, corners)
        band = paper_mask()
        assert all(np.percentile(c[band].mean(axis=1), 75) > 170 for c in crops)


def test_table_is_deterministic_and_rejects_bad_input() -> None:
    a = render_table(DECK[:3], np.random.default_rng(9), size=(320, 240))
    b = render_table(DECK[:3], np.random.default_rng(9), size=(320, 240))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="at least one"):
        render_table([], np.random.default_rng(0))
    with pytest.raises(ValueError, match="layout"):
        render_table(DECK[:3], np.random.default_rng(0), layout="spiral")
    with pytest.raises(ValueError, match="background"):
        render_table(DECK[:3], np.random.default_rng(0), background="marble")


def test_training_crop_is_a_card_in_the_classifier_input_space() -> None:
    rng = np.random.default_rng(0)
    for card in (DECK[0], DECK[40], DECK[80]):
        crop = render_training_crop(card, rng, CardStyle(), strength=0.0)
        assert crop.shape == (CROP_HEIGHT, CROP_WIDTH, 3) and crop.dtype == np.uint8
        assert len(_blobs(_ink_mask(crop), min_area=300)) == card.count.value, card.label


def test_training_batch_shapes_labels_and_determinism() -> None:
    cards = list(DECK[::9])
    crops, labels = render_training_batch(cards, seed=1)
    assert crops.shape == (len(cards), CROP_HEIGHT, CROP_WIDTH, 3) and crops.dtype == np.uint8
    assert labels.dtype == np.int64
    assert labels.tolist() == [list(c.positions) for c in cards]
    again, _ = render_training_batch(cards, seed=1)
    assert np.array_equal(crops, again)


def test_table_corner_order_is_the_detectors() -> None:
    from vision.detect import order_corners

    rng = np.random.default_rng(11)
    for layout in ("grid", "loose"):
        _, corners = render_table(DECK[:9], rng, "dark_felt", (800, 600), layout=layout,
                                  strength=0.0, touching=True)  # fmt: skip
        assert np.allclose(order_corners(corners), corners, atol=1e-3)


def test_shipped_sample_matches_its_ground_truth() -> None:
    import json

    from vision.data import REPO_ROOT
    from vision.rules import find_sets

    folder = REPO_ROOT / "datasets" / "samples"
    truth = json.loads((folder / "table.json").read_text(encoding="utf-8"))
    assert (folder / "table.jpg").stat().st_size < 400_000
    frame = cv2.imread(str(folder / "table.jpg"))
    assert frame.shape == (truth["height"], truth["width"], 3)
    cards = [Card.parse(c["label"]) for c in truth["cards"]]
    assert len(cards) == 12 and len(set(cards)) == 12
    assert truth["sets"] == [list(s) for s in find_sets(cards)] and len(truth["sets"]) >= 3
    corners = np.array([c["corners"] for c in truth["cards"]], np.float32)
    for card, crop in zip(cards, warp_cards(frame, corners), strict=True):
        assert len(_blobs(_ink_mask(crop), min_area=300)) == card.count.value, card.label


def test_results_do_not_depend_on_earlier_calls() -> None:
    cards = list(DECK[:4])
    before, _ = render_training_batch(cards, seed=5)
    render_table(DECK[:2], np.random.default_rng(0), size=(1100, 700), strength=0.5)
    after, _ = render_training_batch(cards, seed=5)
    assert np.array_equal(before, after)


def test_render_card_rejects_tiny_sizes() -> None:
    with pytest.raises(ValueError, match="8 x 8"):
        render_card(DECK[0], np.random.default_rng(0), size=(4, 6))


def test_negative_margin_runs_cards_off_the_frame_edge() -> None:
    rng = np.random.default_rng(3)
    frame, corners = render_table(DECK[:12], rng, "wood", (640, 480), margin=-0.08, strength=0)
    outside = (corners[..., 0] < 0) | (corners[..., 0] > 639) | (corners[..., 1] < 0)
    outside |= corners[..., 1] > 479
    assert outside.any() and not outside.all()
