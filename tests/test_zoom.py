"""vision.detect.zoom: the window and zoom searches where the working image is too coarse.

Unit tests on the windows and on how cards found again are merged (a stand-in search), and,
with the shared photos, a real table widened into a panorama and set small on a large canvas
(found by a new user's trial: 0 and 11 of 12 cards found before)."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from tests._annotations import annotated_photo
from vision.data import shared_datasets
from vision.detect.masks import WORK_LONG_SIDE
from vision.detect.result import CardDetections
from vision.detect.zoom import (
    ELONGATED,
    FAR_BLOBS,
    GROW,
    MAX_WINDOWS,
    ZOOM_BELOW_PX,
    grid,
    search_finer,
    small_blobs,
    windows,
)


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


@pytest.fixture
def marker_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in frames of marker values (float64) hold no blobs: a panorama's windows are
    not looked at for them (the detector's images are uint8)."""
    import vision.detect.zoom as zoom

    monkeypatch.setattr(zoom, "_window_blobs", lambda part: np.zeros((0, 4, 2), np.float32))


def _plain(frame: np.ndarray) -> np.ndarray:
    """A working image with no blob for a stand-in frame of marker values (uint8, the frame
    shrunk by its working factor)."""
    k = max(1, int(max(frame.shape[:2]) / WORK_LONG_SIDE))
    return np.zeros((frame.shape[0] // k, frame.shape[1] // k, 3), np.uint8)


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
            partial.append(
                bool(low[0] < x0 or high[0] > x0 + w - 1 or low[1] < y0 or high[1] > y0 + h - 1)
            )
        return _detections(quads, partial)


def test_a_panorama_is_searched_in_windows_and_each_card_kept_once(marker_frames: None) -> None:
    height, width = 720, 4800
    frame = np.arange(height * width, dtype=np.float64).reshape(height, width, 1).repeat(3, 2)
    cards = [_card(x, 300) for x in (100, 900, 1250, 2000, 3000, 4700)]  # 1250: two windows
    search = _Recorder(cards, frame)
    got = search_finer(frame, CardDetections.empty(), search, working=_plain(frame))
    assert search.parts == [(x, 0, x + 960, 720) for x in (0, 640, 1280, 1920, 2560, 3200, 3840)]
    centres = sorted(float(q[:, 0].mean()) for q in got.corners)
    assert centres == [130, 930, 1280, 2030, 3030, 4730]  # each card once, whole
    assert not got.partial.any()


def test_cards_already_found_are_not_added_again(marker_frames: None) -> None:
    frame = np.arange(720 * 4800, dtype=np.float64).reshape(720, 4800, 1).repeat(3, 2)
    cards = [_card(100, 300), _card(2000, 300)]
    found = _detections([cards[0] + 1.0])  # the same card, a pixel off
    got = search_finer(frame, found, _Recorder(cards, frame), working=_plain(frame))
    assert len(got) == 2 and np.allclose(got.corners[0], cards[0] + 1.0)


def test_small_cards_have_their_region_searched_again_at_a_finer_scale() -> None:
    frame = np.arange(3000 * 4000, dtype=np.float64).reshape(3000, 4000, 1).repeat(3, 2)
    k = 6  # 4000 / 640: the cards below are 10 px across in the working image
    small = [_card(x, 1400) for x in (1500, 1590, 1770)]
    assert 60 / k < ZOOM_BELOW_PX
    missed = _card(1680, 1400)  # between two found ones
    search = _Recorder(small + [missed], frame)
    got = search_finer(frame, _detections(small), search, working=_plain(frame))
    # the found cards' box grown by GROW card lengths (90 px) each way
    g = round(GROW * 90)
    assert search.parts == [(1500 - g, 1400 - g, 1830 + g, 1490 + g)]
    assert len(got) == 4 and np.allclose(got.corners[3], missed)


def test_cards_found_finer_replace_those_found_coarser_and_unconfirmed_quads_go() -> None:
    frame = np.arange(3000 * 4000, dtype=np.float64).reshape(3000, 4000, 1).repeat(3, 2)
    cards = [_card(x, 1400) for x in (1500, 1590, 1680)]  # 10 px across at k = 6
    coarse = [cards[0] + 3.0, cards[1], _card(1770, 1400)]  # one a bit off; one no card
    search = _Recorder(cards, frame)
    got = search_finer(frame, _detections(coarse), search, working=_plain(frame))
    assert len(search.parts) == 1
    assert len(got) == 3
    for card in cards:  # each card as the finer search found it, once
        assert sum(np.allclose(q, card) for q in got.corners) == 1
    # the coarse quad the finer search did not find again, in the window it searched, is gone
    assert not any(np.allclose(q, coarse[2]) for q in got.corners)


def test_cards_found_at_a_good_size_stand_when_the_finer_search_misses_them() -> None:
    # A review: a near card sharing a window with a far table's small cards was dropped as
    # "not found again" (omega697's one-card photo read as the far cards alone), and a
    # printed cell round a card replaced it.
    frame = np.arange(3000 * 4000, dtype=np.float64).reshape(3000, 4000, 1).repeat(3, 2)
    small = [_card(x, 1400) for x in (1500, 1590, 1680)]  # 10 px across at k = 6
    near = _card(1900, 1300, 300, 450)  # 50 px across at k = 6: found right
    cell = _card(1880, 1270, 340, 510)  # what the finer search takes for it
    speck = _card(1600, 1600, 12, 18)  # under the far cards' size
    search = _Recorder(small + [cell, speck], frame)
    got = search_finer(frame, _detections(small + [near]), search, working=_plain(frame))
    assert search.parts  # searched finer round the small cards
    assert sum(np.allclose(q, near) for q in got.corners) == 1  # stands as found
    assert not any(np.allclose(q, cell) or np.allclose(q, speck) for q in got.corners)
    assert len(got) == 4


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


def test_a_quad_over_two_cards_found_or_a_cut_one_is_not_added(marker_frames: None) -> None:
    frame = np.arange(720 * 4800, dtype=np.float64).reshape(720, 4800, 1).repeat(3, 2)
    found = _detections([_card(1000, 300, 40, 60), _card(1045, 300, 40, 60)])  # small
    both = np.array([[995, 295], [1090, 295], [1090, 365], [995, 365]], np.float32)
    cut = _card(-20, 300)  # cut by the frame's edge, found partial in the first window

    search = _Recorder([both, cut], frame)
    got = search_finer(frame, found, search, working=_plain(frame))
    assert len(got) == 2  # neither the quad over both nor the partial card


def test_nothing_runs_on_an_ordinary_photo() -> None:
    frame = np.zeros((1500, 2000, 3), np.uint8)
    found = _detections([_card(100, 100, 300, 450)])  # 100 px across at k = 3
    calls = []
    assert search_finer(frame, found, lambda part: calls.append(part) or found) is found
    assert calls == [] and ELONGATED > 2000 / 1500


@pytest.mark.parametrize(
    ("region", "factor"),
    [
        ((0, 0, 6000, 4000), 3),
        ((100, 50, 2100, 1550), 1),
        ((0, 0, 900, 600), 1),
        ((7, 9, 4007, 3009), 2),
    ],
)
def test_grid_windows_cover_the_region_with_overlap_at_the_finer_factor(
    region: tuple[int, int, int, int], factor: int
) -> None:
    boxes = grid(region, factor)
    x0, y0, x1, y1 = region
    limit = (factor + 1) * WORK_LONG_SIDE
    covered = np.zeros((y1 - y0, x1 - x0), np.bool_)
    for bx0, by0, bx1, by1 in boxes:
        assert x0 <= bx0 < bx1 <= x1 and y0 <= by0 < by1 <= y1
        assert max(bx1 - bx0, by1 - by0) < limit  # searched at `factor` or finer
        covered[by0 - y0 : by1 - y0, bx0 - x0 : bx1 - x0] = True
    assert covered.all()
    xs = sorted({b[0] for b in boxes})
    size = boxes[0][2] - boxes[0][0]
    assert all(b - a <= 2 * size / 3 + 0.5 for a, b in zip(xs, xs[1:]))  # a third overlaps
    if max(x1 - x0, y1 - y0) < limit:
        assert boxes == [region]


def _working_with_blobs(centres, size=(14, 22), angle=0.0, shape=(400, 600)) -> np.ndarray:
    working = np.full((*shape, 3), 70, np.uint8)  # a dark table
    for cx, cy in centres:
        box = cv2.boxPoints(((cx, cy), size, angle)).astype(np.int32)
        cv2.fillConvexPoly(working, box, (235, 235, 235))
    return working


def test_small_card_shaped_blobs_are_found_and_other_shapes_are_not() -> None:
    cards = [(100 + 30 * i, 100) for i in range(5)]
    working = _working_with_blobs(cards)
    working = np.maximum(working, _working_with_blobs([(300, 300)], size=(20, 20)))  # a square
    working = np.maximum(working, _working_with_blobs([(450, 250)], size=(60, 90)))  # found size
    working = np.maximum(working, _working_with_blobs([(500, 80)], size=(6, 6)))  # a speck
    blobs = small_blobs(working)
    centres = sorted((round(float(x)), round(float(y))) for x, y in blobs.mean(axis=1))
    assert len(centres) == len(cards) and np.allclose(centres, cards, atol=1.0)
    tilted = small_blobs(_working_with_blobs(cards, angle=30.0))
    assert len(tilted) == len(cards)
    assert len(small_blobs(np.full((400, 600, 3), 200, np.uint8))) == 0


def test_a_far_table_is_searched_finer_round_its_blobs_and_a_quad_over_cards_dropped() -> None:
    # A 4,000 x 3,000 frame (working factor 6) whose table's cards are 14 x 22 px in the
    # working image: the whole-frame search found only a quad over four of them.
    frame = np.arange(3000 * 4000, dtype=np.float64).reshape(3000, 4000, 1).repeat(3, 2)
    k = 6
    centres = [(300 + 20 * i, 200 + 30 * j) for i in range(3) for j in range(2)]
    working = _working_with_blobs(centres, shape=(500, 666))
    cards = [(_card(cx * k - 42, cy * k - 66, 84, 132)).astype(np.float32) for cx, cy in centres]
    over = np.array([[1750, 1100], [2050, 1100], [2050, 1500], [1750, 1500]], np.float32)
    search = _Recorder(cards, frame)
    got = search_finer(frame, _detections([over]), search, working=working)
    assert search.parts  # searched finer
    assert all(max(x1 - x0, y1 - y0) < k * WORK_LONG_SIDE for x0, y0, x1, y1 in search.parts)
    assert len(got) == len(cards)  # the quad over cards is gone, each card once
    assert not any(np.allclose(q, over) for q in got.corners)


def test_a_large_photo_without_blobs_or_cards_is_not_searched_again() -> None:
    frame = np.full((3000, 4000, 3), 90, np.uint8)
    working = _working_with_blobs([(100, 100), (200, 100)], shape=(500, 666))  # two
    assert FAR_BLOBS > 2
    calls = []
    empty = CardDetections.empty()
    assert search_finer(frame, empty, lambda p: calls.append(p) or empty, working=working) is empty
    assert calls == []


def _shifted(photo, dx: int, dy: int):
    cards = tuple(
        dataclasses.replace(c, corners=np.asarray(c.corners) + np.array([dx, dy]))
        for c in photo.cards
    )
    return dataclasses.replace(photo, cards=cards)


def _score_in_frame(path: str, place):
    """Detection score of the reviewed photo ``path`` set in a larger frame by ``place``
    (table -> (frame, dx, dy), the table's offset in it); skips without the shared photos."""
    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared photos not available")
    from vision.detect.find import find_cards
    from vision.evaluation import score_photo
    from vision.io import load_image

    frame, dx, dy = place(load_image(root / path))
    return score_photo(_shifted(annotated_photo(path), dx, dy), find_cards(frame).corners)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["panorama", "panorama-middle", "canvas"])
def test_a_table_small_next_to_its_photo_is_found(layout: str) -> None:
    def place(table):
        h, w = table.shape[:2]
        size, (dy, dx) = {
            "panorama": ((h, 5 * w), (0, 0)),  # 4,800 x 720: none found before
            "panorama-middle": ((h, 4 * w), (0, 3 * w // 2)),
            "canvas": ((3000, 4000), ((3000 - h) // 2, (4000 - w) // 2)),  # 11 of 12 before
        }[layout]
        frame = np.full((*size, 3), 60, np.uint8)
        frame[dy : dy + h, dx : dx + w] = table
        return frame, dx, dy

    score = _score_in_frame("tables/tomwhite/data/webcam/20170529_184024.png", place)
    assert score.true_positives == score.n_truth == 12
    assert score.false_positives == 0


@pytest.mark.slow
def test_a_far_table_in_a_large_photo_is_found() -> None:
    """A new user's trial: a 27-card table in a frame three times its size (6,000 x 4,017, its
    edges repeated: a far shot saved as PNG) gave no card; its cards are 18 px across in the
    working image (as a JPEG it was decoded at half size and read right)."""

    def place(table):
        h, w = table.shape[:2]
        return cv2.copyMakeBorder(table, h, h, w, w, cv2.BORDER_REPLICATE), w, h

    score = _score_in_frame("tables/tomwhite/data/ad-hoc/DSC_4869.jpg", place)
    assert score.true_positives == score.n_truth == 27
    assert score.false_positives == 0


@pytest.mark.slow
def test_a_far_table_in_a_long_panorama_is_found() -> None:
    """A review: a half-size copy of a 27-card table in a 12,000 x 2,400 frame gave 1 card (a
    quad over several, 50 px across in a window's working image); the windows' blobs and
    small cards start the finer search there too."""

    def place(table):
        half = cv2.resize(table, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        h, w = half.shape[:2]
        frame = np.full((2400, 12000, 3), 60, np.uint8)
        dy, dx = (2400 - h) // 2, 4000
        frame[dy : dy + h, dx : dx + w] = half
        return frame, dx, dy

    path = "tables/tomwhite/data/ad-hoc/DSC_4869.jpg"
    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared photos not available")
    from vision.detect.find import find_cards
    from vision.evaluation import score_photo
    from vision.io import load_image

    frame, dx, dy = place(load_image(root / path))
    photo = annotated_photo(path)
    halved = dataclasses.replace(
        photo,
        cards=tuple(
            dataclasses.replace(c, corners=np.asarray(c.corners) * 0.5 + np.array([dx, dy]))
            for c in photo.cards
        ),
    )
    score = score_photo(halved, find_cards(frame).corners, threshold=0.6)
    assert score.true_positives == score.n_truth == 27
    assert score.false_positives == 0


@pytest.mark.slow
def test_a_desk_photo_with_no_card_gives_none_at_any_size() -> None:
    """The grid search runs only on card-shaped blobs: a desk photo with no card stays empty
    (an earlier version searched every empty large photo and took a desk's part for a card at
    1,500 x 1,000)."""
    root = shared_datasets(required=False)
    if root is None:
        pytest.skip("shared photos not available")
    from vision.detect.find import find_cards
    from vision.io import load_image

    desk = load_image(root / "tables/omega697/app/src/androidTest/assets/scenes/desk_no_cards.jpg")
    for size in ((2000, 1500), (1500, 1000), (4000, 3000)):
        assert len(find_cards(cv2.resize(desk, size, interpolation=cv2.INTER_AREA))) == 0
