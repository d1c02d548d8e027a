"""recognise(): stages wired together, reading order, table-level fixes, timings, JSON shape."""

from __future__ import annotations

import dataclasses
import json

import cv2
import numpy as np
import pytest

from vision.cards import parse_card
from vision.pipeline import (
    STAGES,
    Table,
    colourless,
    colourless_repeats,
    grid_positions,
    reading_order,
    recognise,
)

from ._pipeline_fakes import (
    FakeClassifier,
    FakeDetections,
    InkReader,
    box_detector,
    fake_detector,
    one_hot_probs,
    table_frame,
)

CARDS = [parse_card(t) for t in (
    "1 red solid oval", "2 green solid ovals", "3 purple solid ovals", "2 red solid ovals",
    "1 green solid oval", "3 red solid ovals", "1 purple solid oval",
)]  # fmt: skip


def test_reads_a_table_in_reading_order() -> None:
    frame, corners = table_frame(CARDS)
    before = frame.copy()
    table = recognise(frame, FakeClassifier(one_hot_probs(CARDS)), detector=fake_detector(corners))
    assert np.array_equal(frame, before)
    assert table.cards == tuple(CARDS)
    assert np.allclose(table.corners, corners)
    assert (table.width, table.height) == (1280, 720)
    assert table.probabilities.shape == (7, 4, 3)
    assert set(table.timings_ms) == set(STAGES) - {"load", "draw"}
    assert all(v >= 0 for v in table.timings_ms.values())
    # The SETs are the rules engine's on the true cards.
    from vision.rules import find_sets

    assert list(table.sets) == find_sets(CARDS)


def test_ink_reading_classifier_and_simple_detector_end_to_end() -> None:
    frame, _ = table_frame(CARDS)
    table = recognise(frame, InkReader(), detector=box_detector)
    assert table.cards == tuple(CARDS)
    assert not table.uncertain.any()


def test_duplicate_reading_is_resolved_by_colour_and_deck() -> None:
    frame, corners = table_frame(CARDS)
    probs = one_hot_probs(CARDS)
    # Card 6 (3 red) read as 3 purple: a duplicate of card 3, and its ink is red.
    probs.colour[5] = [0.3, 0.05, 0.65]
    table = recognise(frame, FakeClassifier(probs), detector=fake_detector(corners))
    assert table.cards == tuple(CARDS)
    without = recognise(
        frame, FakeClassifier(probs), detector=fake_detector(corners), table_level_colour=False
    )
    assert without.cards == tuple(CARDS)  # the deck alone also fixes it
    assert without.duplicates[2] and without.duplicates[5]


def test_mixed_decks_keep_a_repeated_card() -> None:
    cards = CARDS[:2] + CARDS[:1]
    frame, corners = table_frame(cards)
    table = recognise(
        frame, FakeClassifier(one_hot_probs(cards)), detector=fake_detector(corners),
        mixed_decks=True,
    )  # fmt: skip
    assert table.cards == tuple(cards)
    assert table.duplicates.tolist() == [True, False, True]


def test_no_cards() -> None:
    frame = np.zeros((100, 200, 3), np.uint8)
    empty = FakeDetections(np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32))
    clf = FakeClassifier(one_hot_probs([]))
    table = recognise(frame, clf, detector=lambda f: empty)
    assert len(table) == 0 and table.sets == () and clf.calls == 0
    assert table.to_json("x.jpg")["cards"] == []


def test_json_shape() -> None:
    frame, corners = table_frame(CARDS)
    table = recognise(frame, FakeClassifier(one_hot_probs(CARDS)), detector=fake_detector(corners))
    table = dataclasses.replace(table, timings_ms={"load": 1.0, **table.timings_ms})
    obj = json.loads(json.dumps(table.to_json("photo.jpg")))
    assert {"image", "width", "height", "cards", "sets", "timings_ms"} <= set(obj)
    card = obj["cards"][1]
    assert card["id"] == 2 and card["count"] == 2 and card["colour"] == "green"
    assert card["shape"] == "oval" and card["fill"] == "solid"
    assert card["label"] == "2 green solid ovals"
    assert 0 <= card["confidence"] <= 1
    assert np.array(card["corners"]).shape == (4, 2)
    assert all(len(s) == 3 and all(1 <= i <= len(CARDS) for i in s) for s in obj["sets"])
    assert obj["timings_ms"]["load"] == 1.0


