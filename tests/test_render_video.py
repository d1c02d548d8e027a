"""The game-video renderer (vision.render_video): its timeline follows the script, its truth
matches what it draws, and a script the table cannot follow is refused."""

from __future__ import annotations

import numpy as np
import pytest

from vision.cards import full_deck
from vision.render_video import GameVideo, Step
from vision.warp import paper_mask, warp_cards

DECK = full_deck()
SCRIPT = (
    Step("deal", tuple(DECK[:12])),
    Step("take", (DECK[0], DECK[1], DECK[2]), "left"),
    Step("add", tuple(DECK[12:15]), "right"),
    Step("wrong_claim", (DECK[3], DECK[4], DECK[5]), "top"),
)


@pytest.fixture(scope="module")
def frames() -> list:
    video = GameVideo(SCRIPT, np.random.default_rng(3), size=(640, 360), fps=10)
    return [video, list(video.frames())]


def test_one_frame_per_tick_until_the_table_settles(frames) -> None:
    video, shot = frames
    assert len(shot) == video.frame_count == int(np.ceil(video.duration_s * 10))
    assert [f.index for f in shot] == list(range(len(shot)))
    assert shot[0].image.shape == (360, 640, 3) and shot[0].image.dtype == np.uint8
    assert not shot[0].cards and not shot[-1].hand


def test_the_table_follows_the_script(frames) -> None:
    video, shot = frames
    deal, take, add, claim = video.steps
    at = {f.index: {c.id for c in f.cards} for f in shot}

    def ids(t: float) -> set[int]:
        return at[int(round(t * 10))]

    assert ids(deal.start_s) == set() and ids(deal.end_s + 0.1) == set(range(12))
    assert ids(take.end_s + 0.1) == set(range(3, 12))
    assert add.ids == (12, 13, 14) and ids(add.end_s + 0.1) == set(range(3, 15))
    # A wrong claim lifts its cards and puts the same cards (same ids) back.
    assert not set(claim.ids) & ids((claim.act_s + claim.back_s) / 2)
    assert ids(claim.end_s + 0.1) == set(range(3, 15))


def test_a_hand_is_in_view_exactly_while_a_step_is_under_way(frames) -> None:
    video, shot = frames
    for f in shot:
        during = [s.index for s in video.steps if s.start_s <= f.time_s < s.end_s]
        assert f.hand == bool(during) and f.step == (during[0] if during else None)
    assert any(c.covered for f in shot for c in f.cards)  # the arm passes over cards
    assert not any(c.covered for f in shot if not f.hand for c in f.cards)


def test_one_by_one_the_hand_picks_each_card_in_turn_and_shows_a_claim_off_the_picture() -> None:
    video = GameVideo(SCRIPT, np.random.default_rng(3), size=(320, 180), fps=20, one_by_one=True,
                      hold_s=1.0)  # fmt: skip
    shot = list(video.frames())
    _, take, _, claim = video.steps
    at = {f.index: {c.id for c in f.cards} for f in shot}

    def ids(t: float) -> set[int]:
        return at[int(round(t * 20))]

    # The take's cards leave one at a time, the first as the hand reaches it.
    gone = [len(set(take.ids) - ids(t)) for t in np.arange(take.start_s, take.end_s, 0.05)]
    assert gone[0] == 0 and gone[-1] == 3 and {1, 2} <= set(gone)
    assert gone == sorted(gone)
    # A claim's cards are shown off the picture, no hand in view, then put back together.
    away = [f for f in shot if claim.start_s <= f.time_s < claim.end_s and not f.hand]
    assert away and all(not set(claim.ids) & {c.id for c in f.cards} for f in away)
    assert ids(claim.back_s + 0.05) >= set(claim.ids)
    assert ids(claim.end_s + 0.1) == set(range(3, 15))


def test_the_corners_are_the_drawn_cards(frames) -> None:
    _, shot = frames
    still = [f for f in shot if not f.hand and len(f.cards) == 12]
    frame = still[len(still) // 2]
    corners = np.stack([c.corners for c in frame.cards])
    crops = warp_cards(frame.image, corners)
    band = paper_mask()
    assert all(np.median(c[band].mean(axis=1)) > 170 for c in crops)  # a card's paper to its edge
    short = np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    long = np.linalg.norm(corners[:, 3] - corners[:, 0], axis=1)
    assert (short < long).all()  # portrait order


def test_the_same_seed_draws_the_same_video() -> None:
    a = GameVideo(SCRIPT[:1], np.random.default_rng(5), size=(320, 180), fps=5)
    b = GameVideo(SCRIPT[:1], np.random.default_rng(5), size=(320, 180), fps=5)
    for fa, fb, again in zip(a.frames(), b.frames(), a.frames(), strict=True):
        assert np.array_equal(fa.image, fb.image) and np.array_equal(fa.image, again.image)


@pytest.mark.parametrize(
    ("script", "match"),
    [
        ((Step("take", (DECK[0], DECK[1], DECK[2])),), "not on the table"),
        ((Step("deal", (DECK[0],)), Step("add", (DECK[0],))), "on the table already"),
        ((Step("deal", tuple(DECK[:22])),), "no room"),
        ((Step("shuffle", (DECK[0],)),), "kind"),
        ((Step("deal", (DECK[0],), "under"),), "side"),
        ((Step("deal", ()),), "no cards"),
    ],
)
def test_a_script_the_table_cannot_follow_is_refused(script: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GameVideo(script, np.random.default_rng(0), size=(320, 180))
