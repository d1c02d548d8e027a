"""The annotated copy: outlines, SET colours, legend; scaled to the image; input untouched."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.cards import Fill, full_deck, parse_card
from vision.overlay import (
    MAX_ANNOTATED_SIDE,
    MAX_ANNOTATION_SCALE,
    annotation_scale,
    draw_table,
    set_colours,
)
from vision.pipeline import Table, recognise

from ._pipeline_fakes import FakeClassifier, fake_detector, one_hot_probs, table_frame

# Two SETs sharing card #1: (#1, #2, #3) and (#1, #4, #5).
CARDS = [parse_card(t) for t in (
    "1 red solid oval", "2 green solid ovals", "3 purple solid ovals",
    "1 green striped diamond", "1 purple open squiggle", "2 red open diamonds",
)]  # fmt: skip


@pytest.fixture
def texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the overlay draws (cv2.putText spied), in order."""
    import vision.overlay

    drawn: list[str] = []
    put_text = vision.overlay.cv2.putText

    def spy(img, text, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        drawn.append(text)
        return put_text(img, text, *args, **kwargs)

    monkeypatch.setattr(vision.overlay.cv2, "putText", spy)
    return drawn


def table_for(width: int, height: int) -> tuple[np.ndarray, Table]:
    frame, corners = table_frame(CARDS, width=width, height=height, cols=3)
    table = recognise(frame, FakeClassifier(one_hot_probs(CARDS)), detector=fake_detector(corners))
    return frame, table


def test_table_has_two_sets_sharing_a_card() -> None:
    _, table = table_for(960, 540)
    assert table.sets == ((0, 1, 2), (0, 3, 4))


@pytest.mark.parametrize(("width", "height"), [(320, 240), (1280, 720), (4000, 3000)])
def test_draws_on_a_copy_at_any_size(width: int, height: int) -> None:
    frame, table = table_for(width, height)
    before = frame.copy()
    out = draw_table(frame, table)
    assert np.array_equal(frame, before)
    assert out.shape == frame.shape and out.dtype == np.uint8
    assert (out != frame).any(axis=2).mean() > 0.01


def test_each_set_colour_appears_and_the_shared_card_shows_both() -> None:
    frame, table = table_for(1280, 720)
    out = draw_table(frame, table)
    colours = set_colours(len(table.sets))
    assert len(set(colours)) == len(colours)
    shared = np.round(table.corners[0]).astype(int)
    x0, y0 = shared.min(axis=0)
    x1, y1 = shared.max(axis=0)
    region = out[y0 : y1 + 1, x0 : x1 + 1].reshape(-1, 3).astype(int)
    for colour in colours:
        near = np.abs(region - np.array(colour)).sum(axis=1) < 30
        assert near.sum() > 50, f"SET colour {colour} missing on the shared card"


def test_line_width_scales_with_the_image() -> None:
    small_frame, small = table_for(640, 360)
    big_frame, big = table_for(3840, 2160)
    changed_small = (draw_table(small_frame, small) != small_frame).any(axis=2).mean()
    changed_big = (draw_table(big_frame, big) != big_frame).any(axis=2).mean()
    # Same picture at 6x the size: the drawn fraction of the image stays comparable.
    assert 0.4 < changed_big / changed_small < 2.5


def test_no_cards_and_no_set() -> None:
    frame = np.full((200, 300, 3), 50, np.uint8)
    out = draw_table(frame, Table.empty(300, 200))
    assert (out != frame).any()  # the legend says "no cards found"
    cards = [parse_card("1 red solid oval"), parse_card("1 red solid diamond")]
    frame, corners = table_frame(cards, width=640, height=360)
    table = recognise(frame, FakeClassifier(one_hot_probs(cards)), detector=fake_detector(corners))
    assert table.sets == ()
    assert draw_table(frame, table).shape == frame.shape


def test_uncertain_and_duplicate_cards_are_marked() -> None:
    frame, corners = table_frame(CARDS[:2], width=640, height=360)
    probs = one_hot_probs(CARDS[:2], sure=0.6)
    table = recognise(frame, FakeClassifier(probs), detector=fake_detector(corners))
    assert table.uncertain.all()
    out = draw_table(frame, table)
    orange = np.abs(out.reshape(-1, 3).astype(int) - (0, 140, 255)).sum(axis=1) < 40
    assert orange.sum() > 20


def test_bad_frame_is_refused() -> None:
    with pytest.raises(ValueError, match="uint8"):
        draw_table(np.zeros((10, 10), np.uint8), Table.empty(10, 10))


def test_a_legend_that_would_hide_a_card_goes_beside_the_photo() -> None:
    frame, table = table_for(960, 540)
    # Cards in all four corners of the photo (and the middle): no corner is free.
    h, w = frame.shape[:2]
    box = np.array([[0, 0], [180, 0], [180, 260], [0, 260]], np.float32)
    offsets = [(0, 0), (w - 180, 0), (0, h - 260), (w - 180, h - 260), (390, 140), (600, 140)]
    corners = np.stack([box + np.array(o, np.float32) for o in offsets])
    table = replace(table, corners=corners)
    inside = draw_table(frame, table)
    assert inside.shape == frame.shape  # the default never changes the size (video frames)
    beside = draw_table(frame, table, legend_beside=True)
    assert beside.shape[0] == h and beside.shape[1] > w + 50
    panel = beside[:, w:]
    assert (panel != 32).any(axis=2).mean() > 0.01  # the legend is drawn on the panel
    # Inside the photo only the outlines and labels are drawn: no card lies under a dark box.
    for quad in corners:
        (x0, y0), (x1, y1) = quad[0] + 40, quad[2] - 40
        region = beside[int(y0) : int(y1), int(x0) : int(x1)].astype(int)
        original = frame[int(y0) : int(y1), int(x0) : int(x1)].astype(int)
        assert region.mean() > 0.8 * original.mean()
    # A table with a free corner keeps its legend inside, at the photo's size.
    frame2, table2 = table_for(1280, 720)
    assert draw_table(frame2, table2, legend_beside=True).shape == frame2.shape


def test_a_legend_says_how_many_sets_are_not_drawn(texts: list[str]) -> None:
    """27 cards of one fill hold 117 SETs: 12 are drawn and listed, the legend says so."""
    cards = [c for c in full_deck() if c.fill is Fill.SOLID]
    frame, corners = table_frame(cards, width=1800, height=700, cols=9)
    table = recognise(frame, FakeClassifier(one_hot_probs(cards)), detector=fake_detector(corners))
    assert len(table.sets) == 117
    draw_table(frame, table)
    listed = [t for t in texts if t.startswith("SET ")]
    assert len(listed) == 12
    assert "+ 105 more (not drawn)" in texts


def test_labels_of_cards_in_a_pile_do_not_cover_each_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cards in a pile, each lying a little below the one before: their top margins' labels
    would fall on one another (pclewis crazy.jpg's far cards did); each goes where it covers
    no label drawn already, and a card alone keeps its label in its top margin."""
    import vision.overlay

    frame, corners = table_frame(CARDS[:3], width=1280, height=720, cols=3)
    under = np.asarray(corners[0], np.float32)
    quads = np.stack([under, under + np.float32([12, 10]), np.asarray(corners[2], np.float32)])
    probs = one_hot_probs(CARDS[:3])
    table = recognise(frame, FakeClassifier(probs), detector=fake_detector(quads))
    boxes: list[tuple[int, int, int, int]] = []
    text_box = vision.overlay._text_box

    def spy(image, label, box, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        boxes.append(box)
        return text_box(image, label, box, *args, **kwargs)

    monkeypatch.setattr(vision.overlay, "_text_box", spy)
    draw_table(frame, table)
    assert len(boxes) == 3
    assert vision.overlay._overlap(boxes[1], boxes[:1]) == 0
    # The lone card's label sits in its top margin: its centre 14% of the way down the card.
    top, bottom = quads[2, :2].mean(axis=0), quads[2, 2:].mean(axis=0)
    assert abs((boxes[2][1] + boxes[2][3]) / 2 - (top + 0.14 * (bottom - top))[1]) <= 1


def test_the_legend_of_a_photo_without_colour_says_the_sets_are_guesses(texts: list[str]) -> None:
    frame, table = table_for(960, 540)
    draw_table(frame, table)
    assert not any("guesses" in t for t in texts)
    texts.clear()
    draw_table(frame, replace(table, colourless=True))
    assert "no colour in the photo: SETs are guesses" in texts


def test_the_set_colours_are_far_apart() -> None:
    # Evenly spread hues put magenta beside purple (delta-E 24.6) on a 12-SET table.
    import cv2

    colours = set_colours(12)
    lab = cv2.cvtColor(np.array([colours], np.float32) / 255.0, cv2.COLOR_BGR2Lab)[0]
    gaps = np.linalg.norm(lab[:, None] - lab[None], axis=2) + np.eye(12) * 1e9
    assert gaps.min() >= 45.0
    assert lab[:, 0].min() >= 30.0 and lab[:, 0].max() <= 90.0  # none dark or pale
    assert len(set(set_colours(20))) == 20  # more than the palette still gives distinct colours


def _cards_across(side: float, n: int = 3) -> np.ndarray:
    """(n, 4, 2) portrait quads ``side`` px wide (TL, TR, BR, BL)."""
    quad = np.array([[0, 0], [side, 0], [side, 1.5 * side], [0, 1.5 * side]], np.float32)
    return np.stack([quad + [2 * side * i, 0] for i in range(n)])


def _label_fits(card_side: float, font: float) -> bool:
    """Whether the card label that :func:`draw_table` sizes to a card ``card_side`` px wide
    is drawn at ``font`` or larger (the label at font 1, measured with this OpenCV's own font
    metrics, scaled to the share of the card labels may take)."""
    import cv2

    from vision.overlay import _FONT, _LABEL_REFERENCE, _LABEL_SPAN

    (width, _), _ = cv2.getTextSize(_LABEL_REFERENCE, _FONT, 1.0, 1)
    return _LABEL_SPAN * card_side / width >= font * (1 - 1e-9)


def _fit_side() -> float:
    """The narrowest card (px) whose label fits at the smallest font (0.35), for this
    OpenCV's font metrics (they differ by release: the reference label is 226 px at font 1
    on 5.0, 235 on 5.1, 273 on 4.14)."""
    lo, hi = 1.0, 1000.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _label_fits(mid, 0.35) else (mid, hi)
    return hi


@pytest.mark.parametrize(
    ("shape", "share"),
    [
        ((1200, 1600), 2.0),  # cards twice as wide as the label needs
        ((480, 640), 1.02),  # the smallest font still fits the card
        ((3000, 4000), 1.0),  # 12 MP, exactly fitting
    ],
)
def test_annotation_scale_is_one_when_labels_fit(shape: tuple[int, int], share: float) -> None:
    side = _fit_side() * share
    assert _label_fits(side, 0.35)
    assert annotation_scale(shape, _cards_across(side)) == 1
    assert annotation_scale(shape, np.zeros((0, 4, 2), np.float32)) == 1


@pytest.mark.parametrize(
    ("shape", "share"),
    [
        ((480, 640), 0.95),  # a webcam photo of 12 cards: labels too wide at 1x
        ((480, 640), 0.6),
        ((240, 320), 0.5),
        ((240, 320), 0.3),
    ],
)
def test_annotation_scale_enlarges_cards_too_small_for_labels_just_enough(
    shape: tuple[int, int], share: float
) -> None:
    """The copy is drawn the fewest times larger at which the label fits at the legible font
    (0.5), unless a cap stops it first."""
    from vision.overlay import _LEGIBLE_FONT

    side = _fit_side() * share
    assert not _label_fits(side, 0.35)
    k = annotation_scale(shape, _cards_across(side))
    assert 2 <= k <= MAX_ANNOTATION_SCALE and k * max(shape) <= MAX_ANNOTATED_SIDE
    capped = k in (MAX_ANNOTATION_SCALE, MAX_ANNOTATED_SIDE // max(shape))
    assert _label_fits(k * side, _LEGIBLE_FONT) or capped
    assert not _label_fits((k - 1) * side, _LEGIBLE_FONT)


@pytest.mark.parametrize(
    ("shape", "side", "scale"),
    [
        ((240, 320), 20.0, MAX_ANNOTATION_SCALE),  # capped
        ((1000, 1000), 20.0, MAX_ANNOTATED_SIDE // 1000),  # the copy's long side is capped
        ((3000, 4000), 40.0, 1),  # a wide shot at 12 MP: not enlarged past 2,400 px
    ],
)
def test_annotation_scale_caps(shape: tuple[int, int], side: float, scale: int) -> None:
    assert not _label_fits(side * scale, 0.5)  # so the cap, not the font, decides
    assert annotation_scale(shape, _cards_across(side)) == scale


def test_a_small_photo_copy_is_drawn_larger_and_its_labels_do_not_overlap(
    tmp_path: object,
) -> None:
    import cv2

    from vision.pipeline import process_photo

    cards = list(full_deck())[:12]
    frame, corners = table_frame(cards, width=320, height=240)
    encoded = cv2.imencode(".png", frame)[1].tobytes()
    reader = FakeClassifier(one_hot_probs(cards))
    done = process_photo(encoded, reader, detector=fake_detector(corners))
    k = done.annotated_scale
    assert k == annotation_scale(frame.shape, done.table.corners) and k > 1
    assert done.annotated is not None and done.annotated.shape[:2] >= (240 * k, 320 * k)
    # The reading itself stays in the photo's pixels.
    assert np.allclose(done.table.corners, corners, atol=1.0)
    assert (done.table.width, done.table.height) == (320, 240)
    # Drawn at 1x, the labels are wider than the cards (they spill over the neighbours); at
    # k, each fits its card.
    import vision.overlay as overlay

    widths: list[list[int]] = []
    real = overlay._text_box

    def spy(image, label, box, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        widths[-1].append(box[2] - box[0])
        return real(image, label, box, *args, **kwargs)

    def widest(table: Table, image: np.ndarray) -> float:
        widths.append([])
        overlay._text_box = spy
        try:
            draw_table(image, table)
        finally:
            overlay._text_box = real
        card_w = np.linalg.norm(table.corners[:, 1] - table.corners[:, 0], axis=1)
        return float(max(widths[-1]) / np.median(card_w))

    small = recognise(frame, reader, detector=fake_detector(corners))
    assert widest(small, frame) > 1.2
    big_frame = cv2.resize(frame, None, fx=k, fy=k)
    big = replace(small, corners=small.corners * k, width=320 * k, height=240 * k)
    assert widest(big, big_frame) <= 1.0