def test_reading_order_and_grid() -> None:
    # Three cards in two rows, slightly tilted rows, given scrambled.
    def quad(cx: float, cy: float) -> list[list[float]]:
        return [[cx - 30, cy - 45], [cx + 30, cy - 45], [cx + 30, cy + 45], [cx - 30, cy + 45]]

    corners = np.array([quad(300, 310), quad(100, 100), quad(200, 120), quad(90, 300)], np.float32)
    assert reading_order(corners).tolist() == [1, 2, 3, 0]
    assert grid_positions(corners).tolist() == [[2, 2], [1, 1], [1, 2], [2, 1]]
    assert reading_order(np.zeros((0, 4, 2), np.float32)).tolist() == []


def test_a_row_tilted_by_the_perspective_stays_one_row() -> None:
    # Two rows of three 90 px tall cards, 130 px apart; the perspective drops the second row
    # by 25 px a card from right to left (pclewis pcl-set1: its bottom row came out as rows 4
    # and 5, a card in the wrong column): its ends lie 50 px apart across the rows, more than
    # half a card, but no two neighbours do.
    def quad(cx: float, cy: float) -> list[list[float]]:
        return [[cx - 30, cy - 45], [cx + 30, cy - 45], [cx + 30, cy + 45], [cx - 30, cy + 45]]

    top = [quad(100 + 100 * c, 100) for c in range(3)]
    bottom = [quad(100 + 100 * c, 280 - 25 * c) for c in range(3)]
    corners = np.array(top + bottom, np.float32)
    assert grid_positions(corners).tolist() == [[1, 1], [1, 2], [1, 3], [2, 1], [2, 2], [2, 3]]


def test_table_validates_shapes() -> None:
    with pytest.raises(ValueError, match="corners"):
        dataclasses.replace(Table.empty(10, 10), corners=np.zeros((1, 4, 2), np.float32))


def test_bad_frame() -> None:
    with pytest.raises(ValueError, match="uint8"):
        recognise(np.zeros((10, 10, 3), np.float32), InkReader(), detector=box_detector)


def test_large_jpeg_is_decoded_reduced_and_reported_in_photo_pixels(tmp_path) -> None:
    # The shipped rendered sample upscaled to a 12 MP JPEG: decoded at half size, read the same
    # as at full size, with corners, width and height in the photo's own pixels.
    import cv2

    from vision.classify import CardClassifier
    from vision.data import REPO_ROOT
    from vision.pipeline import process_photo

    sample = cv2.imread(str(REPO_ROOT / "datasets" / "samples" / "table.jpg"))
    big = cv2.resize(sample, (4000, 3000), interpolation=cv2.INTER_CUBIC)
    path = tmp_path / "big.jpg"
    cv2.imwrite(str(path), big, [cv2.IMWRITE_JPEG_QUALITY, 92])
    classifier = CardClassifier()
    reduced = process_photo(path, classifier)
    full = process_photo(path, classifier, reduce=False)
    assert (reduced.table.width, reduced.table.height) == (4000, 3000)
    assert reduced.annotated is not None and reduced.annotated.shape[:2] == (1500, 2000)
    assert [str(c) for c in reduced.table.cards] == [str(c) for c in full.table.cards]
    assert len(full.table.cards) == 12
    np.testing.assert_allclose(reduced.table.corners, full.table.corners, atol=4.0)


def _inked_crops(inks: list[tuple[int, int, int]]) -> np.ndarray:
    """(N, 250, 160, 3) uint8 BGR crops: white paper, one ink patch each (BGR)."""
    crops = np.full((len(inks), 250, 160, 3), 235, np.uint8)
    for crop, ink in zip(crops, inks, strict=True):
        crop[100:150, 40:120] = ink
    return crops


