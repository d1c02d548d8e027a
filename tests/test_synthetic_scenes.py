"""Detection on rendered hard scenes (``scripts/eval_synthetic.py``), against a recorded baseline.

A few seeded scenes of hard conditions: touching cards on a white desk and at a 45 degree camera,
a dim room at 45 degrees, 21 small cards at 720p and a checked tablecloth, and loose cards lying
partly on each other (other scenes of these conditions lose cards: see the script's report).
Each goes through the whole pipeline as a JPEG, as in the
script; the test fails when a scene's recall (IoU >= 0.85) falls below what was measured.
Re-measure with ``scripts/eval_synthetic.py`` when the renderer changes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._scripts import load_script
from vision.cards import full_deck
from vision.render import EXTRA_BACKGROUNDS, apply_effects, render_table

#: (condition, scene index) -> cards found of the cards on the table. First picked and measured
#: for the contour detector (2026-11-30, main ccbb048), which found 12 of 12 in each but the
#: overlap scenes (11 and 12). Re-measured 2026-12-03 with the learned detector, the default
#: since: it merges two touching cards at 45 degrees, misplaces a side of three cards whose far
#: side fades on the overexposed white desk, and loses more of the overlapping piles (whole
#: report: ``scripts/eval_synthetic.py``, 97.4% of 2,019 cards against the contour detector's
#: 99.7% on the scenes it was tuned on; README "Accuracy").
MEASURED = {
    ("touching_white_desk", 1): (12, 12),
    ("touching_tilt_45", 1): (10, 12),
    ("tilt_45_dim", 0): (12, 12),
    ("cards_21_720p", 1): (21, 21),
    ("checked_cloth", 1): (12, 12),
    ("white_desk_bright", 3): (9, 12),
    ("phone_random", 2): (12, 12),
    ("overlap", 9): (9, 12),
    ("overlap", 16): (11, 12),
}


@pytest.fixture(scope="module")
def synthetic():
    return load_script("eval_synthetic")


@pytest.fixture(scope="module")
def classifier():
    from vision.classify import CardClassifier

    return CardClassifier()


@pytest.mark.parametrize(("name", "index"), sorted(MEASURED))
def test_hard_scene_recall_holds(synthetic, classifier, name: str, index: int) -> None:
    condition = next(c for c in synthetic.CONDITIONS if c.name == name)
    result = synthetic.run_scene(condition, 0, index, classifier)
    found, total = MEASURED[name, index]
    assert result.score.n_truth == total
    assert result.score.true_positives >= found, dict(result.failures)


def test_conditions_are_selected_by_name_or_group(synthetic) -> None:
    names = [c.name for c in synthetic.select(["tilt", "glare"])]
    assert names == ["tilt_0", "tilt_30", "tilt_45", "glare"]
    assert len(synthetic.select(None)) == len(synthetic.CONDITIONS)
    with pytest.raises(ValueError, match="unknown condition"):
        synthetic.select(["moonlight"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenes-per-condition", "0"], "must be at least 1"),
        (["--scenes-per-condition", "-2"], "must be at least 1"),
        (["--seed", "-1"], "must be at least 0"),
    ],
)
def test_bad_counts_and_seeds_are_usage_errors(synthetic, capsys, args, message) -> None:
    # 0 scenes ended in a ZeroDivisionError and a negative seed in numpy's ValueError, each
    # with a traceback after the scenes had been set up; now argparse refuses them at once.
    with pytest.raises(SystemExit) as exit_:
        synthetic.main(["--only", "default", *args])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_stress_options_of_the_renderer() -> None:
    deck = full_deck()[:6]
    for seed, background in enumerate(EXTRA_BACKGROUNDS):
        frame, corners = render_table(
            deck, np.random.default_rng(seed), background, (400, 300), distractors=2,
            distractor_kinds=("box", "paper"), fingers=2, tilt_deg=45.0, turn=0.5, strength=0,
        )  # fmt: skip
        assert frame.shape == (300, 400, 3) and corners.shape == (6, 4, 2)
    # Looking straight down, every card is a rectangle of a card's proportions; a camera at 45
    # degrees foreshortens the far cards and shrinks them.
    flat, steep = (
        render_table(deck, np.random.default_rng(7), size=(800, 600), tilt_deg=t, strength=0)[1]
        for t in (0.0, 45.0)
    )
    short = np.linalg.norm(flat[:, 1] - flat[:, 0], axis=1)
    long = np.linalg.norm(flat[:, 3] - flat[:, 0], axis=1)
    assert np.allclose(long / short, 1.555, atol=0.02)
    assert np.allclose(np.linalg.norm(flat[:, 2] - flat[:, 3], axis=1), short, rtol=1e-3)
    width = np.linalg.norm(steep[:, 1] - steep[:, 0], axis=1)
    height = np.linalg.norm(steep[:, 3] - steep[:, 0], axis=1)
    far = steep[:, :, 1].mean(axis=1) < np.median(steep[:, :, 1])
    assert (height / width)[far].max() < 1.3  # far cards: about 1.55 x cos 45 degrees or less
    assert width[far].mean() < 0.8 * width[~far].mean()  # and smaller than near ones
    image = frame.copy()
    assert np.array_equal(apply_effects(image, np.random.default_rng(0)), image)
    dim = apply_effects(image, np.random.default_rng(0), exposure=0.5)
    assert abs(float(dim.mean()) - 0.5 * float(image.mean())) < 1.0


def test_cards_mostly_covered_by_later_ones_are_partial(synthetic) -> None:
    # Card 0 lies under card 1 by half its area, card 1 under card 2 by a corner only; card 2
    # is on top. Only card 0 is partial; a detection of it, or of nothing, costs nothing.
    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float32)
    corners = np.stack([square + (10, 10), square + (30, 10), square + (62, 42)])
    share = synthetic.covered_share(corners, (120, 100))
    assert share[0] == pytest.approx(0.5, abs=0.1)
    assert 0.0 < share[1] < synthetic.MAX_COVERED and share[2] == 0.0
    partial = share > synthetic.MAX_COVERED
    found = corners[[1, 2]]
    matches = synthetic.match_quads(list(corners), list(found))
    assert not synthetic.failure_classes(corners, found, matches, {1: True, 2: True}, partial)
    matches = synthetic.match_quads(list(corners), list(found[:1]))
    missed = synthetic.failure_classes(corners, found[:1], matches, {1: True}, partial)
    assert missed == {"missed": 1}
    overlap = next(c for c in synthetic.CONDITIONS if c.name == "overlap")
    assert overlap.scene["layout"] == "loose" and overlap.scene["spacing"] < 0.82
