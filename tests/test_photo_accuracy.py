"""End to end on the labelled real table photos: fails below the recorded baseline.

Runs the whole ``setvision photo`` pipeline (loader, detector, classifier, table-level colour,
deck decoding) over every labelled photo in ``../shared/datasets``: the shared multisets
(``table_cards.csv``) and the project's own reviewed annotations (``datasets/detection``), scored
exactly as ``scripts/evaluate.py`` scores them (readings matched to the labels as multisets per
photo; a missed card is wrong on every attribute; detections inside annotated partial cards are
ignored). Slow (about a minute on 2 cores).

The shipped model trains on cards cut from every one of these sources' annotated photos (and on
the tomwhite and omega697 crops), so these are regression baselines, not a measure of
generalisation: they fail when the detector, the classifier or the table-level decoding gets
worse on these photos. The figures for new photographers, decks and tables come from
cross-validation by source (``scripts/eval_classifier.py``, and end to end ``scripts/evaluate.py
--cv``), recorded in ``models/card_classifier_eval.json``; the last test here checks that those
recorded figures belong to the shipped model's training recipe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._scripts import load_script
from vision.data import shared_datasets

ROOT = Path(__file__).resolve().parent.parent

#: Recorded with scripts/evaluate.py on 2026-11-30 with the model trained on the table photos too
#: (models/card_classifier.json, recipe v5-tables-shadows; the same figures again with
#: v6-ink-chroma and v7-zoom-mirror) and the detector of that day (99.6% recall on the
#: annotated photos), rounded down by about one card or table per source so that a one-card
#: change in a borderline photo does not fail: (lowest of the four attribute accuracies, cards
#: fully right, tables fully right). Measured: all 0.996 / 0.996 / 0.987; pclewis 0.977 / 0.977
#: / 0.923; every other source 1.0. Nearly all remaining errors are the four cards of the
#: pclewis pile (crazy.jpg) the detector misses. On 2026-12-01 (v8, the pile search judging far
#: cards' quads and their corners on paper: every card of that pile found): all 0.9993 / 0.9993
#: / 0.9935, pclewis 0.9955 / 0.9955 / 0.962 (one glare-washed card of pcl-bad-set1 read
#: squiggles for ovals, flagged); "all" and pclewis raised to one card and table under that.
#: 2026-12-03: the learned detector became the default (trained on these photos too; each source
#: read by a fold model that never saw it: ``models/card_detector_eval.json``). Measured with it
#: (``scripts/evaluate.py --detector learned``): all 0.994 / 0.992 / 0.962; omega697 0.973 /
#: 0.973 / 0.909 (a close-up found twice); pclewis 0.968 / 0.959 / 0.769 (the pile of crazy.jpg,
#: a card split by a shadow's edge, the glass table's reflections); tomwhite 0.996 / 0.996 /
#: 0.959; every other source 1.0. Floors again about one card or table under.
BASELINE: dict[str, tuple[float, float, float]] = {
    "all": (0.99, 0.985, 0.955),
    "gractang": (0.99, 0.99, 0.94),
    "koff": (0.985, 0.985, 0.87),
    "nakkstar123": (0.985, 0.985, 0.87),
    "omega697": (0.94, 0.94, 0.81),
    "pclewis": (0.96, 0.95, 0.73),
    "piratefsh": (0.985, 0.985, 0.88),
    "rotemabend": (0.99, 0.99, 0.9),
    "tomwhite": (0.99, 0.99, 0.93),
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tallies():
    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared datasets not found")
    from vision.classify import CardClassifier
    from vision.pipeline import process_photo

    classifier = CardClassifier()  # the shipped model: its absence is a failure, not a skip
    evaluate = load_script("evaluate")
    out: dict[str, object] = {}
    for truth in evaluate.load_truth(root, use_annotations=True):
        table = process_photo(root / truth.path, classifier, draw=False).table
        keep = evaluate.outside_partial(table.corners, truth.partial, truth.whole)
        cards = [table.cards[i] for i in keep]
        groups = [truth.source, "all"]
        for group in groups:
            out.setdefault(group, evaluate.Tally()).add(cards, truth.cards)
    return out


@pytest.mark.parametrize("source", sorted(BASELINE))
def test_accuracy_not_below_baseline(tallies, source: str) -> None:
    attr_min, card_min, table_min = BASELINE[source]
    assert source in tallies, f"no labelled photo of {source} was evaluated"
    row = tallies[source].row()
    attrs = min(row[a] for a in ("count", "colour", "shape", "fill"))
    assert attrs >= attr_min - 1e-9, f"{source}: attribute accuracy {attrs:.3f} < {attr_min}"
    assert row["card"] >= card_min - 1e-9, f"{source}: cards {row['card']:.3f} < {card_min}"
    assert row["table"] >= table_min - 1e-9, f"{source}: tables {row['table']:.3f} < {table_min}"


def test_recorded_cross_validation_is_current() -> None:
    """The generalisation figures in card_classifier_eval.json (table folds, leave-one-source-out,
    end to end by fold) were measured with the shipped model's recipe and steps, on every
    annotated card."""
    import json

    from vision.evaluation import load_annotations

    meta = json.loads((ROOT / "models" / "card_classifier.json").read_text())
    results = json.loads((ROOT / "models" / "card_classifier_eval.json").read_text())
    recipe = meta["training"]["recipe"]
    assert results["cv_recipe"] == recipe, "re-run scripts/eval_classifier.py (recipe changed)"
    assert results["end_to_end_cv"]["recipe"] == recipe, "re-run scripts/evaluate.py --cv"
    steps = meta["training"]["steps"]  # the CV models train as long as the shipped one
    assert results["loso_steps"] == steps, "re-run scripts/eval_classifier.py (steps changed)"
    assert results["end_to_end_cv"]["steps"] == steps, "re-run scripts/evaluate.py --cv"
    labelled: dict[str, int] = {}
    for photo in load_annotations(ROOT / "datasets" / "detection", reviewed_only=True):
        for card in photo.cards:
            if not card.partial and len(card.attributes) == 4:
                labelled[photo.source] = labelled.get(photo.source, 0) + 1
    folds = results["folds"]
    in_folds = sum(folds[f]["all"]["n"] for f in folds if not f.startswith("pooled"))
    loso = sum(
        results["loso"][s]["tables"]["n"] for s in results["loso"] if "tables" in results["loso"][s]
    )
    assert in_folds + loso == sum(labelled.values()), "annotations changed: re-run the CV"
    assert set(labelled) <= set(results["end_to_end_cv"]["sources"])
    # The hold-out figures are the shipped model's, and so are its reported confidences: the
    # temperatures were fitted on this recipe's cross-validation models, with these labels.
    assert results["holdout_model_sha256"] == meta["sha256"], (
        "re-run scripts/eval_classifier.py --only holdout (the model changed)"
    )
    if shared_datasets(required=False) is not None:  # the labels' digest reads crops.csv
        recipe_script = load_script("train_classifier")
        fitted_on = recipe_script.cv_models_name(steps, meta["training"]["seed"])
        assert meta["calibration"]["cv_models"] == fitted_on, "re-run scripts/eval_classifier.py"


def test_reading_holds_with_a_quad_found_too_large() -> None:
    """A detector quad 1.2x the card's size (a tray cell, a sleeve, a shadow taken with the
    card) shows the real table round the card; the white balance must still find the paper.
    The shipped model on every other annotated photo's cards, warped from their corners
    scaled about the centre. Measured (every fourth photo, 249 cards): x1.0 100%, x1.2 98.0%;
    with the white balance of version 1 (the band's brighter half), x1.2 64.7%."""
    import numpy as np

    from vision.classify import CardClassifier
    from vision.evaluation import load_annotations
    from vision.io import load_image
    from vision.warp import warp_cards

    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared datasets not found")
    labels = load_script("train_classifier").LABELS
    classifier = CardClassifier()
    right = {1.0: 0, 1.2: 0}
    total = 0
    for photo in load_annotations(ROOT / "datasets" / "detection", reviewed_only=True)[::2]:
        cards = [c for c in photo.cards if not c.partial and len(c.attributes) == 4]
        if not cards:
            continue
        frame = load_image(root / photo.path)
        corners = np.array([c.corners for c in cards], np.float32)
        centre = corners.mean(axis=1, keepdims=True)
        truth = np.array([[labels[a].index(str(c.attributes[a])) for a in labels] for c in cards])
        total += len(cards)
        for scale in right:
            quads = centre + np.float32(scale) * (corners - centre)
            pred = np.asarray(classifier.predict(warp_cards(frame, quads)).positions())
            right[scale] += int((pred == truth).all(axis=1).sum())
    assert total > 400
    assert right[1.0] / total >= 0.99, f"x1.0: {right[1.0]} of {total} right"
    assert right[1.2] / total >= 0.95, f"x1.2: {right[1.2]} of {total} right"


#: Floors for the recorded generalisation figures (card_classifier_eval.json: models trained
#: without the source they are tested on). The CV models are not in the repository, so CI cannot
#: re-measure them; these floors stop a recipe that generalises worse from being recorded and
#: shipped. Measured with v7-zoom-mirror (seed 0, 1,500 steps): kaggle 0.993, tomwhite 0.9955,
#: omega697 verified 0.969, table folds 0.995, end to end cards 0.9964 and tables 0.987. The
#: floors sit under the seed-to-seed spread measured for that recipe (700-step models: kaggle
#: 0.979 to 0.994 over three seeds, tomwhite 0.994 to 0.995) and above the v5 recipe's kaggle
#: (0.906 to 0.955) and the v6 recipe's worst tomwhite seed (0.982: mirrored squiggles read as
#: ovals). The crop sources dealt into tables of 12 and read as tables (``dealt``), v7 seed 0:
#: kaggle 0.9925 (seed 1: 0.995), tomwhite 0.9954. The table-photo cards warped from a quad 1.2x
#: their size (``framing``, the white balance of version 2): 0.9866 (version 1: 0.677). v8
#: (v8-pair-wb1-context0.03, two members averaged): kaggle 0.9931 (dealt 0.9917), tomwhite
#: 0.9955 (dealt 0.9954), omega697 verified 0.969, folds 0.9965, end to end 0.9979 and 0.987,
#: quad x1.2 0.9923; end to end after the pile search's far-card and corner checks (the same
#: models) 0.9993 and 0.9935. The end-to-end floors are kept under the seed spread too. Each
#: kaggle crop read as a photo of that card alone (the model and the card's own ink hue,
#: ``vision.colour.card_colour``): colour 0.9995 (v8; the one wrong is a green card labelled
#: red), against 0.9974 for the model alone; its floor is the issue's per-attribute target.
#: With the crops cut by version 2 of ``crop_single_card`` (version 1 cut 166 whole tomwhite
#: cards at a shadow's edge): tomwhite 0.9994 and every attribute 0.9995 or more, kaggle each
#: card alone every attribute 0.9995 or more; their floors are the issue's card and attribute
#: targets.
GENERALISATION_FLOORS: dict[str, float] = {
    "loso kaggle-set-cards": 0.97,
    "loso kaggle-set-cards dealt": 0.985,
    "loso kaggle-set-cards alone, colour": 0.998,
    "loso kaggle-set-cards alone, count": 0.998,
    "loso kaggle-set-cards alone, shape": 0.998,
    "loso kaggle-set-cards alone, fill": 0.998,
    "loso tomwhite dealt": 0.99,
    "loso tomwhite": 0.995,
    "loso tomwhite, count": 0.998,
    "loso tomwhite, colour": 0.998,
    "loso tomwhite, shape": 0.998,
    "loso tomwhite, fill": 0.998,
    "loso omega697 verified": 0.94,
    "folds pooled": 0.99,
    "end to end cards": 0.995,
    "end to end tables": 0.97,
    "table-photo cards, quad x1.2": 0.97,
}


def test_recorded_generalisation_is_not_below_the_floors() -> None:
    import json

    results = json.loads((ROOT / "models" / "card_classifier_eval.json").read_text())
    loso, full = results["loso"], results["end_to_end_cv"]["figures"]["all"]["full"]
    kaggle_alone = loso["kaggle-set-cards"]["all_alone"]["per_attribute"]
    tomwhite = loso["tomwhite"]["all"]["per_attribute"]
    measured = {
        "loso kaggle-set-cards": loso["kaggle-set-cards"]["all"]["card"],
        "loso kaggle-set-cards dealt": loso["kaggle-set-cards"]["dealt"]["card"],
        **{f"loso kaggle-set-cards alone, {k}": v for k, v in kaggle_alone.items()},
        **{f"loso tomwhite, {k}": v for k, v in tomwhite.items()},
        "loso tomwhite dealt": loso["tomwhite"]["dealt"]["card"],
        "loso tomwhite": loso["tomwhite"]["all"]["card"],
        "loso omega697 verified": loso["omega697"]["verified"]["card"],
        "folds pooled": results["folds"]["pooled"]["card"],
        "end to end cards": full["card"],
        "end to end tables": full["table"],
        "table-photo cards, quad x1.2": results["framing"]["x1.2"]["card"],
    }
    low = {k: round(v, 4) for k, v in measured.items() if v < GENERALISATION_FLOORS[k] - 1e-9}
    assert not low, f"recorded generalisation below its floor: {low}"