@pytest.mark.parametrize(
    ("inks", "expected"),
    [
        ([(120, 120, 120)] * 3, True),  # grey ink: no colour
        ([(150, 170, 185)] * 2 + [(140, 160, 180)], True),  # three inks of one faint tint
        ([(150, 170, 185)] * 2, False),  # two cards: too few to tell a tint from one ink
        ([(60, 60, 200), (60, 160, 60), (150, 60, 120)], False),  # red, green, purple
        ([(150, 150, 190), (150, 180, 150), (175, 150, 165)], False),  # faint, three hues
        ([(150, 60, 120)] * 3, False),  # vivid purple on every card: one ink, not a tint
    ],
)
def test_colourless_greyscale_and_one_tint(
    inks: list[tuple[int, int, int]], expected: bool
) -> None:
    assert colourless(_inked_crops(inks)) is expected


@pytest.mark.parametrize(
    ("ink", "cards", "expected"),
    [
        ((150, 185, 150), 1, False),  # one faint green outline, 0.6 % of the card's pixels
        ((150, 185, 150), 2, False),
        ((150, 150, 150), 1, True),  # the same outline in grey
        ((150, 150, 150), 2, True),
    ],
)
def test_a_thin_outline_on_one_or_two_cards_has_colour(
    ink: tuple[int, int, int], cards: int, expected: bool
) -> None:
    # A photo cropped to one card with a faint open outline was read colourless: its ink was
    # under the inkiest 1 % of the pixels (2026-12, a new user's single-card crops).
    crops = np.full((cards, 250, 160, 3), 235, np.uint8)
    for crop in crops:
        cv2.ellipse(crop, (80, 125), (54, 24), 0, 0, 360, ink, 1)
    assert colourless(crops) is expected


@pytest.mark.parametrize(
    ("paper", "expected"),
    [
        ((3.0, 15.0), True),  # the paper as photographed tinted along the inks' hue: a tint
        ((0.5, 2.0), False),  # paper near neutral: a few faint cards of one colour, close up
        ((12.0, -12.0), False),  # paper tinted, but another hue than the inks (a light)
    ],
)
def test_one_faint_hue_is_a_tint_only_where_the_paper_is_tinted_too(
    paper: tuple[float, float], expected: bool
) -> None:
    # Three faint inks of one hue (a new user's close-up of 4 faint purple cards was read as
    # a tinted photo, every colour unknown): the paper as photographed decides.
    crops = _inked_crops([(150, 170, 185)] * 2 + [(140, 160, 180)])
    assert colourless(crops) is True  # without the paper: the one-hue rule alone
    assert colourless(crops, np.array([paper] * 3, np.float32)) is expected
    assert colourless(crops, lambda: np.array([paper] * 3, np.float32)) is expected
    # Asked for only where the inks alone say "one tint": vivid inks of three hues never do.
    vivid = _inked_crops([(60, 60, 200), (60, 160, 60), (150, 60, 120)])
    assert colourless(vivid, lambda: pytest.fail("paper measured")) is False


def test_paper_colour_is_measured_before_the_white_balance() -> None:
    from vision.pipeline import paper_ab

    frame = np.full((300, 400, 3), (60, 60, 60), np.uint8)
    frame[50:250, 50:180] = (200, 225, 240)  # a card's paper under warm light (BGR)
    frame[50:250, 220:350] = (235, 235, 235)  # neutral paper
    corners = np.array(
        [
            [[50, 50], [179, 50], [179, 249], [50, 249]],
            [[220, 50], [349, 50], [349, 249], [220, 249]],
        ],
        np.float32,
    )
    ab = paper_ab(frame, corners)
    assert ab.shape == (2, 2) and ab.dtype == np.float32
    assert ab[0, 1] > 10 and np.hypot(*ab[1]) < 1.5  # warm: b* (yellow) up; neutral: ~0


