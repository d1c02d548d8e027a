"""Cards followed from frame to frame: each physical card keeps an id while it stays on the
table, its corners follow the camera's move, its reading is fused over the reads, and the SETs
shown change only when the table does.

Two things feed the tracker:

- every frame: the camera's move (:mod:`vision.motion`), whether a hand is over the table
  (:mod:`vision.touch`) and the frame's grey copy, on which each card is checked against a small
  picture of itself (its *template*): a card covered by a hand, or lifted, no longer looks like
  itself;
- now and then: a :class:`Read` (the detector and classifier run on one earlier frame, its cards
  carried to this frame by the camera's move since).

Rules (what a user of the overlay expects):

- a card is shown once it is still: a card read on a frame with no hand and no motion that
  still looks the same when the read arrives (a card in a hand is never read as on the table);
- its reading is the mean of the log-probabilities of its last :data:`READS_KEPT` reads taken
  with no hand in view, decoded across the table with the one-deck constraint: one bad frame
  does not flip a card, and a changed reading must be decoded twice before it is shown;
- a card a hand covers keeps its id, and its SETs are not drawn while it cannot be seen (a
  card being taken is never part of a SET drawn);
- a card is dropped when a read with no hand in view does not find it and it no longer looks
  like itself (a card the detector missed once but still there stays).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import Card
from vision.decode import decode_table
from vision.lifted import edge_step, shows_table
from vision.rules import find_sets
from vision.settings import UNCERTAIN_BELOW
from vision.touch import Touch

__all__ = ["READS_KEPT", "CardTracker", "LiveTable", "Read", "TrackedCard"]

#: Reads fused per card (the last ones with no hand in view): at 5 reads a second, 2 s.
READS_KEPT: Final = 10
#: Least normalised correlation of a card's picture with its template for it to be "seen":
#: measured on rendered game videos, a card in view correlates 0.8-0.99 with itself under
#: drift and noise, and under 0.4 with a hand over it or the table where it lay.
SEEN_CORRELATION: Final = 0.6
#: Template size (width, height) in px: a card's picture on the grey copy, a little larger than
#: the card so its edge is in it (:data:`TEMPLATE_MARGIN` of its size on each side).
TEMPLATE_SIZE: Final = (24, 36)
TEMPLATE_MARGIN: Final = 0.08
#: Gaussian softening of a template, its pixels (:func:`_template`).
TEMPLATE_BLUR: Final = 1.0
#: A read's card matches a track when their centres are closer than this share of the card's
#: width (cards on a table are at least about a card's width apart, centre to centre).
MATCH_SHARE: Final = 0.5
#: Corners moved by less than this (px) in a read are smoothed, not jumped: no jitter.
STEADY_PX: Final = 1.0
STEADY_BLEND: Final = 0.5
#: A card whose area changes by more than this factor between still reads was found as a
#: piece before (the detector split it once): its earlier readings are forgotten.
RESHAPED: Final = 1.4
#: Probability floor when taking logs (a read saying 0 does not veto a card for ever).
PROB_FLOOR: Final = 1e-4
#: A card that has not been seen (template) for this long with no hand in view is dropped (a
#: settled read that does not find it drops it at once).
UNSEEN_DROP_S: Final = 0.6
#: A card not seen for this long while no hand or arm lies over it (a hand in view elsewhere)
#: is dropped: lifted, as the hand goes back with a SET (6 frames at 30 fps, so one frame's
#: glare or blur does not drop a card).
BARE_DROP_S: Final = 0.2
#: A card surely read (probability of its reading at least OTHER_CARD_SURE) as another card
#: than the one shown on this many still reads in a row is another card: one bad read does
#: not make it so (one-frame misreads are rarely sure, and never twice in a row on the
#: rendered games).
OTHER_CARD_READS: Final = 2
OTHER_CARD_SURE: Final = 0.8
#: Still reads that miss a card, and outnumber those that found it, before it is taken for a
#: false find (the detector's half of a card, read once, still looks like itself): 0.6 s.
FALSE_FIND_MISSES: Final = 3
#: Seconds a card that left is remembered: put back where it lay, looking the same, it keeps
#: its id (a wrong claim: three cards lifted, shown, put back).
REMEMBER_S: Final = 30.0
#: Pixels (of the arm mask) by which the arm is widened when asking whether it covers a card:
#: a hand's shadow and the fingers' edge.
ARM_MARGIN_PX: Final = 4
#: A card not seen while the arm lies over part of it is still there (covered, not lifted) when
#: the part the arm leaves in view still correlates with its template as a card seen does
#: (SEEN_CORRELATION); below, the part in view shows the table where it lay (lifted). Told only
#: when at least VISIBLE_SHARE of the template is out from under the arm and that part holds
#: at least VISIBLE_STRUCTURE of the template's variance; else :mod:`vision.lifted` looks at
#: its place (the change stopping at its outline, the table's colours).
VISIBLE_SHARE: Final = 0.3
VISIBLE_STRUCTURE: Final = 0.15
#: A card not seen as a whole is still there, part of it covered, when the cells of its picture
#: (rows, columns of the template) that correlate with its template this well hold
#: KEPT_STRUCTURE of its variance (:func:`_kept`). A card lifted leaves none.
KEPT_CELLS: Final = (3, 2)
KEPT_CORRELATION: Final = 0.8
KEPT_STRUCTURE: Final = 0.3
#: A read taken while a hand was in view moves a card's corners only by less than this share of
#: its width (a pushed card); more is a card merged with a hand.
UNSETTLED_MOVE_SHARE: Final = 0.25


@dataclass(frozen=True)
class Read:
    """The detector and classifier's result on one frame, carried to the current one.

    Attributes:
        corners: (N, 4, 2) float32 current-frame pixels, TL, TR, BR, BL (portrait).
        probabilities: (N, 4, 3) float32 per-attribute probabilities (count, colour, shape,
            fill; enum order), as :attr:`vision.table.Table.probabilities`.
        grey: (h, w) uint8 grey copy of the frame read (:func:`vision.motion.small_grey`).
        read_corners: (N, 4, 2) float32 the same corners in the frame read, full-frame pixels.
        settled: the frame read had no hand in view and no motion.
        hand: the frame read had a hand in view (a read of a moving camera with no hand may
            move cards as far as it finds them: only a hand can merge with a card).
    """

    corners: npt.NDArray[np.float32]
    probabilities: npt.NDArray[np.float32]
    grey: npt.NDArray[np.uint8]
    read_corners: npt.NDArray[np.float32]
    settled: bool
    hand: bool = False


@dataclass(frozen=True)
class TrackedCard:
    """A card shown on one frame.

    Attributes:
        id: track id (from 0, never reused in a run).
        card: the fused reading.
        confidence: its probability, 0..1 (decoded over the table).
        uncertain: confidence under the threshold.
        corners: (4, 2) float32 frame pixels, TL, TR, BR, BL.
        seen: the card looks like itself on this frame (not covered, not lifted).
    """

    id: int
    card: Card
    confidence: float
    uncertain: bool
    corners: npt.NDArray[np.float32]
    seen: bool


@dataclass(frozen=True)
class LiveTable:
    """What is shown on one frame.

    Attributes:
        cards: the cards on the table, by id.
        sets: the SETs drawn, as sorted id triples, among cards seen on this frame.
        hand: a hand or arm is over the table.
    """

    cards: tuple[TrackedCard, ...]
    sets: tuple[tuple[int, int, int], ...]
    hand: bool


@dataclass
class _Track:
    id: int
    corners: npt.NDArray[np.float32]
    template: npt.NDArray[np.float32]
    logs: deque[npt.NDArray[np.float32]] = field(default_factory=lambda: deque(maxlen=READS_KEPT))
    confirmed: bool = False
    shown: Card | None = None
    pending: Card | None = None
    confidence: float = 0.0
    uncertain: bool = True
    seen: bool = True
    unseen_since: float | None = None
    bare_since: float | None = None
    hits: int = 0  # settled reads that found it
    disagree: int = 0  # still reads in a row surely read as another card
    misses: int = 0  # settled reads that did not


class CardTracker:
    """Follows the cards of a table over a video's frames (see the module docstring).

    Args:
        scale: full-frame pixels per pixel of the grey copies given (``W / WORK_WIDTH``).
        mixed_decks: several decks are mixed: decode without the one-deck constraint.
        uncertain_below: confidence under which a card is flagged uncertain.
        temperatures: the classifier's calibration (:attr:`vision.classify.CardClassifier.
            temperatures`), so a card's confidence means what the photo command's does.
    """

    def __init__(
        self,
        scale: float,
        *,
        mixed_decks: bool = False,
        uncertain_below: float = UNCERTAIN_BELOW,
        temperatures: tuple[float, ...] | None = None,
    ) -> None:
        self.scale = float(scale)
        self.mixed_decks = mixed_decks
        self.uncertain_below = uncertain_below
        self.temperatures = temperatures
        self._tracks: list[_Track] = []
        self._next_id = 0
        self._left: list[tuple[float, _Track]] = []  # (when, track) of cards that left
        self._sets: tuple[tuple[int, int, int], ...] = ()

    def step(
        self,
        grey: npt.NDArray[np.uint8],
        move: npt.NDArray[np.float64],
        hand: bool,
        time_s: float,
        read: Read | None = None,
        arm: npt.NDArray[np.bool_] | None = None,
        touch: Touch | None = None,
    ) -> LiveTable:
        """Advance to the next frame.

        Args:
            grey: (h, w) uint8 grey copy of this frame.
            move: (3, 3) homography, previous frame -> this frame, full-frame pixels.
            hand: a hand is over the table on this frame (:class:`vision.touch.Touch`).
            time_s: this frame's time, seconds.
            read: a read that arrived for this frame, its corners carried to it, or None.
            arm: (h, w) bool, where the hand and arm are (:attr:`vision.touch.Touch.arm`, on a
                copy of the frame ``W / w`` times smaller), or None.
            touch: the touch detector's view of this frame (what changed since the table was
                last still, and colours: whether a card under the hand was lifted), or None.
        """
        wide = None
        if arm is not None and arm.any():
            wide = cv2.dilate(arm.astype(np.uint8), np.ones((2 * ARM_MARGIN_PX + 1,) * 2))
        for track in self._tracks:
            track.corners = _moved(track.corners, move)
            now = _template(grey, track.corners / self.scale)  # its picture on this frame
            track.seen = _alike(now, track.template)
            # Part of it covered by something not taken for a hand (an arm of the table's
            # colour shows only where it crosses the cards), the rest as it was: still there.
            kept = not track.seen and _kept(now, track.template)
            if track.seen or hand or kept:  # counted from when no hand is in view
                track.unseen_since = None
            elif track.unseen_since is None:
                track.unseen_since = time_s
            if track.seen or kept or self._under_arm(grey, now, track, wide, touch):
                track.bare_since = None
            elif track.bare_since is None:
                track.bare_since = time_s
        if read is not None:
            self._apply(read, grey, hand)
        keep = []
        for track in self._tracks:
            if not self._gone(track, hand, time_s):
                keep.append(track)
            elif track.confirmed:  # remembered: a card put back (a wrong claim) is the same
                self._left.append((time_s, track))
        self._tracks = keep
        self._left = [(t, k) for t, k in self._left if time_s - t <= REMEMBER_S]
        if read is not None:
            self._decode()
        shown = [t for t in self._tracks if t.confirmed and t.shown is not None]
        visible = [t for t in shown if t.seen]
        sets = tuple(
            tuple(sorted((visible[i].id, visible[j].id, visible[k].id)))
            for i, j, k in find_sets([t.shown for t in visible])  # type: ignore[misc]
        )
        self._sets = tuple(sorted(sets))  # type: ignore[arg-type]
        cards = tuple(
            TrackedCard(t.id, t.shown, t.confidence, t.uncertain, t.corners.copy(), t.seen)  # type: ignore[arg-type]
            for t in sorted(shown, key=lambda t: t.id)
        )
        return LiveTable(cards, self._sets, hand)

    # -- reads ------------------------------------------------------------------------------

    def _apply(self, read: Read, grey: npt.NDArray[np.uint8], hand: bool) -> None:
        """Match a read's cards to the tracks; new cards start tracks, the rest are refreshed."""
        matched: set[int] = set()
        free = _not_inside(read.corners)
        for track in sorted(self._tracks, key=lambda t: not t.confirmed):
            if not free:
                break
            if read.settled and not hand and not track.seen:
                continue  # no longer looks like itself on a still table: another card now
            centre = track.corners.mean(axis=0)
            width = _card_width(track.corners)
            dists = [float(np.linalg.norm(read.corners[i].mean(axis=0) - centre)) for i in free]
            best = int(np.argmin(dists))
            if dists[best] > MATCH_SHARE * width:
                continue
            i = free.pop(best)
            matched.add(track.id)
            self._refresh(track, read, i, grey, hand)
        if read.settled and not hand:
            for i in free:
                if any(_overlaps(read.corners[i], t.corners) for t in self._tracks):
                    continue  # a second find of a card followed already (half of it)
                template = _template(read.grey, read.read_corners[i] / self.scale)
                track = self._returned(read.corners[i], template, read.probabilities[i])
                if track is None:
                    track = _Track(self._next_id, read.corners[i].copy(), template)
                    self._next_id += 1
                track.corners, track.template = read.corners[i].copy(), template
                track.unseen_since = track.bare_since = None
                track.logs.append(_logs(read.probabilities[i]))
                track.hits += 1
                track.seen = _alike(_template(grey, track.corners / self.scale), template)
                track.confirmed = track.seen
                self._tracks.append(track)
        for track in self._tracks:
            if track.id in matched or not read.settled or hand:
                continue
            # Read once and not found again (a passing false find), not found and no longer
            # looking like itself with no hand in view (taken), or missed by more still reads
            # than found it (a false find that keeps looking like itself: half a card): gone.
            track.misses += 1
            false_find = track.misses >= FALSE_FIND_MISSES and track.misses > track.hits
            # or a piece of a card that this read found whole (the detector split it once)
            false_find |= any(_overlaps(track.corners, t.corners) for t in self._tracks
                              if t.id in matched)  # fmt: skip
            if not track.confirmed or not track.seen or false_find:
                track.unseen_since = -np.inf

    def _returned(
        self,
        corners: npt.NDArray[np.float32],
        template: npt.NDArray[np.float32],
        probabilities: npt.NDArray[np.float32],
    ) -> _Track | None:
        """A card that left lately and is back where it lay, read as the same card (lifted in
        a wrong claim and put back): its track, taken off the list of cards that left. (A card
        dealt into the place of one taken looks much alike at template size: the reading
        tells them apart.)"""
        read_as = Card.from_positions([int(v) for v in np.argmax(probabilities, axis=1)])
        for k, (_, track) in enumerate(self._left):
            near = np.linalg.norm(corners.mean(axis=0) - track.corners.mean(axis=0))
            if (
                track.shown == read_as
                and near <= MATCH_SHARE * _card_width(track.corners)
                and _alike(template, track.template)
            ):
                del self._left[k]
                return track
        return None

    def _refresh(
        self, track: _Track, read: Read, i: int, grey: npt.NDArray[np.uint8], hand: bool
    ) -> None:
        new = read.corners[i]
        moved = float(np.abs(new - track.corners).max())
        grown = abs(cv2.contourArea(new)) / max(abs(cv2.contourArea(track.corners)), 1.0)
        if read.settled and not hand and not 1 / RESHAPED < grown < RESHAPED:
            track.logs.clear()  # its earlier reads were of a piece of the card, not the card
            track.shown = track.pending = None
        if moved < STEADY_PX:
            track.corners = (1 - STEADY_BLEND) * track.corners + STEADY_BLEND * new
        elif (read.settled or not read.hand
              or moved < UNSETTLED_MOVE_SHARE * _card_width(track.corners)):  # fmt: skip
            track.corners = new.copy()
        if read.settled and not hand:
            track.hits += 1
            probs = read.probabilities[i]
            read_as = Card.from_positions([int(v) for v in np.argmax(probs, axis=1)])
            sure = float(np.prod(np.max(probs, axis=1))) >= OTHER_CARD_SURE
            # judged against its own reads (not the table's decoding, which may give it another
            # identity than its reads' best, for one deck)
            # its reads before the disagreeing ones in a row began
            before = list(track.logs)[: len(track.logs) - track.disagree]
            own = (Card.from_positions([int(v) for v in np.argmax(np.mean(np.stack(before),
                   axis=0), axis=1)]) if before else None)  # fmt: skip
            track.disagree = track.disagree + 1 if (
                own is not None and read_as != own and sure) else 0  # fmt: skip
            if track.disagree >= OTHER_CARD_READS:
                # Read surely as another card on still reads in a row: another card lies
                # there now (the camera turned to another table, a card swapped without a
                # hand seen). A new card, a new id; not the old id with a new reading.
                track.id, self._next_id = self._next_id, self._next_id + 1
                track.logs.clear()
                track.shown = track.pending = None
                track.disagree = 0
            track.logs.append(_logs(probs))
            track.template = _template(read.grey, read.read_corners[i] / self.scale)
            track.seen = self._looks_alike(grey, track)
            if track.seen:
                track.unseen_since = None
            track.confirmed = track.confirmed or track.seen

    def _gone(self, track: _Track, hand: bool, time_s: float) -> bool:
        """A track to drop: not seen for a while with no hand in view or none over it (a taken
        card), or a first find that the next read did not repeat."""
        if track.bare_since is not None and time_s - track.bare_since >= BARE_DROP_S:
            return True
        if track.unseen_since is None or hand:
            return False
        return time_s - track.unseen_since >= (UNSEEN_DROP_S if track.confirmed else 0.0)

    def _decode(self) -> None:
        """Decode the confirmed tracks' fused readings together (one deck: each card once)."""
        tracks = [t for t in self._tracks if t.confirmed and t.logs]
        if not tracks:
            return
        mean = np.stack([np.mean(np.stack(t.logs), axis=0) for t in tracks])  # (N, 4, 3)
        probs = np.exp(mean - mean.max(axis=2, keepdims=True))
        probs = (probs / probs.sum(axis=2, keepdims=True)).astype(np.float32)
        decoded = decode_table(
            tuple(probs[:, a] for a in range(4)),
            mixed_decks=self.mixed_decks,
            uncertain_below=self.uncertain_below,
            temperatures=self.temperatures,
        )
        for k, track in enumerate(tracks):
            card = decoded.cards[k]
            if track.shown is None or card == track.shown or card == track.pending:
                track.shown, track.pending = card, None
            else:  # a changed reading: shown when the next decoding says it too
                track.pending = card
                continue
            track.confidence = float(decoded.confidences[k])
            track.uncertain = bool(decoded.uncertain[k])

    # -- looks ------------------------------------------------------------------------------

    def _looks_alike(self, grey: npt.NDArray[np.uint8], track: _Track) -> bool:
        return _alike(_template(grey, track.corners / self.scale), track.template)

    def _under_arm(
        self,
        grey: npt.NDArray[np.uint8],
        now: npt.NDArray[np.float32],
        track: _Track,
        wide: npt.NDArray[np.uint8] | None,
        touch: Touch | None,
    ) -> bool:
        """Whether a card not seen (``now``: its picture on this frame, :func:`_template`) is
        still there under the arm (``wide``, the widened arm mask): what the arm leaves in view
        still looks like it, or too little is in view to tell, unless its place was laid bare:
        what changed stops at its outline (:func:`vision.lifted.edge_step`), or shows the
        table's colours (:func:`vision.lifted.shows_table`)."""
        if wide is None:
            return False
        f = wide.shape[1] / (grey.shape[1] * self.scale)
        if not wide[_box(track.corners * f, wide)].any():
            return False
        visible = ~_on_template(wide, track.corners, f)
        if visible.mean() >= VISIBLE_SHARE:
            t = track.template[visible]
            if float(((t - t.mean()) ** 2).sum()) >= VISIBLE_STRUCTURE * float(
                (track.template**2).sum()
            ):
                return _correlation(t, now[visible]) >= SEEN_CORRELATION
        if touch is None or touch.colour is None or touch.table is None:
            return True  # too little in view to tell: covered
        g = touch.changed.shape[1] / (grey.shape[1] * self.scale)
        others = [t.corners * g for t in self._tracks if t is not track]
        quad = track.corners * g
        if edge_step(quad, touch.changed):
            return False
        return not shows_table(quad, others, touch.colour, touch.table, touch.changed,
                               touch.arm)  # fmt: skip

def _kept(now: npt.NDArray[np.float32], template: npt.NDArray[np.float32]) -> bool:
    """Whether a card not seen as a whole is still there with part of it covered: the cells of
    its picture ``now`` (:data:`KEPT_CELLS`) that still look like its ``template`` hold
    :data:`KEPT_STRUCTURE` of its structure (the template's variance). Something over part of a
    card, a hand of whatever colour or a still arm taken into the picture, leaves the other
    cells as they were; a card lifted leaves none: the table shows where its ink and edges
    were, even on a table of its own white."""
    rows, cols = KEPT_CELLS
    h, w = now.shape
    kept = total = 0.0
    for r in range(rows):
        for c in range(cols):
            cell = (slice(r * h // rows, (r + 1) * h // rows),
                    slice(c * w // cols, (c + 1) * w // cols))  # fmt: skip
            t = template[cell]
            energy = float(((t - t.mean()) ** 2).sum())
            total += energy
            if _correlation(t, now[cell]) >= KEPT_CORRELATION:
                kept += energy
    return total > 1e-9 and kept >= KEPT_STRUCTURE * total


def _correlation(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    """Normalised correlation of two pictures of the same shape (0 when either is flat)."""
    a, b = a - a.mean(), b - b.mean()
    norm = float(np.sqrt(float((a * a).sum()) * float((b * b).sum())))
    return float((a * b).sum()) / norm if norm > 1e-9 else 0.0


def _inside(point: npt.NDArray[np.float32], quad: npt.NDArray[np.float32]) -> bool:
    return cv2.pointPolygonTest(quad.reshape(-1, 1, 2), (float(point[0]), float(point[1])),
                                False) > 0  # fmt: skip


def _overlaps(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> bool:
    """Whether one card's centre lies inside the other (more than about half of one covers
    the other: a card that far under another cannot be read, so two such finds are one)."""
    return _inside(a.mean(axis=0), b) or _inside(b.mean(axis=0), a)


def _not_inside(quads: npt.NDArray[np.float32]) -> list[int]:
    """Indices of a read's cards, less each whose centre lies inside a larger one (the
    detector's half of a card beside the whole)."""
    areas = [abs(cv2.contourArea(q)) for q in quads]
    return [i for i, q in enumerate(quads)
            if not any(areas[j] > areas[i] and _inside(q.mean(axis=0), quads[j])
                       for j in range(len(quads)) if j != i)]  # fmt: skip


def _moved(
    corners: npt.NDArray[np.float32], move: npt.NDArray[np.float64]
) -> npt.NDArray[np.float32]:
    pts = cv2.perspectiveTransform(corners.reshape(-1, 1, 2).astype(np.float64), move)
    return pts.reshape(4, 2).astype(np.float32)


def _card_width(corners: npt.NDArray[np.float32]) -> float:
    return (
        float(np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[3])) / 2
    )


def _logs(probabilities: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.log(np.clip(np.asarray(probabilities, np.float32), PROB_FLOOR, 1.0))


def _box(quad: npt.NDArray[np.float32], mask: npt.NDArray[np.uint8]) -> tuple[slice, slice]:
    """The rows and columns of ``mask`` that the bounding box of ``quad`` (mask px) spans."""
    h, w = mask.shape
    x0, y0 = np.clip(np.floor(quad.min(axis=0)).astype(int), 0, [w, h])
    x1, y1 = np.clip(np.ceil(quad.max(axis=0)).astype(int) + 1, 0, [w, h])
    return slice(y0, y1), slice(x0, x1)


def _on_template(
    mask: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32], f: float
) -> npt.NDArray[np.bool_]:
    """(h, w) of :data:`TEMPLATE_SIZE`: where ``mask`` (``f`` mask px per full-frame px) lies
    over the template of the card at ``corners`` (full-frame px); off the mask counts as on."""
    w, h = TEMPLATE_SIZE
    hom = _template_hom(corners * f)
    return cv2.warpPerspective(mask, hom, (w, h), flags=cv2.INTER_NEAREST, borderValue=1) > 0


def _template_hom(corners: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """(3, 3) homography from the grey copy's px to the template of the card at ``corners``."""
    w, h = TEMPLATE_SIZE
    centre = corners.mean(axis=0)
    outer = centre + (corners - centre) * (1 + 2 * TEMPLATE_MARGIN)
    target = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    return cv2.getPerspectiveTransform(outer.astype(np.float32), target)


def _template(
    grey: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """(h, w) float32 zero-mean unit-norm picture of the card at ``corners`` (px of ``grey``),
    with a margin (:data:`TEMPLATE_MARGIN`) around it."""
    w, h = TEMPLATE_SIZE
    hom = _template_hom(corners)
    patch = cv2.warpPerspective(grey, hom, (w, h), flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_REPLICATE).astype(np.float32)  # fmt: skip
    # Softened, so a card followed a few pixels off (between reads) still looks like itself:
    # thin outlines (open symbols) decorrelate at a one-pixel shift of the template.
    patch = cv2.GaussianBlur(patch, (0, 0), TEMPLATE_BLUR)
    patch -= patch.mean()
    norm = float(np.linalg.norm(patch))
    return patch / norm if norm > 1e-6 else patch


def _alike(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> bool:
    return float((a * b).sum()) >= SEEN_CORRELATION
