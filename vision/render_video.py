"""Rendered game videos with exact truth: a scripted SET game on a table, seen by a camera that
drifts slowly, with a hand and arm that reach in to deal, take SETs, make wrong claims and add
cards. For the live overlay's and the referee's tests and tuning.

Part of :mod:`vision.render`'s family (it draws with the same cards, tables and compositing).
A script is a sequence of :class:`Step`; :class:`GameVideo` lays it out in time and
:meth:`GameVideo.frames` yields one :class:`VideoFrame` per frame with every card on the table
(its id, its corners in the frame, whether the arm covers it) and whether a hand is in view.

Timeline of a step: the hand reaches in from its side (``reach_s``), acts (cards appear, or
leave with the hand), and goes back (``reach_s``); a wrong claim holds the three cards off the
table for ``hold_s`` and puts them back before the hand leaves. With ``one_by_one`` picks the
hand goes to each card of a take or claim in turn (``pick_s`` apart), each leaving as the hand
reaches it, and goes out of the picture with them; a wrong claim's cards are shown off the
picture for ``hold_s``, then brought back and put down together. After each step the table is
still, no hand in view, for ``settle_s``. A card dealt goes to the first free slot of a grid of
3 rows (a refill fills the places a SET left).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import Card, full_deck
from vision.render_background import make_background
from vision.render_camera import light_gains
from vision.render_card import card_size_for_width, render_card_and_mask, sample_style
from vision.render_scene import _apply_h, _camera_homography, _composite, _quad, canonical_corners
from vision.rules import find_sets
from vision.touch import SIDES
from vision.warp import CARD_ASPECT

__all__ = [
    "SIDES",
    "STEP_KINDS",
    "CardInView",
    "GameVideo",
    "Step",
    "StepTiming",
    "VideoFrame",
    "game_script",
]

#: What a step does: ``deal`` and ``add`` put cards on the table, ``take`` removes them (a SET
#: taken, or any cards), ``wrong_claim`` lifts them and puts them back.
STEP_KINDS: Final = ("deal", "take", "wrong_claim", "add")
#: Slots of the table: 3 rows of up to this many columns (21 cards).
COLUMNS: Final = 7
#: Gap between slots, in card widths.
SLOT_GAP: Final = 0.25
#: A card is ``covered`` when the arm lies over this share of it or more.
COVERED_SHARE: Final = 0.15


@dataclass(frozen=True)
class Step:
    """One move of the script.

    Attributes:
        kind: one of :data:`STEP_KINDS`.
        cards: the cards dealt or added (not on the table yet), or taken or claimed (on it).
        side: one of :data:`SIDES`, where the hand comes from.
    """

    kind: str
    cards: tuple[Card, ...]
    side: str = "bottom"


@dataclass(frozen=True)
class StepTiming:
    """When a step happened, and the ids of its cards.

    Attributes:
        index: the step's position in the script.
        kind, side: as in its :class:`Step`.
        ids: (n,) the track ids of its cards (new ids for cards dealt or added).
        start_s: the hand enters the frame; act_s: the cards appear or leave; back_s: the hand
            starts back (a wrong claim's cards are put back then); end_s: the hand is out of the
            frame again (seconds from the video's start).
    """

    index: int
    kind: str
    side: str
    ids: tuple[int, ...]
    start_s: float
    act_s: float
    back_s: float
    end_s: float


@dataclass(frozen=True)
class CardInView:
    """A card on the table in one frame.

    Attributes:
        id: track id, the same for the physical card while it stays on the table.
        card: the card.
        corners: (4, 2) float32 frame pixels, TL, TR, BR, BL of the portrait card
            (:func:`vision.render_scene.canonical_corners`).
        covered: the arm lies over :data:`COVERED_SHARE` of it or more.
    """

    id: int
    card: Card
    corners: npt.NDArray[np.float32]
    covered: bool


@dataclass(frozen=True)
class VideoFrame:
    """One frame and its truth.

    Attributes:
        index: frame number from 0; time_s: ``index / fps``.
        image: (H, W, 3) uint8 BGR.
        cards: every card on the table, covered or not, by id.
        hand: a hand or arm is in view.
        step: the script step in progress (its hand in view), or None.
    """

    index: int
    time_s: float
    image: npt.NDArray[np.uint8]
    cards: tuple[CardInView, ...]
    hand: bool
    step: int | None


class GameVideo:
    """A scripted game, laid out in time (:attr:`steps`) and rendered frame by frame.

    Args:
        script: the steps, in order (checked: cards taken must be on the table, cards dealt
            must not be, 21 at most on it).
        rng: random generator (table, deck edition, camera, drift, skin tone).
        size: frame (width, height) in pixels.
        fps: frames per second.
        background: a table surface of :func:`vision.render.make_background` (None: random).
        tilt_deg: the camera's angle from straight down.
        drift_px: how far the picture drifts (a hand-held or loosely mounted camera), pixels.
        reach_s, hold_s, settle_s: the timeline's durations (module docstring).
        one_by_one: a take's or claim's cards are picked one at a time and carried out of the
            picture (module docstring); else the hand lifts the three together over them.
        pick_s: seconds from one card picked to the next (``one_by_one``).
        noise: sensor noise (standard deviation, grey levels).
        warm: tungsten cast, 0..1; exposure: gain on every channel (0.5 is a dim room), as in
            :func:`vision.render_camera.apply_effects`.

    Raises:
        ValueError: for an unknown step kind or side, or a script the table cannot follow.
    """

    def __init__(
        self,
        script: Sequence[Step],
        rng: np.random.Generator,
        size: tuple[int, int] = (1280, 720),
        fps: float = 30.0,
        *,
        background: str | None = None,
        tilt_deg: float = 20.0,
        drift_px: float = 6.0,
        reach_s: float = 0.6,
        hold_s: float = 0.5,
        settle_s: float = 1.0,
        noise: float = 2.0,
        warm: float = 0.0,
        exposure: float = 1.0,
        one_by_one: bool = False,
        pick_s: float = 0.35,
    ) -> None:
        if fps <= 0:
            raise ValueError(f"fps: expected > 0, got {fps}")
        self.size = (int(size[0]), int(size[1]))
        self.fps = float(fps)
        self.noise = float(noise)
        self.gains = light_gains(warm, exposure)
        self.drift_px = float(drift_px)
        self._slots = _slot_quads()
        self.steps, self._cards, self._on, self._ways = _timeline(
            script, reach_s, hold_s, settle_s, pick_s if one_by_one else None
        )
        self.duration_s = self.steps[-1].end_s + settle_s if self.steps else settle_s
        w, h = self.size
        self._hom = _camera_homography(self._slots.reshape(-1, 2), self.size, rng, 0.0, 0.08,
                                       tilt_deg, float(rng.uniform(-0.1, 0.1)))  # fmt: skip
        plane_lo = self._slots.reshape(-1, 2).min(axis=0)
        plane_hi = self._slots.reshape(-1, 2).max(axis=0)
        ext = float(np.max(plane_hi - plane_lo)) * 2.2
        ctr = (plane_lo + plane_hi) / 2
        self._tex = make_background(background, rng, (w, h))
        self._tex_to_plane = np.array(
            [[ext / w, 0, ctr[0] - ext / 2], [0, ext / w, ctr[1] - ext * h / w / 2], [0, 0, 1]]
        )
        style = sample_style(rng)
        card_px = float(np.linalg.norm(_apply_h(self._hom, self._slots[0])[1]
                                       - _apply_h(self._hom, self._slots[0])[0]))  # fmt: skip
        cw, ch = card_size_for_width(card_px * 1.3)
        self._faces = {i: render_card_and_mask(c, rng, style, (cw, ch))
                       for i, (c, _) in sorted(self._cards.items())}  # fmt: skip
        self._skin = np.array([[150, 175, 225], [110, 140, 195], [70, 100, 150], [45, 65, 100]][
            int(rng.integers(4))], np.float64) * rng.uniform(0.85, 1.1)  # fmt: skip
        self._drift = rng.uniform(0, 2 * np.pi, 3)
        self._noise_seed = int(rng.integers(2**32))

    @property
    def frame_count(self) -> int:
        """Frames in the video: up to the table's last settled moment."""
        return int(np.ceil(self.duration_s * self.fps))

    def frames(self) -> Iterator[VideoFrame]:
        """Every frame, in order, rendered as it is asked for (the same frames every call)."""
        noise_rng = np.random.default_rng(self._noise_seed)
        for index in range(self.frame_count):
            yield self._frame(index, noise_rng)

    def _camera(self, t: float) -> npt.NDArray[np.float64]:
        """Plane -> frame homography at time ``t``: the fixed camera and a slow drift (periods
        of 7, 9 and 11 s: a shift of up to :attr:`drift_px` and a turn of up to 0.4 degrees)."""
        w, h = self.size
        a, b, c = self._drift
        dx = self.drift_px * np.sin(2 * np.pi * t / 7.0 + a)
        dy = self.drift_px * np.sin(2 * np.pi * t / 9.0 + b)
        turn = 0.4 * np.sin(2 * np.pi * t / 11.0 + c)
        move = cv2.getRotationMatrix2D((w / 2, h / 2), float(turn), 1.0)
        move[:, 2] += np.array([dx, dy])
        return np.vstack([move, [0.0, 0.0, 1.0]]) @ self._hom

    def _on_table(self, t: float) -> list[int]:
        return sorted(i for i, spans in self._on.items() if any(a <= t < b for a, b in spans))

    def _frame(self, index: int, noise_rng: np.random.Generator) -> VideoFrame:
        t = index / self.fps
        hom = self._camera(t)
        w, h = self.size
        image = cv2.warpPerspective(
            self._tex, hom @ self._tex_to_plane, (w, h), borderMode=cv2.BORDER_REFLECT
        )
        corners = {}
        for i in self._on_table(t):
            img, mask = self._faces[i]
            outline = _quad(mask.shape[1], mask.shape[0])
            card_hom = hom @ cv2.getPerspectiveTransform(outline, self._slots[self._cards[i][1]])
            _composite(image, img, mask, card_hom, shadow=0.2, shadow_offset=(2.0, 3.0))
            corners[i] = canonical_corners(_apply_h(card_hom, outline))
        step, arm = self._arm(t, hom)
        covered = dict.fromkeys(corners, False)
        if arm is not None:
            arm_mask = np.zeros((h, w), np.uint8)
            cv2.fillPoly(arm_mask, [arm], 1)
            # The hand: a palm over the arm's end, as wide as the arm and a little longer.
            tip = (arm[1] + arm[2]) / 2
            width = float(np.linalg.norm(arm[1] - arm[2]))
            along = tip - (arm[0] + arm[3]) / 2
            angle = float(np.degrees(np.arctan2(along[1], along[0])))
            cv2.ellipse(arm_mask, (int(tip[0]), int(tip[1])), (int(0.7 * width), int(0.55 * width)),
                        angle, 0, 360, 1, -1)  # fmt: skip
            skin = np.asarray(self._skin, np.float32)
            shade = 0.9 + 0.1 * cv2.GaussianBlur(arm_mask.astype(np.float32), (0, 0), 3)
            image[arm_mask > 0] = np.clip(skin * shade[arm_mask > 0][:, None], 0, 255).astype(
                np.uint8
            )
            for i, q in corners.items():
                card_mask = np.zeros((h, w), np.uint8)
                cv2.fillPoly(card_mask, [np.round(q).astype(np.int32)], 1)
                area = max(int(card_mask.sum()), 1)
                covered[i] = bool((card_mask & arm_mask).sum() >= COVERED_SHARE * area)
        if self.noise > 0 or not np.allclose(self.gains, 1.0):
            lit = image.astype(np.float32) * self.gains
            if self.noise > 0:
                lit += noise_rng.normal(0, self.noise, image.shape).astype(np.float32)
            image = np.clip(lit, 0, 255).astype(np.uint8)
        cards = tuple(CardInView(i, self._cards[i][0], corners[i], covered[i])
                      for i in sorted(corners))  # fmt: skip
        return VideoFrame(index, t, image, cards, arm is not None, step)

    def _arm(
        self, t: float, hom: npt.NDArray[np.float64]
    ) -> tuple[int | None, npt.NDArray[np.int32] | None]:
        """The step whose hand is in view at ``t`` and the arm's outline (int32 frame px)."""
        for timing in self.steps:
            if timing.start_s <= t < timing.end_s:
                break
        else:
            return None, None
        ways = self._ways[timing.index]
        n = next(i for i in range(1, len(ways)) if t < ways[i][0] or i == len(ways) - 1)
        (t0, ids0), (t1, ids1) = ways[n - 1], ways[n]
        if not ids0 and not ids1:
            return None, None  # out of the picture (showing a claim's cards to the others)
        w, h = self.size
        outside = 40.0  # px beyond the frame edge: the arm comes from out of view

        def place(ids: tuple[int, ...], other: tuple[int, ...]) -> npt.NDArray[np.float64]:
            slots = [self._cards[i][1] for i in (ids or other)]
            target = _apply_h(hom, self._slots[slots].reshape(-1, 2)).mean(axis=0)
            if ids:
                return target
            return np.asarray({
                "bottom": (target[0], h + outside),
                "top": (target[0], -outside),
                "left": (-outside, target[1]),
                "right": (w + outside, target[1]),
            }[timing.side], np.float64)  # fmt: skip

        entry = place((), ids1 or ids0)
        a, b = place(ids0, ids1), place(ids1, ids0)
        k = float(np.clip((t - t0) / max(t1 - t0, 1e-6), 0.0, 1.0))
        k = k * k * (3 - 2 * k)  # ease in and out
        tip = a + (b - a) * k
        card_w = float(np.linalg.norm(np.diff(_apply_h(hom, self._slots[0])[:2], axis=0)))
        half = 0.35 * card_w
        d = tip - entry
        n = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-6)
        back_pt = entry - d / max(float(np.linalg.norm(d)), 1e-6) * card_w
        arm = np.array([back_pt + n * half * 1.2, tip + n * half, tip - n * half,
                        back_pt - n * half * 1.2])  # fmt: skip
        return timing.index, np.round(arm).astype(np.int32)


def _slot_quads() -> npt.NDArray[np.float32]:
    """(3 * COLUMNS, 4, 2) card corners on the table plane, column by column (12 cards are 4
    columns of 3, as dealt), a card 1 wide."""
    ch = 1.0 / CARD_ASPECT
    quads = []
    for c in range(COLUMNS):
        for r in range(3):
            x, y = c * (1.0 + SLOT_GAP), r * (ch + SLOT_GAP)
            quads.append([[x, y], [x + 1, y], [x + 1, y + ch], [x, y + ch]])
    return np.asarray(quads, np.float32)


def _timeline(
    script: Sequence[Step], reach_s: float, hold_s: float, settle_s: float,
    pick_s: float | None = None,
) -> tuple[
    tuple[StepTiming, ...],
    dict[int, tuple[Card, int]],
    dict[int, list[list[float]]],
    list[list[tuple[float, tuple[int, ...]]]],
]:  # fmt: skip
    """The steps' times, the cards by id (card, slot), each id's times on the table ([start,
    stop) spans) and each step's path of the hand ((time, ids of the cards the hand is over)
    points; no ids: out of the picture); checks that the table can follow the script.
    ``pick_s``: a take's or claim's cards are picked one at a time, this far apart."""
    timings: list[StepTiming] = []
    cards: dict[int, tuple[Card, int]] = {}
    on: dict[int, list[list[float]]] = {}
    ways: list[list[tuple[float, tuple[int, ...]]]] = []
    table: dict[Card, int] = {}  # the cards on the table now -> id
    t = settle_s
    for index, step in enumerate(script):
        if step.kind not in STEP_KINDS:
            raise ValueError(f"step {index}: kind: expected one of {STEP_KINDS}, got {step.kind!r}")
        if step.side not in SIDES:
            raise ValueError(f"step {index}: side: expected one of {SIDES}, got {step.side!r}")
        if not step.cards:
            raise ValueError(f"step {index}: no cards")
        act = t + reach_s
        back = act
        if step.kind in ("deal", "add"):
            ids = []
            for card in step.cards:
                if card in table:
                    raise ValueError(f"step {index}: {card.label} is on the table already")
                used = {cards[i][1] for i in table.values()}
                free = [s for s in range(3 * COLUMNS) if s not in used]
                if not free:
                    raise ValueError(f"step {index}: no room for more than {3 * COLUMNS} cards")
                new = len(cards)
                cards[new] = (card, free[0])
                table[card] = new
                on[new] = [[act, np.inf]]
                ids.append(new)
            path = [(t, ()), (act, tuple(ids)), (back + reach_s, ())]
        else:
            missing = [c.label for c in step.cards if c not in table]
            if missing:
                raise ValueError(f"step {index}: not on the table: {', '.join(missing)}")
            ids = [table[c] for c in step.cards]
            picked = [act + (k * pick_s if pick_s is not None else 0.0) for k in range(len(ids))]
            for card, i, when in zip(step.cards, ids, picked, strict=True):
                on[i][-1][1] = when
                if step.kind == "take":
                    del table[card]
            if pick_s is None:
                back = act + (hold_s if step.kind == "wrong_claim" else 0.0)
                path = [(t, ()), (act, tuple(ids)), (back, tuple(ids)), (back + reach_s, ())]
            else:
                path = [(t, ())] + [(when, (i,)) for i, when in zip(ids, picked, strict=True)]
                back = picked[-1]
                out = back + reach_s
                path.append((out, ()))
                if step.kind == "wrong_claim":  # shown off the picture, brought back
                    back = out + hold_s + reach_s
                    path += [(out + hold_s, ()), (back, tuple(ids)), (back + reach_s, ())]
            if step.kind == "wrong_claim":  # put back in its place (the same card)
                for i in ids:
                    on[i].append([back, np.inf])
        end = back + reach_s
        timings.append(StepTiming(index, step.kind, step.side, tuple(ids), t, act, back, end))
        ways.append(path)
        t = end + settle_s
    return tuple(timings), cards, on, ways


def game_script(
    rng: np.random.Generator, *, takes: int = 4, wrong_claims: int = 1, opening: int = 12
) -> tuple[Step, ...]:
    """A game played by the rules from a shuffled deck: the opening deal, then ``takes`` SETs
    taken (3 more added when no SET is on the table, and 3 after a take that left fewer than
    ``opening``), with ``wrong_claims`` claims of three cards that are not a SET among them, each
    hand from a random side.

    Raises:
        ValueError: if ``opening`` is not 3 to 21 in steps of 3, or the counts are negative.
    """
    if opening not in range(3, 22, 3) or takes < 0 or wrong_claims < 0:
        raise ValueError(
            f"game_script: opening {opening}, takes {takes}, wrong_claims {wrong_claims}: "
            "expected 3..21 in steps of 3 and counts >= 0"
        )
    deck = list(full_deck())
    deck = [deck[i] for i in rng.permutation(len(deck))]
    table = deck[:opening]
    deck = deck[opening:]

    def side() -> str:
        return str(SIDES[int(rng.integers(len(SIDES)))])

    steps = [Step("deal", tuple(table), side())]
    claims_at = set(rng.choice(max(takes, 1), size=min(wrong_claims, max(takes, 1)),
                               replace=False).tolist())  # fmt: skip
    taken = 0
    while taken < takes:
        if taken in claims_at:
            claims_at.discard(taken)
            sets = {frozenset(t) for t in find_sets(table)}
            for _ in range(100):
                pick = rng.choice(len(table), 3, replace=False)
                if frozenset(int(i) for i in pick) not in sets:
                    steps.append(Step("wrong_claim", tuple(table[int(i)] for i in pick), side()))
                    break
        sets = find_sets(table)
        if sets:
            pick = sets[int(rng.integers(len(sets)))]
            chosen = tuple(table[i] for i in pick)
            steps.append(Step("take", chosen, side()))
            table = [c for c in table if c not in chosen]
            taken += 1
            if len(table) >= opening:
                continue
        if len(deck) < 3 or len(table) + 3 > 3 * COLUMNS:
            break
        steps.append(Step("add", tuple(deck[:3]), side()))
        table += deck[:3]
        deck = deck[3:]
    return tuple(steps)
