"""Card detection on the reviewed real photos (datasets/detection/), against recorded baselines.

Slow (``pytest -m slow``): runs ``vision.detect.find_cards`` on every reviewed photo of
``datasets/detection/*.json``, reading the shared photos in place, and fails when precision or
recall (IoU >= 0.85, partial cards neither required nor false positives) falls below the baseline,
overall or for a source. Same measurement as ``scripts/eval_detection.py``.

The baseline is the figure measured when it was recorded minus a margin (1 point overall, 3 points
per source, where one card is worth up to 3 points). Raise it when the detector gets better;
re-measure it when photos are added to the annotations.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from vision.data import REPO_ROOT, shared_datasets
from vision.evaluation import DetectionScore, load_annotations, score_photo, summarise

ANNOTATIONS = REPO_ROOT / "datasets" / "detection"

#: Measured 2026-11-30 (detector with mended notched regions, same-size insets, dim surface
#: patches dropped, parallel retries of neighbours' fourth sides, their edges stepping down
#: onto a dark table, far white cards' sides refined over 6 px at least and sides stopped on
#: a shadow's edge moved out to the card's, a pile's top card with a corner cut off by the
#: notch split completed; 120 reviewed photos, 1045 required cards):
#: overall precision 1.000, recall 0.991. Per source:
#: (precision, recall) as measured (maormagori's precision kept at an earlier run's 0.969,
#: where one run differed).
MEASURED = {
    "gractang": (1.000, 1.000),
    "ivankeller": (1.000, 1.000),
    "jtclark2": (1.000, 1.000),
    "koff": (1.000, 1.000),
    "maormagori": (0.969, 1.000),
    "nakkstar123": (1.000, 1.000),
    "omega697": (1.000, 0.892),
    "pclewis": (1.000, 0.978),
    "piratefsh": (1.000, 1.000),
    "rotemabend": (1.000, 1.000),
    "tomwhite": (1.000, 1.000),
}
OVERALL_MEASURED = (1.000, 0.991)
OVERALL_MARGIN = 0.01
SOURCE_MARGIN = 0.03


@pytest.fixture(scope="module")
def scores() -> list[DetectionScore]:
    root = shared_datasets(required=False)
    if root is None or not ANNOTATIONS.is_dir():
        pytest.skip("shared photos or detection annotations not available")
    photos = load_annotations(ANNOTATIONS, reviewed_only=True)
    if not photos:
        pytest.skip("no reviewed detection annotations")
    from vision.detect import find_cards
    from vision.io import load_image

    out = []
    for photo in photos:
        image = load_image(root / photo.path)
        assert image.shape[:2] == (photo.height, photo.width), photo.path
        corners = np.asarray(find_cards(image).corners, dtype=np.float64)
        out.append(score_photo(photo, corners))
    return out


@pytest.mark.slow
def test_overall_precision_and_recall_hold_the_baseline(scores: list[DetectionScore]) -> None:
    summary = summarise(scores)
    precision_floor = OVERALL_MEASURED[0] - OVERALL_MARGIN
    recall_floor = OVERALL_MEASURED[1] - OVERALL_MARGIN
    detail = (
        f"{summary.true_positives}/{summary.truth} found, {summary.false_positives} false, "
        f"{summary.perfect_photos}/{summary.photos} photos perfect"
    )
    assert summary.precision >= precision_floor, (
        f"precision {summary.precision:.3f} < {precision_floor:.3f} ({detail})"
    )
    assert summary.recall >= recall_floor, (
        f"recall {summary.recall:.3f} < {recall_floor:.3f} ({detail})"
    )


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(MEASURED))
def test_each_source_holds_its_baseline(scores: list[DetectionScore], source: str) -> None:
    by_source: dict[str, list[DetectionScore]] = defaultdict(list)
    for s in scores:
        by_source[s.source].append(s)
    if source not in by_source:
        pytest.skip(f"no reviewed photos of {source}")
    summary = summarise(by_source[source])
    precision, recall = MEASURED[source]
    failures = [
        f"{s.path}: missed {list(s.missed)}, false {list(s.false_indices)}"
        for s in by_source[source]
        if not s.perfect
    ]
    assert summary.precision >= precision - SOURCE_MARGIN, (
        f"{source} precision {summary.precision:.3f} < {precision - SOURCE_MARGIN:.3f}: {failures}"
    )
    assert summary.recall >= recall - SOURCE_MARGIN, (
        f"{source} recall {summary.recall:.3f} < {recall - SOURCE_MARGIN:.3f}: {failures}"
    )


@pytest.mark.slow
def test_every_reviewed_source_has_a_baseline(scores: list[DetectionScore]) -> None:
    missing = sorted({s.source for s in scores} - set(MEASURED))
    assert not missing, f"record a baseline for {missing} (run scripts/eval_detection.py)"
