"""The learned card finder (:mod:`vision.detect.learned`, :mod:`vision.detect.learned_find`):
the labels it is trained on, the quads it reads back from them, and the shipped model on
rendered tables and on webrew, a source no model here was trained on."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests._scripts import load_script
from vision.detect.learned import (
    BORDER,
    CARD,
    INPUT_MULTIPLE,
    _offset_sides,
    card_labels,
    network_input,
    quads_from_probs,
)

MODEL = Path(__file__).resolve().parents[1] / "models" / "card_detector.onnx"


def _ideal_probs(labels: np.ndarray) -> np.ndarray:
    probs = np.zeros((3, *labels.shape), np.float32)
    for value in (0, CARD, BORDER):
        probs[value][labels == value] = 1.0
    return probs


def _quad(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    pts = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2
    return pts @ np.array([[c, s], [-s, c]]) + [cx, cy]


def test_touching_cards_are_separated_by_the_border() -> None:
    a = _quad(60, 80, 50, 78, 0.0)
    b = a + [50, 0]  # sharing a side
    labels = card_labels(np.stack([a, b]), (160, 200))
    n, _ = cv2.connectedComponents((labels == CARD).astype(np.uint8), connectivity=4)
    assert n - 1 == 2
    assert (labels == BORDER).any() and labels[0, 0] == 0


def test_a_later_card_lies_on_top() -> None:
    under = _quad(80, 80, 60, 94, 0.0)
    over = _quad(100, 100, 60, 94, 0.4)
    labels = card_labels(np.stack([under, over]), (200, 200))
    probs = _ideal_probs(labels)
    found = quads_from_probs(probs, 1.0)
    assert len(found.corners) == 2  # the covered card shows as a piece of its own


@pytest.mark.parametrize(
    ("quad", "scale"),
    [
        (_quad(100, 90, 40, 62, 0.0), 1.0),
        (_quad(100, 90, 40, 62, 0.7), 1.0),
        (_quad(210, 190, 90, 140, -0.3), 0.5),  # labels at half resolution
        (np.array([[60, 40], [150, 50], [160, 190], [40, 170]], float), 1.0),  # perspective
    ],
)
def test_quads_read_back_from_ideal_labels(quad: np.ndarray, scale: float) -> None:
    labels = card_labels(quad[None], (200, 200), scale)
    found = quads_from_probs(_ideal_probs(labels), 1.0 / scale)
    assert len(found.corners) == 1 and found.scores[0] == pytest.approx(1.0)
    got = found.corners[0]
    # Compare as sets of corners (the order is the detector's concern, not this).
    err = np.linalg.norm(got[:, None] - quad[None], axis=2).min(axis=1)
    assert err.max() <= 2.0 / scale  # the labels are whole pixels


def test_sides_are_moved_outwards_whatever_the_winding() -> None:
    square = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    for quad in (square, square[::-1]):
        out = _offset_sides(quad, 1.0)
        assert out is not None
        assert sorted(map(tuple, out.tolist())) == [(-1, -1), (-1, 11), (11, -1), (11, 11)]
    assert _offset_sides(np.array([[0, 0], [5, 0], [10, 0], [0, 10]], float), 1.0) is None


@pytest.mark.parametrize(("h", "w"), [(1080, 1920), (300, 200), (4000, 3000), (33, 65), (2, 3000)])
def test_network_input_is_shrunk_never_enlarged_and_padded(h: int, w: int) -> None:
    x, scale = network_input(np.zeros((h, w, 3), np.uint8), 512)
    assert x.dtype == np.float32 and x.shape[:2] == (1, 3)
    assert x.shape[2] % INPUT_MULTIPLE == 0 and x.shape[3] % INPUT_MULTIPLE == 0
    assert scale == pytest.approx(min(1.0, 512 / max(h, w)), rel=0.01)


needs_model = pytest.mark.skipif(not MODEL.exists(), reason="no shipped card detector")


@needs_model
def test_the_model_matches_its_json() -> None:
    import hashlib

    meta = json.loads(MODEL.with_suffix(".json").read_text())
    assert meta["sha256"] == hashlib.sha256(MODEL.read_bytes()).hexdigest()
    assert MODEL.stat().st_size < 4_000_000  # a few MB at most
    assert "webrew" in " ".join(meta["training"]["never_trained_on"])


@needs_model
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_model_finds_the_cards_of_rendered_tables(seed: int) -> None:
    from vision.cards import full_deck
    from vision.detect.learned import CardSegmenter
    from vision.detect.learned_find import find_cards_learned
    from vision.evaluation import match_quads
    from vision.render import render_table

    rng = np.random.default_rng(1000 + seed)  # not the training cache's seeds
    deck = list(full_deck())
    cards = [deck[i] for i in rng.choice(81, 12, replace=False)]
    frame, corners = render_table(cards, rng, background=None, size=(1280, 960))
    found = find_cards_learned(frame, CardSegmenter(MODEL))
    matches = match_quads(list(corners), list(found.corners), 0.85)
    assert len(matches) == 12 and len(found) == 12
    errors = [np.linalg.norm(found.corners[f] - corners[t], axis=1).max() for t, f, _ in matches]
    assert np.median(errors) < 4.0  # px, on cards about 150 px wide


EVAL = MODEL.with_name("card_detector_eval.json")


@needs_model
@pytest.mark.slow
def test_webrew_is_read_no_worse_than_recorded() -> None:
    """webrew (~20 scattered cards a photo, on a dark floor or white paper) is a source no
    model here was trained on: the shipped model's figure there is a leave-source-out one."""
    from vision.data import shared_datasets
    from vision.detect.learned_find import LearnedDetector

    root = shared_datasets(required=False)
    if root is None or not (root / "table_boxes.csv").exists():
        pytest.skip("shared datasets not available")
    eval_webrew = load_script("eval_detector").eval_webrew

    recorded = json.loads(EVAL.read_text())["shipped"]["webrew"]
    detect = LearnedDetector(str(MODEL))
    got = eval_webrew(lambda frame: detect(frame).corners, root)
    assert got["boxes"] == recorded["boxes"]
    assert got["recall"] >= recorded["recall"] - 0.005, got
    assert got["precision"] >= recorded["precision"] - 0.005, got


