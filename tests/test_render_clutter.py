"""Desk clutter and sheets under the cards (vision.render_clutter) draw what they claim and leave
the cards' truth alone."""

from __future__ import annotations

import numpy as np
import pytest

from vision.cards import full_deck
from vision.render import CLUTTER_KINDS, SHEET_KINDS, render_table
from vision.render_clutter import clutter_object, clutter_width
from vision.warp import paper_mask, warp_cards

DECK = full_deck()


@pytest.mark.parametrize("kind", CLUTTER_KINDS)
def test_each_object_is_an_opaque_image_of_its_width(kind: str) -> None:
    img, alpha = clutter_object(np.random.default_rng(0), kind, 300)
    assert img.dtype == np.uint8 and img.shape[1] == 300 and img.shape[2] == 3
    assert alpha.shape == img.shape[:2] and alpha.dtype == np.float32
    assert alpha.min() >= 0.0 and alpha.max() == pytest.approx(1.0)
    assert alpha.mean() > 0.5  # mostly the object, not empty space
    lo, hi = {"keyboard": (3, 8), "laptop": (3, 6), "mouse": (0.8, 1.3), "cup": (1, 1.7),
              "envelope": (2, 4)}[kind]  # fmt: skip
    assert lo <= clutter_width(kind, np.random.default_rng(1)) <= hi


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        clutter_object(np.random.default_rng(0), "sofa", 100)
    with pytest.raises(ValueError, match="sheet"):
        render_table(DECK[:3], np.random.default_rng(0), size=(320, 240), sheet="velvet")


@pytest.mark.parametrize("sheet", SHEET_KINDS)
def test_a_sheet_changes_the_table_not_the_cards_corners(sheet: str) -> None:
    def draw(with_sheet: str | None) -> tuple[np.ndarray, np.ndarray]:
        return render_table(DECK[:9], np.random.default_rng(4), "dark_felt", (640, 480),
                            sheet=with_sheet, strength=0.0)  # fmt: skip

    plain, truth = draw(None)
    frame, corners = draw(sheet)
    np.testing.assert_array_equal(corners, truth)
    # The dark felt round the cards turned to paper: the frame got brighter outside the cards.
    assert frame.mean() > plain.mean() + 20
    band = paper_mask()
    assert all(c[band].mean() > 150 for c in warp_cards(frame, corners))


def test_clutter_lies_beside_the_cards_not_on_them() -> None:
    rng = np.random.default_rng(2)
    frame, corners = render_table(
        DECK[:6], rng, "white_desk", (800, 600), distractors=4,
        distractor_kinds=CLUTTER_KINDS, strength=0.0,
    )  # fmt: skip
    band = paper_mask()
    crops = warp_cards(frame, corners)
    assert all(np.median(c[band].mean(axis=1)) > 170 for c in crops)
