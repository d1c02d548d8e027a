"""Detection on rendered hard scenes (``scripts/eval_synthetic.py``), against a recorded baseline.

A few seeded scenes of conditions the detector handles now: touching cards on a white desk and
at a 45 degree camera, a dim room at 45 degrees, glare, fingertips over corners, 21 small cards
at 720p and a checked tablecloth. Each goes through the whole pipeline as a JPEG, as in the script;
the test fails when a scene's recall (IoU >= 0.85) falls below what was measured. Re-measure with
``scripts/eval_synthetic.py`` when the renderer changes.
"""

from __future__ import annotations

import pytest

from tests._scripts import load_script

#: (condition, scene index) -> cards found of the cards on the table, measured 2026-11-30 (seed
#: 0; detector of main ccbb048). The tilted dim scene also has one false positive, not tested.
MEASURED = {
    ("touching_white_desk", 1): (12, 12),
    ("touching_tilt_45", 1): (12, 12),
    ("tilt_45_dim", 0): (12, 12),
    ("glare", 0): (12, 12),
    ("fingers", 0): (12, 12),
    ("cards_21_720p", 1): (21, 21),
    ("checked_cloth", 1): (12, 12),
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
