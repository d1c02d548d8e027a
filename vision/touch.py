"""Is the table being touched? A hand or arm over the table, told from the change against the
last still picture of the table: a hand reaches in from outside the picture, so what changed
reaches the frame's edge; a card put down or taken changes a patch inside the picture.

A pixel has changed when its colour left the reference's range, or when the table's texture
under it is gone (:func:`_texture_lost`): an arm of the table's own colour (a brown arm on a
brown wooden table differs by 5-10 levels) still hides the grain, where skin is smooth. Only
the table's texture counts, away from the cards (the caller names them): a card lifted off a
plain desk leaves the desk's smoothness where its print was, and that is no arm.

The reference is the small colour copy (:func:`vision.motion.small_grey` with ``colour=True``:
skin and a wooden table can be one grey) of the last frame after which
nothing moved for :data:`ABSORB_S`; it is carried along with the camera's move, so a drifting or
hand-held camera does not look like a hand. A hand held still for longer
(:data:`ABSORB_HAND_S`) is taken into the reference, and seen again when it moves or leaves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["SIDES", "TouchDetector", "Touch"]

#: The frame edges a hand reaches in from.
SIDES: Final = ("bottom", "left", "right", "top")

#: Levels a pixel must change by (the largest change of its three channels, against the
#: reference or the last frame) to count as changed: above sensor noise and JPEG ringing (2-4
#: levels), below a hand on any table (skin against paper, wood or cloth differs by 30 or more).
CHANGED_LEVELS: Final = 18
#: Side of the window (pixels of the touch copy: a quarter of a card's width, or less, at a
#: table seen whole) over which a pixel's texture is measured: the grey's local spread.
TEXTURE_WINDOW: Final = 5
#: Levels of local standard deviation the reference must show for its texture to count: above
#: the noise left on the touch copy (a 1280 px frame's pixel noise of 8 levels falls to about
#: 1 on the 240 px copy; a real sensor's, correlated between neighbours, less so); a plain
#: desk or felt shows less, the rendered wood grain, cloth and carpet 3-6.
TEXTURE_LEVELS: Final = 2.0
#: The texture is gone when the local contrast (standard deviation over mean, so a shadow or
#: the camera's exposure, which scale both, change nothing) falls below this share of the
#: reference's: noise only adds contrast, so a noisy camera cannot fake it; smooth skin over
#: wood grain keeps 0.2-0.3 of it.
TEXTURE_KEPT: Final = 0.4
#: Share of the picture a changed patch touching the frame's edge must cover to be a hand or arm
#: (a hand is a few percent of a table seen whole; a sliver at the edge is the camera's move).
HAND_SHARE: Final = 0.004
#: Share of the picture changed between consecutive frames above which it is moving: a
#: fingertip entering at the edge (40 px of a 480 x 270 copy) already moves it, so a hand that
#: enters is never taken into the reference as still.
MOVING_SHARE: Final = 0.0003
#: Changed pixels along the frame's edge (the copy's) that make a frame moving by themselves.
EDGE_MOTION_PX: Final = 3
#: Seconds a pixel counts as having moved "lately" (:func:`_hand_mask`).
RECENT_S: Final = 1.0
#: Seconds without motion, and no hand in view, after which the picture becomes the reference
#: (the referee's settling time: players may reach in again a second after a deal, and a
#: reference older than the cards on the table takes them all for changes beside the arm).
ABSORB_S: Final = 0.5
#: ... and with an arm in view: a hand holding cards still (a claim shown to the others, half a
#: second or more) stays a hand; one left resting on the table for this long is taken in.
ABSORB_HAND_S: Final = 3.0
#: Share of the picture changed beyond which the change is the light or the whole view (auto
#: exposure, the camera pointed elsewhere), not a hand: the reference is renewed when still.
WHOLE_VIEW_SHARE: Final = 0.5
#: Pixels of the copy next to the frame's edge (or the edge of what the reference saw) that
#: count as "the edge".
EDGE_PX: Final = 3
#: The band (pixels of the copy, 3% of its width) an arm must reach into to be one: wider than
#: :data:`EDGE_PX`, because the band along the edge of what the reference saw is left out of
#: the change and the mask is closed and opened.
ARM_EDGE_PX: Final = 4


@dataclass(frozen=True)
class Touch:
    """What the touch detector saw on one frame.

    Attributes:
        hand: a changed patch reaches the edge of the picture: a hand or arm is over the table.
        moving: the picture changed since the last frame (beyond the camera's move).
        still_s: seconds since the picture last moved.
        changed: (h, w) bool mask of a copy half as wide as the grey copy
            (:data:`vision.motion.WORK_WIDTH` / 2 px), what differs from the reference in
            colour.
        arm: (h, w) bool, the changed patches (in colour, or the table's texture hidden)
            taken for a hand or arm.
        colour: (h, w, 3) int16 BGR, the copy looked at (None on the first frame).
        table: (h, w, 3) int16 BGR, the table when it was last still, carried to this frame
            and matched to its brightness (None on the first frame).
    """

    hand: bool
    moving: bool
    still_s: float
    changed: npt.NDArray[np.bool_]
    arm: npt.NDArray[np.bool_]
    colour: npt.NDArray[np.int16] | None = None
    table: npt.NDArray[np.int16] | None = None


class TouchDetector:
    """Tells a hand over the table from the change against the last still picture."""

    def __init__(self) -> None:
        self._reference: npt.NDArray[np.int16] | None = None
        self._ref_to_now = np.eye(3)  # reference's pixels -> this frame's (copy pixels)
        self._last: npt.NDArray[np.int16] | None = None
        self._still_since: float | None = None
        self._moved_at: npt.NDArray[np.float32] | None = None  # when each pixel last moved
        self._cards = np.zeros((0, 4, 2), np.float32)  # on the last frame (copy pixels)
        self._ref_cards: npt.NDArray[np.uint8] | None = None  # the reference's card places

    def update(
        self,
        small: npt.NDArray[np.uint8],
        move: npt.NDArray[np.float64],
        time_s: float,
        cards: npt.NDArray[np.float32] | None = None,
    ) -> Touch:
        """Look at the next frame.

        Args:
            small: (h, w, 3) uint8 small colour copy of the frame.
            move: (3, 3) homography from the previous frame's copy to this one's (copy pixels).
            time_s: the frame's time, seconds.
            cards: (n, 4, 2) float32 corners (``small``'s pixels) of the cards known on the
                last frame, or None: their places are left out of the texture test.
        """
        # Looked at on a copy half as wide again (a hand is large): pyrDown blurs and halves.
        img = cv2.pyrDown(small).astype(np.int16)
        half = np.diag([0.5, 0.5, 1.0])
        move = half @ move @ np.linalg.inv(half)
        h, w = img.shape[:2]
        if cards is not None:
            self._cards = np.asarray(cards, np.float32).reshape(-1, 4, 2) / 2  # this copy's px
        if self._reference is None or self._reference.shape != img.shape or self._last is None:
            self._absorb(img, time_s)
            return Touch(False, False, 0.0, np.zeros((h, w), bool), np.zeros((h, w), bool))
        # The reference is warped from the picture kept, never re-sampled frame after frame
        # (which blurs it); a band along the edge of what it saw is left out (interpolation).
        self._ref_to_now = move @ self._ref_to_now
        reference = cv2.warpPerspective(self._reference, self._ref_to_now, (w, h),
                                        borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
        valid = cv2.warpPerspective(np.ones((h, w), np.uint8), self._ref_to_now, (w, h),
                                    flags=cv2.INTER_NEAREST)  # fmt: skip
        valid = cv2.erode(valid, np.ones((3, 3), np.uint8), borderValue=1)  # interpolated
        last = cv2.warpPerspective(self._last, move, (w, h), borderMode=cv2.BORDER_REPLICATE)
        # The table's texture: away from the cards the reference showed and those known now.
        off_cards = valid > 0
        if self._ref_cards is not None and self._ref_cards.shape == (h, w):
            off_cards &= cv2.warpPerspective(self._ref_cards, self._ref_to_now, (w, h),
                                             flags=cv2.INTER_NEAREST) == 0  # fmt: skip
        off_cards &= _places(self._cards, (h, w)) == 0
        texture = _texture(img)
        raw = (_change_beyond(img, last) > CHANGED_LEVELS) & (valid > 0)
        raw = (raw | (_texture_lost(texture, _texture(last)) & off_cards)).astype(np.uint8)
        # Opened: single pixels along ink edges (resampling) are no motion; but anything at
        # the frame's edge is (a fingertip coming in, a sliver as yet).
        opened = cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        edge = int(raw[:EDGE_PX].sum() + raw[-EDGE_PX:].sum() + raw[:, :EDGE_PX].sum()
                   + raw[:, -EDGE_PX:].sum())  # fmt: skip
        moving = bool(opened.mean() > MOVING_SHARE) or edge >= EDGE_MOTION_PX
        if moving or self._still_since is None:
            self._still_since = time_s
        still_s = time_s - self._still_since
        matched = _gain_matched(reference, img, valid)
        changed = (_change_beyond(img, matched) > CHANGED_LEVELS) & (valid > 0)
        # Where the texture is gone, measured over a window: enough to find an arm, too coarse
        # to place an outline (it spills past a lifted card's edge), so ``changed`` keeps to
        # colour and the arm is found in both.
        hidden = changed | (_texture_lost(texture, _texture(matched)) & off_cards)
        e = ARM_EDGE_PX  # anything new at the frame's edge, before the masks are cleaned
        at_edge = bool(hidden[:e].any() or hidden[-e:].any() or hidden[:, :e].any()
                       or hidden[:, -e:].any())  # fmt: skip
        # Closed first: an arm over a table of nearly its colour changes in patches (a skin tone
        # on light wood differs by 15-30 levels), which closing joins into one arm.
        changed, hidden = (
            cv2.morphologyEx(
                cv2.morphologyEx(m.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 5))),
                cv2.MORPH_OPEN, np.ones((3, 3)),
            )
            for m in (changed, hidden)
        )  # fmt: skip
        share = float(hidden.mean())
        if self._moved_at is None or self._moved_at.shape != raw.shape:
            self._moved_at = np.full(raw.shape, -np.inf, np.float32)
        self._moved_at[opened > 0] = time_s  # not single pixels along ink (resampling)
        recent = self._moved_at >= time_s - RECENT_S
        arm = _hand_mask(hidden, valid, HAND_SHARE * h * w, recent)
        if share > WHOLE_VIEW_SHARE:
            arm[:] = False
        self._last = img
        # Something new at the frame's edge (a hand coming in, however small yet) is taken in
        # only as a hand at rest is.
        absorb_after = ABSORB_HAND_S if arm.any() or at_edge else ABSORB_S
        if still_s >= absorb_after or (share > WHOLE_VIEW_SHARE and not moving):
            self._absorb(img, self._still_since)
            arm[:] = False
        return Touch(bool(arm.any()), moving, still_s, changed.astype(bool), arm, img, matched)

    def _absorb(self, img: npt.NDArray[np.int16], still_since: float) -> None:
        """Take ``img`` as the reference (and the last frame)."""
        self._reference, self._last = img, img
        self._ref_cards = _places(self._cards, img.shape[:2])
        self._ref_to_now = np.eye(3)
        self._still_since = still_since


def _change_beyond(
    img: npt.NDArray[np.int16], reference: npt.NDArray[np.int16]
) -> npt.NDArray[np.int16]:
    """(h, w) how far each pixel lies outside the range of the reference's 3 x 3 neighbourhood
    (the largest of its channels): a strong edge of the table (a plank's seam) that the
    camera's move estimate misplaces by a pixel is no change; a hand is."""
    kernel = np.ones((3, 3), np.uint8)
    low = cv2.erode(reference, kernel)
    high = cv2.dilate(reference, kernel)
    return np.maximum(low - img, img - high).clip(0).max(axis=2)


def _places(quads: npt.NDArray[np.float32], shape: tuple[int, ...]) -> npt.NDArray[np.uint8]:
    """(h, w) uint8 mask, 1 on the (n, 4, 2) ``quads`` grown by the texture window's reach
    (:data:`TEXTURE_WINDOW`, which sees that far past a card's edge) and a pixel more."""
    mask = np.zeros(shape[:2], np.uint8)
    if len(quads):
        cv2.fillPoly(mask, list(np.round(quads).astype(np.int32)), 1)
        mask = cv2.dilate(mask, np.ones((TEXTURE_WINDOW + 2,) * 2, np.uint8))
    return mask


def _texture(
    img: npt.NDArray[np.int16],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(std, contrast): two (h, w) float32 maps of ``img``'s grey over a
    :data:`TEXTURE_WINDOW` window, its standard deviation (levels) and that over its mean."""
    grey = img.mean(axis=2, dtype=np.float32)
    size = (TEXTURE_WINDOW, TEXTURE_WINDOW)
    mean = cv2.boxFilter(grey, -1, size)
    std = np.sqrt(np.maximum(cv2.boxFilter(grey * grey, -1, size) - mean * mean, 0.0))
    return std, std / np.maximum(mean, 1.0)


def _texture_lost(
    now: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    reference: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
) -> npt.NDArray[np.bool_]:
    """(h, w) bool: where the reference showed texture (:data:`TEXTURE_LEVELS`) and ``now``
    keeps less than :data:`TEXTURE_KEPT` of its contrast (both from :func:`_texture`)."""
    return (reference[0] >= TEXTURE_LEVELS) & (now[1] < TEXTURE_KEPT * reference[1])


def _gain_matched(
    reference: npt.NDArray[np.int16], img: npt.NDArray[np.int16], valid: npt.NDArray[np.uint8]
) -> npt.NDArray[np.int16]:
    """``reference`` scaled to ``img``'s brightness (a camera's auto exposure): the median of
    the pixels' own ratios, every 4th pixel (a median of ratios, so cards put down or a hand
    over part of the picture do not move it; a ratio of medians did when 12 cards were dealt).
    """
    seen = (valid[::4, ::4] > 0) & (reference[::4, ::4].min(axis=2) > 8)
    if not seen.any():
        return reference
    ratios = img[::4, ::4][seen].astype(np.float32) / reference[::4, ::4][seen]
    gain = float(np.median(ratios))
    if abs(gain - 1.0) < 0.03:
        return reference
    return np.round(reference * gain).astype(np.int16)


def _hand_mask(
    changed: npt.NDArray[np.uint8],
    valid: npt.NDArray[np.uint8],
    least: float,
    recent: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """The changed patches of ``least`` pixels or more that touch the picture's edge (or the
    edge of the part the reference saw) and moved lately (``recent``): a hand comes in from
    outside the picture and moves; cards put down near the edge, or a table that fills the
    picture, touch it too but lie still once the hand has gone. (h, w) bool."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
    big = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= least]
    if not big:
        return np.zeros(changed.shape, bool)
    edge = np.zeros_like(changed)
    b = ARM_EDGE_PX
    edge[:b], edge[-b:], edge[:, :b], edge[:, -b:] = 1, 1, 1, 1
    touching = set(np.unique(labels[(edge > 0) & (changed > 0)]).tolist())
    near = 2  # the pixel left out along the edge of what the reference saw, and one more
    unseen = cv2.dilate((valid == 0).astype(np.uint8), np.ones((2 * near + 1,) * 2))
    at_unseen = set(np.unique(labels[(unseen > 0) & (changed > 0)]).tolist())
    moved = set(np.unique(labels[recent & (changed > 0)]).tolist())
    arms = (touching | at_unseen) & moved & set(big)
    return np.isin(labels, sorted(arms))
