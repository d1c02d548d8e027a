"""The live overlay's parts on synthetic frames: the camera's move (vision.motion), the hand
(vision.touch) and the card tracker (vision.track), each without the detector or classifier."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.cards import Card, Colour, Count, Fill, Shape
from vision.motion import WORK_WIDTH, MotionTracker, small_grey
from vision.touch import ABSORB_HAND_S, TouchDetector
from vision.track import BARE_DROP_S, CardTracker, Read

W, H = 480, 270
FPS = 30.0


def _texture(seed: int = 0, size: tuple[int, int] = (W, H)) -> npt.NDArray[np.uint8]:
    """A table-like grey texture, (h, w, 3) uint8."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, 1, (size[1], size[0])).astype(np.float32), (0, 0), 3)
    grey = np.clip(90 + 25 * noise / noise.std(), 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


#: Card places on the synthetic table (portrait, TL TR BR BL, px), well apart.
PLACES = [
    np.array([[x, 60], [x + 50, 60], [x + 50, 138], [x, 138]], np.float32)
    for x in (60, 150, 240, 330)
]
#: Three cards forming a SET (1, 2, 3 red solid ovals) and one more.
CARDS = [
    Card(Count.ONE, Colour.RED, Shape.OVAL, Fill.SOLID),
    Card(Count.TWO, Colour.RED, Shape.OVAL, Fill.SOLID),
    Card(Count.THREE, Colour.RED, Shape.OVAL, Fill.SOLID),
    Card(Count.ONE, Colour.GREEN, Shape.DIAMOND, Fill.OPEN),
]


def _scene(
    on: list[int], arm: tuple[int, int] | None = None, look: int = 0
) -> npt.NDArray[np.uint8]:
    """The table with the cards at ``PLACES[i]`` for i in ``on`` (each with its own marks) and
    an arm from the bottom edge covering columns ``arm`` (x0, x1) up to y = 50."""
    img = _texture()
    for i in on:
        q = PLACES[i].astype(np.int32)
        cv2.fillPoly(img, [q], (235, 235, 235))
        x0, y0 = q[0]
        for k in range((i + look) % 4 + 1):  # its own number of dark marks: its own look
            cv2.rectangle(img, (int(x0) + 10, int(y0) + 10 + 18 * k),
                          (int(x0) + 40, int(y0) + 20 + 18 * k), (40, 40, 160), -1)  # fmt: skip
    if arm is not None:
        cv2.rectangle(img, (arm[0], 50), (arm[1], H - 1), (120, 160, 215), -1)
    return img


def _probs(card: Card, p: float = 0.98) -> npt.NDArray[np.float32]:
    out = np.full((4, 3), (1 - p) / 2, np.float32)
    for a, v in enumerate(card.positions):
        out[a, v] = p
    return out


def _read(image: npt.NDArray[np.uint8], on: list[int], cards: list[Card] | None = None,
          settled: bool = True) -> Read:  # fmt: skip
    corners = np.array([PLACES[i] for i in on], np.float32).reshape(-1, 4, 2)
    probs = np.array([_probs((cards or CARDS)[i]) for i in on], np.float32).reshape(-1, 4, 3)
    return Read(corners, probs, small_grey(image), corners.copy(), settled)


class _Run:
    """A tracker fed synthetic frames at 30 fps with no camera move (scale 1: the frames are
    the grey copy's size)."""

    def __init__(self) -> None:
        self.tracker = CardTracker(1.0)
        self.t = 0.0

    def frame(self, image, hand=False, read=None, arm=None):  # type: ignore[no-untyped-def]
        self.t += 1 / FPS
        mask = None
        if arm is not None:
            mask = np.zeros((H // 2, W // 2), bool)
            mask[25:, arm[0] // 2 : arm[1] // 2] = True
        return self.tracker.step(small_grey(image), np.eye(3), hand, self.t, read, arm=mask)


def test_a_card_read_on_a_still_table_is_shown_with_its_sets() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    shown = run.frame(image, read=_read(image, [0, 1, 2, 3]))
    assert [c.card for c in shown.cards] == CARDS
    assert shown.sets == ((0, 1, 2),)
    assert not shown.hand


def test_a_card_read_under_a_hand_is_not_shown_until_a_still_read() -> None:
    run = _Run()
    image = _scene([0, 1, 2])
    assert run.frame(image, hand=True, read=_read(image, [0, 1, 2], settled=False)).cards == ()
    assert len(run.frame(image, read=_read(image, [0, 1, 2])).cards) == 3


def test_one_bad_read_does_not_flip_a_card() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    for _ in range(3):
        run.frame(image, read=_read(image, [0, 1, 2, 3]))
    wrong = [CARDS[0], CARDS[1], Card(Count.THREE, Colour.GREEN, Shape.OVAL, Fill.SOLID), CARDS[3]]
    shown = run.frame(image, read=_read(image, [0, 1, 2, 3], cards=wrong))
    assert [c.card for c in shown.cards] == CARDS
    assert shown.sets == ((0, 1, 2),)


def test_a_card_taken_with_no_hand_in_view_is_dropped_by_the_next_read() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    run.frame(image, read=_read(image, [0, 1, 2, 3]))
    after = _scene([0, 1, 3])
    shown = run.frame(after, read=_read(after, [0, 1, 3]))
    assert [c.id for c in shown.cards] == [0, 1, 3]
    assert shown.sets == ()


def test_a_card_under_the_arm_keeps_its_id_and_leaves_the_sets_while_covered() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    run.frame(image, read=_read(image, [0, 1, 2, 3]))
    covered = _scene([0, 1, 2, 3], arm=(225, 305))  # over card 2
    for _ in range(int(FPS)):  # a second under the arm
        shown = run.frame(covered, hand=True, arm=(225, 305))
        assert [c.id for c in shown.cards] == [0, 1, 2, 3]
        assert shown.sets == ()  # card 2 cannot be seen: its SET is not drawn
        assert shown.hand
    shown = run.frame(image)
    assert [c.id for c in shown.cards] == [0, 1, 2, 3]
    assert shown.sets == ((0, 1, 2),)


def test_a_card_lifted_while_the_hand_is_elsewhere_is_dropped_at_once() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    run.frame(image, read=_read(image, [0, 1, 2, 3]))
    lifted = _scene([0, 1, 3], arm=(400, 470))  # card 2 gone, the arm far from its place
    frames = 0
    while 2 in [c.id for c in run.frame(lifted, hand=True, arm=(400, 470)).cards]:
        frames += 1
        assert frames <= BARE_DROP_S * FPS + 2


def test_a_card_put_back_where_it_lay_keeps_its_id() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    run.frame(image, read=_read(image, [0, 1, 2, 3]))
    lifted = _scene([0, 3], arm=(400, 470))
    for _ in range(int(FPS)):
        run.frame(lifted, hand=True, arm=(400, 470))
    shown = run.frame(image, read=_read(image, [0, 1, 2, 3]))
    assert [c.id for c in shown.cards] == [0, 1, 2, 3]


def test_a_new_card_dealt_where_one_was_taken_gets_a_new_id() -> None:
    run = _Run()
    image = _scene([0, 1, 2, 3])
    run.frame(image, read=_read(image, [0, 1, 2, 3]))
    after = _scene([0, 1, 3])
    run.frame(after, read=_read(after, [0, 1, 3]))
    other = [*CARDS[:2], Card(Count.TWO, Colour.PURPLE, Shape.SQUIGGLE, Fill.STRIPED), CARDS[3]]
    shown = run.frame(image, read=_read(image, [0, 1, 2, 3], cards=other))
    assert [c.id for c in shown.cards] == [0, 1, 3, 4]
    assert shown.cards[-1].card == other[2]


def test_other_cards_where_cards_were_are_new_cards() -> None:
    # The camera turned to another table, no hand in view: the cards in the same places are
    # other cards, and get new ids rather than the old ones' (a new user's trial).
    run = _Run()
    image = _scene([0, 1, 2, 3])
    run.frame(image, read=_read(image, [0, 1, 2, 3]))
    other = _scene([0, 1, 2, 3], look=2)
    cards = [CARDS[3], CARDS[2], CARDS[1], CARDS[0]]
    for _ in range(3):
        shown = run.frame(other, read=_read(other, [0, 1, 2, 3], cards=cards))
    assert {c.id for c in shown.cards}.isdisjoint({0, 1, 2, 3})
    assert [c.card for c in shown.cards] == cards


def test_one_deck_decoding_across_the_tracks() -> None:
    # Two cards both read as the same card (one deck holds it once): decoded apart.
    run = _Run()
    image = _scene([0, 1])
    probs = np.array([_probs(CARDS[0]), _probs(CARDS[0], 0.6)])
    read = Read(np.array(PLACES[:2]), probs, small_grey(image), np.array(PLACES[:2]), True)
    shown = run.frame(image, read=read)
    assert len({c.card for c in shown.cards}) == 2


# -- the hand -------------------------------------------------------------------------------


def _touch_run(frames: list[npt.NDArray[np.uint8]]) -> list[bool]:
    touch = TouchDetector()
    return [touch.update(f, np.eye(3), k / FPS).hand for k, f in enumerate(frames)]


def test_an_arm_reaching_in_from_the_edge_is_a_hand() -> None:
    still = [_scene([0, 1])] * 10
    reach = [_scene([0, 1], arm=(200, 260))] * 5
    assert _touch_run(still + reach) == [False] * 10 + [True] * 5


def test_a_card_put_down_inside_the_picture_is_no_hand() -> None:
    assert not any(_touch_run([_scene([0])] * 10 + [_scene([0, 1])] * 10))


@pytest.mark.parametrize("gain", [0.7, 1.3])
def test_the_camera_changing_its_exposure_is_no_hand(gain: float) -> None:
    base = _scene([0, 1])
    lit = np.clip(base.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    assert not any(_touch_run([base] * 10 + [lit] * 10))


def _grain(seed: int = 0) -> npt.NDArray[np.uint8]:
    """A table of low contrast (levels 90 +- 6, never beyond 15): an arm of its mean colour
    differs from it by less than the touch detector's colour threshold everywhere."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, 1, (H, W)).astype(np.float32), (0, 0), 2)
    grey = np.clip(90 + 6 * noise / noise.std(), 75, 105).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


def test_an_arm_of_the_tables_own_colour_is_a_hand_by_the_texture_it_hides() -> None:
    table = _grain()
    arm = table.copy()
    cv2.rectangle(arm, (200, 120), (260, H - 1), (90, 90, 90), -1)  # smooth, the table's mean
    assert _touch_run([table] * 10 + [arm] * 5) == [False] * 10 + [True] * 5


@pytest.mark.parametrize("named", [True, False])
def test_a_card_lifted_beside_the_arm_is_not_taken_for_arm_when_the_cards_are_named(
    named: bool,
) -> None:
    """A printed card lifted off a plain desk leaves the desk's smoothness where its print was:
    texture gone, as under an arm. Named, its place is left out of the texture test."""
    table = np.full((H, W, 3), 200, np.uint8)
    card = table.copy()
    q = PLACES[1].astype(np.int32)
    cv2.fillPoly(card, [q], (214, 214, 214))  # 14 levels off the desk: below the threshold
    for y in range(int(q[0, 1]) + 6, int(q[2, 1]) - 6, 6):  # fine print: texture, not colour
        cv2.line(card, (int(q[0, 0]) + 6, y), (int(q[1, 0]) - 6, y), (190, 190, 190), 2)
    places = PLACES[1][None] if named else None
    touch = TouchDetector()
    t = 0.0
    for image in [card] * 20 + [_with_arm(card, 120 + k % 2, 149, 100, (150, 160, 200))
                                for k in range(6)]:  # fmt: skip
        t += 1 / FPS
        seen = touch.update(image, np.eye(3), t, places)
    assert seen.hand
    for k in range(4):  # lifted: the arm moves on, the card's place is bare desk
        t += 1 / FPS
        seen = touch.update(_with_arm(table, 120 + k % 2, 149, 100, (150, 160, 200)),
                            np.eye(3), t, places)  # fmt: skip
    inside = np.zeros(seen.arm.shape, np.uint8)
    cv2.fillPoly(inside, [np.round(PLACES[1][None] / 2 + [[2, 2], [-2, 2], [-2, -2], [2, -2]])
                          .astype(np.int32)], 1)  # fmt: skip
    assert seen.hand and (seen.arm[inside > 0].mean() > 0.5) != named


@pytest.mark.parametrize("table", ["plain", "grain"])
def test_a_noisy_camera_is_no_hand(table: str) -> None:
    rng = np.random.default_rng(1)
    base = _grain() if table == "grain" else np.full((H, W, 3), 90, np.uint8)
    frames = [np.clip(base + rng.normal(0, 8, base.shape), 0, 255).astype(np.uint8)
              for _ in range(40)]  # fmt: skip
    assert not any(_touch_run(frames))


def test_a_shadow_over_a_grained_table_keeps_its_texture() -> None:
    table = _grain()
    shaded = table.copy()
    shaded[:, 200:300] = (shaded[:, 200:300] * 0.8).astype(np.uint8)  # 18 levels: no colour
    assert not any(_touch_run([table] * 10 + [shaded] * 10))


def test_a_hand_resting_still_is_taken_into_the_picture_and_seen_when_it_moves() -> None:
    rest = [_scene([0], arm=(200, 260))] * int((ABSORB_HAND_S + 0.5) * FPS)
    moved = [_scene([0], arm=(300, 360))] * 3
    hands = _touch_run([_scene([0])] * 5 + rest + moved)
    assert hands[5] and not hands[5 + len(rest) - 1] and hands[-1]


# -- the camera's move ----------------------------------------------------------------------


@pytest.mark.parametrize("shift", [(4.0, -3.0), (-7.5, 2.0), (0.0, 0.0)])
def test_the_camera_move_is_found_as_a_homography(shift: tuple[float, float]) -> None:
    size = (960, 540)
    base = _texture(3, size)
    m = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
    moved = cv2.warpAffine(base, m, size, borderMode=cv2.BORDER_REFLECT)
    motion = MotionTracker(size)
    motion.update(small_grey(base))
    found = motion.update(small_grey(moved))
    assert found.inliers > 50
    point = found.homography @ np.array([480.0, 270.0, 1.0])
    assert point[:2] / point[2] == pytest.approx(np.array([480 + shift[0], 270 + shift[1]]),
                                                 abs=0.6)  # fmt: skip
    assert motion.scale == pytest.approx(size[0] / WORK_WIDTH)


# -- covered or lifted: the touch detector and the tracker together, as vision.live runs them --


class _TouchRun:
    """Frames through the touch detector and the tracker, as :func:`vision.live.follow` wires
    them (the frames are the small copy's size: scale 1, no camera move)."""

    def __init__(self) -> None:
        self.touch = TouchDetector()
        self.tracker = CardTracker(1.0)
        self.t = 0.0

    def frame(self, image, read=None):  # type: ignore[no-untyped-def]
        self.t += 1 / FPS
        seen = self.touch.update(image, np.eye(3), self.t)
        return self.tracker.step(small_grey(image), np.eye(3), seen.hand, self.t, read,
                                 arm=seen.arm, touch=seen)  # fmt: skip


def _with_arm(image, x0: int, x1: int, top: int, colour) -> npt.NDArray[np.uint8]:  # type: ignore[no-untyped-def]
    out = image.copy()
    cv2.rectangle(out, (x0, top), (x1, H - 1), colour, -1)
    return out


def _ids_over(run: _TouchRun, frames: list[npt.NDArray[np.uint8]]) -> list[set[int]]:
    return [{c.id for c in run.frame(f).cards} for f in frames]


@pytest.mark.parametrize("camouflaged", [False, True])
def test_a_card_half_under_a_hand_stays(camouflaged: bool) -> None:
    run = _TouchRun()
    image = _scene([0, 1, 2, 3])
    for _ in range(int(FPS)):
        run.frame(image, read=_read(image, [0, 1, 2, 3]))
    half = _with_arm(image, 232, 298, 100, (60, 80, 110))  # over the lower half of card 2
    if camouflaged:  # an arm of the table's colours: it shows only where it crosses the card
        off_card = np.ones((H, W), bool)
        cv2.fillPoly(off_card.view(np.uint8), [PLACES[2].astype(np.int32)], 0)
        half[off_card] = image[off_card]
    seen = _ids_over(run, [half] * int(FPS))
    assert all(ids == {0, 1, 2, 3} for ids in seen)


def test_a_card_lifted_from_under_a_hand_is_dropped_and_a_covered_one_stays() -> None:
    run = _TouchRun()
    image = _scene([0, 1, 2, 3])
    for _ in range(int(FPS)):
        run.frame(image, read=_read(image, [0, 1, 2, 3]))
    # Card 2 lifted: the hand lies over the right half of its place (the rest shows the
    # table), and over all of card 3's lower part.
    lifted = _with_arm(_scene([0, 1, 3]), 265, 380, 110, (120, 160, 215))
    seen = _ids_over(run, [lifted] * int(FPS))
    assert 2 not in seen[-1]
    assert 3 in seen[-1]
