"""Detection evaluation helpers: polygon IoU, corner order, matching, scoring, annotation files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vision.evaluation import (
    CardTruth,
    PhotoTruth,
    align_corners,
    canonical_order,
    dump_annotation_file,
    load_annotation_file,
    load_annotations,
    match_quads,
    polygon_area,
    polygon_iou,
    score_photo,
    summarise,
)


def rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (rect(0, 0, 10, 10), rect(0, 0, 10, 10), 1.0),
        (rect(0, 0, 10, 10), rect(5, 0, 15, 10), 50 / 150),
        (rect(0, 0, 10, 10), rect(20, 20, 30, 30), 0.0),
        (rect(0, 0, 10, 10), rect(2, 2, 8, 8), 36 / 100),
        (rect(0, 0, 10, 10), rect(0, 0, 10, 10)[::-1], 1.0),  # orientation does not matter
    ],
)
def test_polygon_iou_of_rectangles(a: np.ndarray, b: np.ndarray, expected: float) -> None:
    assert polygon_iou(a, b) == pytest.approx(expected, abs=1e-6)
    assert polygon_iou(b, a) == pytest.approx(expected, abs=1e-6)


def test_polygon_iou_of_rotated_squares() -> None:
    square = rect(-1, -1, 1, 1)
    angle = math.pi / 4
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    diamond = square @ rot.T
    # Intersection of a square and the same square turned 45 degrees: a regular octagon.
    octagon = 8 * (math.sqrt(2) - 1)
    assert polygon_iou(square, diamond) == pytest.approx(octagon / (8 - octagon), abs=1e-5)


def test_polygon_iou_of_degenerate_quad_is_zero() -> None:
    line = np.array([[0, 0], [10, 0], [20, 0], [30, 0]], dtype=np.float64)
    assert polygon_iou(line, rect(0, 0, 10, 10)) == 0.0


def test_polygon_area() -> None:
    assert polygon_area(rect(0, 0, 4, 3)) == pytest.approx(12.0)


@pytest.mark.parametrize("start", range(4))
@pytest.mark.parametrize("reverse", [False, True])
def test_canonical_order_of_a_portrait_card(start: int, reverse: bool) -> None:
    card = rect(100, 50, 157, 139)  # 57 x 89, portrait, TL first, clockwise on screen
    quad = np.roll(card, -start, axis=0)
    if reverse:
        quad = quad[::-1]
    np.testing.assert_allclose(canonical_order(quad), card)


def test_canonical_order_of_a_landscape_card_starts_at_a_short_side() -> None:
    card = rect(0, 0, 89, 57)  # lying on its side
    out = canonical_order(card)
    sides = np.linalg.norm(out - np.roll(out, -1, axis=0), axis=1)
    assert sides[0] == pytest.approx(57) and sides[1] == pytest.approx(89)


@pytest.mark.parametrize(("shift", "expected"), [(0, 0), (1, 1), (2, 2), (3, 3)])
def test_align_corners_finds_the_shift(shift: int, expected: int) -> None:
    truth = rect(0, 0, 57, 89)
    found = np.roll(truth + 1.0, shift, axis=0)
    code, errors = align_corners(truth, found)
    assert code == expected
    np.testing.assert_allclose(errors, math.sqrt(2), atol=1e-9)


def test_align_corners_flags_counter_clockwise_order() -> None:
    truth = rect(0, 0, 57, 89)
    code, errors = align_corners(truth, truth[::-1])
    assert code == -1
    np.testing.assert_allclose(errors, 0, atol=1e-9)


def test_match_quads_is_one_to_one_and_thresholded() -> None:
    truth = [rect(0, 0, 57, 89), rect(100, 0, 157, 89), rect(200, 0, 257, 89)]
    found = [rect(101, 1, 158, 90), rect(0, 0, 57, 89), rect(0, 0, 57, 89), rect(230, 0, 287, 89)]
    matches = match_quads(truth, found)
    assert [(t, f) for t, f, _ in matches] in ([(0, 1), (1, 0)], [(0, 2), (1, 0)])
    assert all(iou >= 0.85 for _, _, iou in matches)
    assert match_quads([], found) == [] and match_quads(truth, []) == []


def test_match_quads_prefers_the_globally_best_assignment() -> None:
    truth = [rect(0, 0, 10, 10), rect(0.5, 0, 10.5, 10)]
    found = [rect(0.25, 0, 10.25, 10), rect(0.6, 0, 10.6, 10)]
    pairs = {(t, f) for t, f, _ in match_quads(truth, found)}
    assert pairs == {(0, 0), (1, 1)}


def photo(*cards: CardTruth) -> PhotoTruth:
    return PhotoTruth("tables/x/a.jpg", 400, 300, tuple(cards), True, "x")


def test_score_photo_counts_hits_misses_false_positives_and_partials() -> None:
    truth = photo(
        CardTruth(rect(0, 0, 57, 89)),
        CardTruth(rect(100, 0, 157, 89)),
        CardTruth(rect(200, 0, 257, 89), partial=True),
        CardTruth(rect(300, 0, 357, 89), partial=True),
    )
    found = np.stack(
        [
            np.roll(rect(1, 0, 58, 89), 2, axis=0),  # card 0, turned 180 degrees
            rect(200, 0, 257, 89),  # partial card found: ignored
            rect(300, 0, 340, 60),  # inside a partial card: ignored
            rect(0, 150, 57, 239),  # nothing there: false positive
        ]
    )
    score = score_photo(truth, found)
    assert (score.n_truth, score.true_positives, score.false_positives) == (2, 1, 1)
    assert score.missed == (1,) and score.false_indices == (3,) and score.ignored == 2
    assert score.shifts == (2,)
    np.testing.assert_allclose(score.corner_errors, [[1, 1, 1, 1]])
    assert not score.perfect


def test_a_partial_card_reported_twice_costs_a_false_positive() -> None:
    # One card cut by the frame edge, found as two stacked pieces (pclewis angle.jpg, once):
    # the first piece is ignored, the second is a card that is not there.
    truth = photo(CardTruth(rect(0, 0, 57, 89)), CardTruth(rect(100, 200, 157, 289), partial=True))
    found = np.stack(
        [rect(0, 0, 57, 89), rect(100, 200, 157, 245), rect(100, 245, 157, 289)]
    )  # fmt: skip
    score = score_photo(truth, found)
    assert (score.true_positives, score.ignored, score.false_positives) == (1, 1, 1)
    assert score.false_indices == (2,)
    # The whole partial card matched, plus a piece of it: the piece is the extra one.
    found = np.stack([rect(100, 240, 157, 289), rect(100, 200, 157, 289)])
    score = score_photo(truth, found)
    assert (score.ignored, score.false_positives, score.false_indices) == (1, 1, (0,))


def test_summary_micro_averages_and_counts_perfect_photos() -> None:
    a = photo(CardTruth(rect(0, 0, 57, 89)))
    b = photo(CardTruth(rect(0, 0, 57, 89)), CardTruth(rect(100, 0, 157, 89)))
    s1 = score_photo(a, rect(0, 0, 57, 89)[None])
    s2 = score_photo(b, np.stack([rect(0, 0, 57, 89), rect(0, 200, 57, 289)]))
    summary = summarise([s1, s2])
    assert summary.photos == 2 and summary.perfect_photos == 1
    assert summary.recall == pytest.approx(2 / 3)
    assert summary.precision == pytest.approx(2 / 3)
    assert summary.corner_median == 0.0
    assert summary.portrait_order_ok == 1.0


def test_summary_of_nothing() -> None:
    empty = score_photo(photo(), np.zeros((0, 4, 2)))
    summary = summarise([empty])
    assert empty.perfect
    assert summary.precision == 1.0 and summary.recall == 1.0
    assert math.isnan(summary.corner_mean)


def test_annotation_file_round_trip_is_one_card_per_line(tmp_path) -> None:
    card = CardTruth(rect(0.04, 0, 57, 89), attributes={"count": 2, "colour": "red"})
    photos = [
        PhotoTruth("tables/s/b.jpg", 640, 480, (card, CardTruth(rect(1, 2, 3, 4), True)), True),
        PhotoTruth("tables/s/a.jpg", 640, 480, (), False, note="no card"),
    ]
    file = tmp_path / "s.json"
    dump_annotation_file(file, photos, "s")
    text = file.read_text()
    assert json.loads(text)["source"] == "s"
    card_lines = [line for line in text.splitlines() if '"corners"' in line]
    assert len(card_lines) == 2
    loaded = load_annotation_file(file)
    assert [p.path for p in loaded] == ["tables/s/a.jpg", "tables/s/b.jpg"]
    assert loaded[0].note == "no card" and loaded[0].cards == ()
    assert loaded[1].cards[0].attributes == {"count": 2, "colour": "red"}
    assert loaded[1].cards[1].partial
    np.testing.assert_allclose(loaded[1].cards[0].corners, rect(0.0, 0, 57, 89))
    assert [p.path for p in load_annotations(tmp_path)] == ["tables/s/b.jpg"]
    assert len(load_annotations(tmp_path, reviewed_only=False)) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [("{", "not valid JSON"), ('{"photos": 3}', "'photos' list")],
)
def test_bad_annotation_files_raise(tmp_path, content: str, message: str) -> None:
    file = tmp_path / "bad.json"
    file.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_annotation_file(file)


def test_card_truth_validates() -> None:
    with pytest.raises(ValueError, match=r"\(4, 2\)"):
        CardTruth(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="keys"):
        CardTruth(rect(0, 0, 1, 1), attributes={"size": 3})


@pytest.mark.parametrize(
    ("card", "said"),
    [({"colour": "blue"}, "card 1: colour 'blue' is not one of red, green, purple"),
     ({"count": 4}, "card 1: count 4 is not one of 1, 2, 3"),
     ({"shape": "squiggles"}, "card 1: shape 'squiggles' is not one of oval, diamond, squiggle"),
     ({"corners": [[5, 5]] * 4}, "card 1: corners: a quad of no area")],
)  # fmt: skip
def test_a_hand_edited_label_is_one_error_naming_its_card(
    tmp_path: Path, card: dict, said: str
) -> None:
    # Training died in "ValueError: 'blue' is not in list", naming no file, photo or card;
    # `label.py status` reported the file as fine.
    from vision.evaluation import load_annotation_file

    quad = [[0, 0], [50, 0], [50, 80], [0, 80]]
    cards = [{"corners": quad, "count": 1}, {"corners": quad, **card}]
    photo = {"path": "tables/mine/a.jpg", "width": 100, "height": 100, "cards": cards}
    file = tmp_path / "mine.json"
    file.write_text(json.dumps({"source": "mine", "photos": [photo]}))
    with pytest.raises(ValueError) as error:
        load_annotation_file(file)
    assert str(error.value).startswith(f"{file}: tables/mine/a.jpg {said}")
