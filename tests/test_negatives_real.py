"""False positives on the shared negative chips, against a recorded baseline.

Slow (``pytest -m slow``, ~15 s): runs ``find_cards`` on the 1,500 chips of ``negatives.csv``
(read in place) and sorts the chips with a detection by ``datasets/negatives/review.csv``
(:mod:`vision.negatives`). Fails when more chips with no card get a detection than recorded, or
when a chip never reviewed gets one (look at it and add a review row). Same measurement as
``scripts/eval_negatives.py``.
"""

from __future__ import annotations

import pytest

from vision.data import shared_datasets
from vision.detect import find_cards
from vision.negatives import load_review, score_negatives

#: Measured 2026-11-30: 20 detections on 20 of the chips reviewed as showing no card (paper
#: with print, a logo, stripes, wood grain, dark surfaces), none on unreviewed chips. 2026-12-01:
#: 21, a sign's white letters at a slant, taken for a tilted card since candidates are scored
#: under cameras off the image's centre too (close-ups and steep shots lost far fewer cards).
#: Those were the older contour detector's (deleted, #33).
MEASURED_FP_CHIPS = 21


def test_review_rows_are_valid() -> None:
    review = load_review()
    assert len(review) >= 40
    assert set(review.values()) <= {"card", "no_card", "unclear"}


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="learned (2026-12-03): detections on 122 chips never reviewed (139 quads, most of "
    "them omega697's ok_chip_ video chips), to be looked at and given review rows; 7 on chips "
    "reviewed as no card, under the 21 recorded for the older contour detector",
)
def test_false_positives_on_negative_chips_stay_at_the_baseline() -> None:
    if shared_datasets(required=False) is None:
        pytest.skip("../shared/datasets not present")
    score = score_negatives(lambda frame: len(find_cards(frame).corners))
    assert score.chips == 1500
    assert not score.unreviewed, f"review these chips: {sorted(score.unreviewed)}"
    assert len(score.false_positives) <= MEASURED_FP_CHIPS, sorted(score.false_positives)
