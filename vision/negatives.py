"""Card detection on the shared negative chips (``negatives.csv``), with the project's review.

The 1,500 chips of ``../shared/datasets/negatives.csv`` are described as "non-card chip cut from
a table video", but many show real SET cards (whole cards filling the chip, cards on a table
beside other objects, close-ups of symbols). Every chip on which the detector has found anything
was looked at and recorded in ``datasets/negatives/review.csv`` (``path,content,note``;
``content`` is ``card``, ``no_card`` or ``unclear``). A detection on a ``no_card`` chip is a false
positive; one on a chip never reviewed is reported as needing review (it is counted as a false
positive until someone looks); ``card`` and ``unclear`` chips are not counted.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.data import REPO_ROOT, read_csv, shared_datasets
from vision.io import load_image

__all__ = ["REVIEW", "NegativesScore", "load_review", "score_negatives"]

#: The project's review of the chips the detector has found something in.
REVIEW = REPO_ROOT / "datasets" / "negatives" / "review.csv"

CONTENTS = ("card", "no_card", "unclear")


@dataclass
class NegativesScore:
    """Detections on the negative chips.

    Attributes:
        chips: chips read.
        false_positives: path -> detections, for ``no_card`` chips with any.
        unreviewed: path -> detections, for chips with detections and no review row.
        on_cards: path -> detections, for chips reviewed as showing a card (or unclear).
    """

    chips: int = 0
    false_positives: dict[str, int] = field(default_factory=dict)
    unreviewed: dict[str, int] = field(default_factory=dict)
    on_cards: dict[str, int] = field(default_factory=dict)

    @property
    def fp_chips(self) -> int:
        """Chips with a false positive, unreviewed ones included."""
        return len(self.false_positives) + len(self.unreviewed)

    @property
    def fp_detections(self) -> int:
        """False-positive detections, unreviewed ones included."""
        return sum(self.false_positives.values()) + sum(self.unreviewed.values())


def load_review(path: Path = REVIEW) -> dict[str, str]:
    """Chip path (relative to the shared datasets folder) -> ``content``.

    Raises:
        ValueError: on a row whose content is not one of :data:`CONTENTS`.
    """
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    review = {}
    for row in rows:
        if row["content"] not in CONTENTS:
            raise ValueError(f"{path}: {row['path']}: content {row['content']!r} not in {CONTENTS}")
        review[row["path"]] = row["content"]
    return review


def score_negatives(
    detect: Callable[[np.ndarray], int], review: dict[str, str] | None = None
) -> NegativesScore:
    """Run ``detect`` (a BGR uint8 frame -> number of cards found) on every negative chip.

    Raises:
        SetVisionError: if the shared datasets are not there.
    """
    root = shared_datasets()
    review = load_review() if review is None else review
    score = NegativesScore()
    for row in read_csv("negatives.csv"):
        found = detect(load_image(root / row["path"]))
        score.chips += 1
        if not found:
            continue
        content = review.get(row["path"])
        if content is None:
            score.unreviewed[row["path"]] = found
        elif content == "no_card":
            score.false_positives[row["path"]] = found
        else:
            score.on_cards[row["path"]] = found
    return score