@needs_model
def test_recorded_leave_source_out_figures_cover_every_source() -> None:
    import hashlib

    from vision.evaluation import load_annotations

    recorded = json.loads(EVAL.read_text())
    sources = {p.source for p in load_annotations(MODEL.parents[1] / "datasets" / "detection")}
    assert sources <= set(recorded["cv"]["annotated"])  # each read by a model that never saw it
    # The figures belong to the recipe that made the shipped model.
    recipe_of = load_script("eval_detector").recipe_of

    assert recorded["recipe"] == recipe_of(json.loads(MODEL.with_suffix(".json").read_text()))
    assert recorded["shipped"]["sha256"] == hashlib.sha256(MODEL.read_bytes()).hexdigest()


@needs_model
@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_photo_with_the_learned_detector(
    tmp_path: Path, jobs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from vision.cli import run

    sample = MODEL.parents[1] / "datasets" / "samples" / "table.jpg"
    for name in ("a.jpg", "b.jpg"):  # two photos: with --jobs 2 the detector goes to workers
        shutil.copy(sample, tmp_path / name)
    args = ["photo", "--json", "--no-image", "--jobs", jobs]
    assert run([*args, str(tmp_path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [len(line["cards"]) for line in lines] == [12, 12]
    assert [len(line["sets"]) for line in lines] == [4, 4]


@needs_model
@pytest.mark.parametrize(
    ("frame", "match"),
    [(np.zeros((100, 100), np.uint8), "expected"), (np.zeros((100, 100, 3), np.float32), "uint8"),
     (np.zeros((100, 100, 4), np.uint8), "expected")],
)  # fmt: skip
def test_a_frame_that_is_not_bgr_uint8_is_refused(frame: np.ndarray, match: str) -> None:
    from vision.detect import find_cards

    with pytest.raises(ValueError, match=match):
        find_cards(frame)


@needs_model
def test_tiny_and_thin_frames_hold_no_card() -> None:
    from vision.detect import find_cards

    for h, w in ((8, 8), (15, 400), (20, 20000), (20000, 24)):
        assert len(find_cards(np.full((h, w, 3), 128, np.uint8))) == 0


def test_the_gone_detector_option_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from vision.cli import run

    # --detector learned|contours went with the contour detector (#33).
    assert run(["photo", "--detector", "learned", "x.jpg"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--detector" in err
