"""vision.detect.zoom: the window and zoom searches where the working image is too coarse.

Unit tests on the windows and on how cards found again are merged (a stand-in search), and,
with the shared photos, a real table widened into a panorama and set small on a large canvas
(found by a new user's trial: 0 and 11 of 12 cards found before)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests._annotations import annotated_photo
from vision.data import shared_datasets
from vision.detect.result import CardDetections
from vision.detect.zoom import ELONGATED, MAX_WINDOWS, ZOOM_BELOW_PX, search_finer, windows


@pytest.mark.parametrize(("height", "width"), [(720, 4800), (4800, 720), (100, 20000), (720, 2881)])
def test_windows_cover_the_long_side_with_overlap(height: int, width: int) -> None:
    boxes = windows(height, width)
    along = 0 if width >= height else 1
    short = min(height, width)
    starts = [b[along] for b in boxes]
    ends = [b[along + 2] for b in boxes]
    assert starts[0] == 0 and ends[-1] == max(height, width)
    size = ends[0] - starts[0]
    assert size == round(short * 4 / 3) and all(e - s == size for s, e in zip(starts, ends))
    assert all(b - a <= 2 * size / 3 + 0.5 for a, b in zip(starts, starts[1:]))  # a third overlaps
    assert (
        max(b - a for a, b in zip(starts, starts[1:]))
        - min(  # evenly spaced
            b - a for a, b in zip(starts, starts[1:])
        )
        <= 1
    )
    across = (1, 3) if along == 0 else (0, 2)
    assert all((b[across[0]], b[across[1]]) == (0, short) for b in boxes)


def test_a_frame_no_longer_than_4_to_3_is_one_window() -> None:
    assert windows(720, 960) == [(0, 0, 960, 720)]
    assert windows(960, 720) == [(0, 0, 720, 960)]


def _card(x: float, y: float, w: float = 60, h: float = 90) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def _detections(quads: list[np.ndarray], partial: list[bool] | None = None) -> CardDetections:
    n = len(quads)
    corners = np.array(quads, np.float32).reshape(n, 4, 2)
    return CardDetections(
        corners, np.full(n, 0.9, np.float32), np.array(partial or [False] * n, np.bool_)
    )


class _Recorder:
    """A stand-in search: the boxes it was given, and in each the cards of ``cards`` (frame
    pixels) that overlap the part, in part pixels, flagged partial where the part cuts them."""

    def __init__(self, cards: list[np.ndarray], frame: np.ndarray) -> None:
        self.cards, self.frame, self.parts = cards, frame, []

    def __call__(self, part: np.ndarray) -> CardDetections:
        # The part is a view's copy: find where it lies by its marker values.
        y0, x0 = (int(v) for v in np.argwhere(self.frame[..., 0] == part[0, 0, 0])[0])
        h, w = part.shape[:2]
        self.parts.append((x0, y0, x0 + w, y0 + h))
        quads, partial = [], []
        for card in self.cards:
            low, high = card.min(axis=0), card.max(axis=0)
            if high[0] <= x0 or low[0] >= x0 + w or high[1] <= y0 or low[1] >= y0 + h:
                continue
            quads.append(card - np.float32([x0, y0]))
            partial.append(bool(low[0] < x0 or high[0] > x0 + w - 1 or low[1] < y0))
        return _detections(quads, partial)


def test_a_panorama_is_searched_in_windows_and_each_card_kept_once() -> None:
    height, width = 720, 4800
    frame = np.arange(height * width, dtype=np.float64).reshape(height, width, 1).repeat(3, 2)
    cards = [_card(x, 300) for x in (100, 900, 1250, 2000, 3000, 4700)]  # 1250: two windows
    search = _Recorder(cards, frame)
    got = search_finer(frame, CardDetections.empty(), search)
    assert search.parts == [(x, 0, x + 960, 720) for x in (0, 640, 1280, 1920, 2560, 3200, 3840)]
    centres = sorted(float(q[:, 0].mean()) for q in got.corners)
    assert centres == [130, 930, 1280, 2030, 3030, 4730]  # each card once, whole
    assert not got.partial.any()


def test_cards_already_found_are_not_added_again() -> None:
    frame = np.arange(720 * 4800, dtype=np.float64).reshape(720, 4800, 1).repeat(3, 2)
    cards = [_card(100, 300), _card(2000, 300)]
    found = _detections([cards[0] + 1.0])  # the same card, a pixel off
    got = search_finer(frame, found, _Recorder(cards, frame))
    assert len(got) == 2 and np.allclose(got.corners[0], cards[0] + 1.0)


def test_small_cards_have_their_region_searched_again_at_a_finer_scale() -> None:
    frame = np.arange(3000 * 4000, dtype=np.float64).reshape(3000, 4000, 1).repeat(3, 2)
    k = 6  # 4000 / 640: the cards below are 10 px across in the working image
    small = [_card(x, 1400) for x in (1500, 1590, 1770)]
    assert 60 / k < ZOOM_BELOW_PX
    missed = _card(1680, 1400)  # between two found ones
    search = _Recorder(small + [missed], frame)
    got = search_finer(frame, _detections(small), search)
    # the found cards' box grown by one card length (90 px) each way
    assert search.parts == [(1500 - 90, 1400 - 90, 1830 + 90, 1490 + 90)]
    assert len(got) == 4 and np.allclose(got.corners[3], missed)


def test_a_wide_phone_photo_with_cards_of_a_good_size_gets_no_windows() -> None:
    # 20:9 and 21:9 phone photos were searched in windows every time (2 to 13 times slower),
    # and a desk photo's charger port was taken for a card.
    frame = np.zeros((1080, 2520, 3), np.uint8)  # 21:9
    calls = []
    found = _detections([_card(100, 100, 200, 300)])  # 66 px across at k = 3
    assert search_finer(frame, found, lambda part: calls.append(part) or found) is found
    assert calls == []
    empty = CardDetections.empty()
    assert search_finer(frame, empty, lambda part: calls.append(part) or empty) is empty
    assert calls == [] and ELONGATED > 2520 / 1080  # not a panorama: no windows either


def test_a_strip_needing_too_many_windows_is_not_searched_in_windows() -> None:
    frame = np.zeros((30, 30 * 4 * (MAX_WINDOWS + 2), 3), np.uint8)
    calls = []
    empty = CardDetections.empty()
    assert search_finer(frame, empty, lambda part: calls.append(part) or empty) is empty
    assert calls == []


def test_a_quad_over_two_cards_found_or_a_cut_one_is_not_added() -> None:
    frame = np.arange(720 * 4800, dtype=np.float64).reshape(720, 4800, 1).repeat(3, 2)
    found = _detections([_card(1000, 300, 40, 60), _card(1045, 300, 40, 60)])  # small
    both = np.array([[995, 295], [1090, 295], [1090, 365], [995, 365]], np.float32)
    cut = _card(-20, 300)  # cut by the frame's edge, found partial in the first window

    search = _Recorder([both, cut], frame)
    got = search_finer(frame, found, search)
    assert len(got) == 2  # neither the quad over both nor the partial card


def test_nothing_runs_on_an_ordinary_photo() -> None:
    frame = np.zeros((1500, 2000, 3), np.uint8)
    found = _detections([_card(100, 100, 300, 450)])  # 100 px across at k = 3
    calls = []
    assert search_finer(frame, found, lambda part: calls.append(part) or found) is found
    assert calls == [] and ELONGATED > 2000 / 1500


def _shifted(photo, dx: int, dy: int):
    cards = tuple(
        dataclasses.replace(c, corners=np.asarray(c.corners) + np.array([dx, dy]))
        for c in photo.cards
    )
    return dataclasses.replace(photo, cards=cards)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["panorama", "panorama-middle", "canvas"])
def test_a_table_small_next_to_its_photo_is_found(layout: str) -> None:
    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared photos not available")
    from vision.detect import find_cards
    from vision.evaluation import score_photo
    from vision.io import load_image

    path = "tables/tomwhite/data/webcam/20170529_184024.png"
    photo = annotated_photo(path)
    table = load_image(root / path)
    h, w = table.shape[:2]
    size, (dy, dx) = {
        "panorama": ((h, 5 * w), (0, 0)),  # 4,800 x 720: none found before
        "panorama-middle": ((h, 4 * w), (0, 3 * w // 2)),
        "canvas": ((3000, 4000), ((3000 - h) // 2, (4000 - w) // 2)),  # 11 of 12 before
    }[layout]
    frame = np.full((*size, 3), 60, np.uint8)
    frame[dy : dy + h, dx : dx + w] = table
    score = score_photo(_shifted(photo, dx, dy), find_cards(frame).corners)
    assert score.true_positives == score.n_truth == 12
    assert score.false_positives == 0