@pytest.mark.parametrize(("red", "sharpened"), [(0.9, True), (0.7, False)])
def test_the_colour_is_not_sharpened_where_the_inks_contradict_the_model(
    red: float, sharpened: bool
) -> None:
    # The three red cards of CARDS, each read "red" by the model at ``red`` (the rest of the
    # mass on purple): the model and its ink grouping agree at ``red`` on average. At 0.9 the
    # temperature sharpens the colour as fitted; at 0.7 (under 0.8, DOUBTFUL_AGREEMENT: a
    # colour cast that fools model and inks alike) it does not, and the cards are flagged.
    cards = [c for c in CARDS if c.colour.value == "red"]
    frame, corners = table_frame(cards)
    probs = one_hot_probs(cards)
    probs.colour[:] = [red, 0.0, 1.0 - red]
    classifier = FakeClassifier(probs)
    classifier.temperatures = (0.3, 0.34, 0.3, 0.3)
    table = recognise(frame, classifier, detector=fake_detector(corners))
    assert table.cards == tuple(cards)
    if sharpened:
        assert (table.confidences > 0.95).all() and not table.uncertain.any()
    else:
        assert (table.confidences < 0.9).all() and table.uncertain.all()


@pytest.mark.parametrize(
    ("labels", "paper", "head", "burnt"),
    [
        # Overexposure clips the paper white: stripes may be burnt out, so the fill is not
        # sharpened (the colour keeps its balance: white clipped evenly).
        (("1 red striped oval", "2 green striped ovals"), (255, 255, 255), "fill", True),
        # A green cast clips only green: the crop's white balance falls short in green, so
        # the colour is not sharpened.
        (("1 purple striped oval", "2 purple open ovals"), (200, 255, 200), "colour", False),
    ],
)
def test_a_reading_on_clipped_paper_is_not_sharpened(
    labels: tuple[str, str], paper: tuple[int, int, int], head: str, burnt: bool
) -> None:
    # Two cards read at 0.8 in one head by the model; the second's paper is clipped: that
    # reading keeps the model's own confidence (flagged), the first's is sharpened by the
    # head's temperature as fitted.
    from vision.pipeline import CLIPPED_PAPER, clipped_paper

    cards = [parse_card(label) for label in labels]
    frame, corners = table_frame(cards, cols=2)
    x0, y0 = corners[1].min(axis=0).astype(int)
    x1, y1 = corners[1].max(axis=0).astype(int)
    plain = (frame[y0:y1, x0:x1] == (235, 238, 240)).all(axis=2)
    frame[y0:y1, x0:x1][plain] = paper
    every, some = clipped_paper(frame, corners)
    assert every[0] == some[0] == 0.0
    assert (every[1] if burnt else some[1]) >= CLIPPED_PAPER
    assert (some[1] if burnt else every[1]) == 0.0  # each rule leaves the other alone
    probs = one_hot_probs(cards)
    chosen = getattr(probs, head)
    chosen[:] = np.where(chosen > 0.5, 0.8, 0.1)
    classifier = FakeClassifier(probs)
    classifier.temperatures = (0.3, 0.3, 0.3, 0.3)
    table = recognise(frame, classifier, detector=fake_detector(corners), table_level_colour=False)
    assert table.cards == tuple(cards)
    assert table.confidences[0] > 0.95 and not table.uncertain[0]
    assert table.confidences[1] == pytest.approx(0.8, abs=0.01) and table.uncertain[1]


@pytest.mark.parametrize(
    ("readings", "repeats"),
    [
        ([], []),
        ([(1, 0, 2, 0)], [False]),
        ([(1, 0, 2, 0)] * 3, [False] * 3),  # one card's three colours
        ([(1, 0, 2, 0)] * 4, [True] * 4),  # more than a deck holds
        ([(1, 0, 2, 0)] * 4 + [(2, 1, 0, 0)], [True] * 4 + [False]),
        ([(0, 0, 0, 0), (0, 2, 0, 0), (0, 1, 0, 1)], [False] * 3),
    ],
)
def test_colourless_repeats_count_without_colour(readings, repeats) -> None:
    probs = np.full((len(readings), 4, 3), 0.1, np.float32)
    for i, card in enumerate(readings):
        for head, value in enumerate(card):
            probs[i, head, value] = 0.8
    probs[:, 1] = 1 / 3  # no colour read
    assert colourless_repeats(probs).tolist() == repeats
