"""The live overlay's frame loop: frames in, what to show on each out.

Every frame: the camera's move (:mod:`vision.motion`), whether a hand is over the table
(:mod:`vision.touch`), and the tracker (:mod:`vision.track`). The detector and classifier
(:func:`vision.pipeline.recognise`) run on a worker thread on one frame at a time, a *read*,
started every :data:`READ_EVERY_S`; its result is carried to the frame where it arrives by the
camera's move since. onnxruntime and OpenCV release the GIL, so on two cores the read and the
frame loop run side by side.

Two ways to wait for a read:

- a video file or a folder of frames (``realtime=False``): each read is taken exactly
  :data:`READ_EVERY_S` of video after it was started, waiting for it if need be, so a run gives
  the same output every time, however busy the machine;
- a camera or a stream (``realtime=True``): a read is taken on the first frame after it is
  done, so the picture never waits for the detector.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.motion import MotionTracker, small_grey
from vision.settings import UNCERTAIN_BELOW
from vision.touch import Touch, TouchDetector
from vision.track import CardTracker, LiveTable, Read

__all__ = ["READ_EVERY_S", "LiveFrame", "SourceFrame", "follow", "live_json"]

#: Seconds of video between the starts of two reads (5 a second): a card put down is shown
#: within about two reads of the table settling, and a read at 720p (~100 ms on one core of a
#: 2-core machine) leaves the other core to the frame loop.
READ_EVERY_S: Final = 0.2


@dataclass(frozen=True)
class SourceFrame:
    """A frame from a source.

    Attributes:
        index: frame number from 0 (frames a live source dropped are skipped, not renumbered).
        time_s: seconds from the start (a file's own timestamps; a camera's capture clock).
        image: (H, W, 3) uint8 BGR.
    """

    index: int
    time_s: float
    image: npt.NDArray[np.uint8]


@dataclass(frozen=True)
class LiveFrame:
    """One frame and what to show on it.

    Attributes:
        index, time_s, image: as in :class:`SourceFrame` (``image`` not drawn on).
        table: the cards, SETs and hand of this frame.
        touch: the touch detector's view of this frame.
        read: a read of the detector and classifier arrived on this frame.
    """

    index: int
    time_s: float
    image: npt.NDArray[np.uint8]
    table: LiveTable
    touch: Touch
    read: bool


@dataclass
class _Pending:
    future: Future[Any]
    time_s: float
    grey: npt.NDArray[np.uint8]
    settled: bool
    since: npt.NDArray[np.float64]  # read frame -> current frame, full-frame pixels
    hand: bool = False


def follow(
    frames: Iterable[SourceFrame],
    classifier: Any,
    *,
    realtime: bool = False,
    mixed_decks: bool = False,
    uncertain_below: float = UNCERTAIN_BELOW,
    detector: Any = None,
    read_every_s: float = READ_EVERY_S,
) -> Iterator[LiveFrame]:
    """Follow a table through frames (see the module docstring).

    Args:
        frames: the frames, in order, all the same size.
        classifier: a :class:`vision.classify.Classifier`.
        realtime: take reads when they are done (a camera) rather than after a fixed stretch of
            video (a file: the same output every run).
        mixed_decks, uncertain_below: as for :func:`vision.pipeline.recognise`.
        detector: frame -> detections (default :func:`vision.detect.find_cards`).
        read_every_s: seconds of video between the starts of two reads.

    Yields:
        One :class:`LiveFrame` per frame.

    Raises:
        ValueError: a frame that is not (H, W, 3) uint8, or not the size of the first.
    """
    from vision.pipeline import recognise

    def read(image: npt.NDArray[np.uint8]) -> tuple[np.ndarray, np.ndarray]:
        table = recognise(
            image, classifier, detector=detector, mixed_decks=mixed_decks,
            uncertain_below=uncertain_below,
        )  # fmt: skip
        return table.corners, table.probabilities

    motion: MotionTracker | None = None
    touch = TouchDetector()
    tracker: CardTracker | None = None
    pending: _Pending | None = None
    table: LiveTable | None = None
    size: tuple[int, ...] | None = None
    with ThreadPoolExecutor(1, thread_name_prefix="setvision-read") as pool:
        try:
            # A file or folder is looked at one frame ahead, so its last frame waits for the
            # read in flight (a video shorter than a read's time, a single photo, is still
            # read); a camera is not: that would delay every frame by one.
            upcoming = iter(frames)
            ahead = next(upcoming, None)
            while ahead is not None:
                frame = ahead
                ahead = None if realtime else next(upcoming, None)
                last = not realtime and ahead is None
                image = frame.image
                if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
                    raise ValueError(
                        f"frame {frame.index}: expected (H, W, 3) uint8 BGR, got "
                        f"{image.shape} {image.dtype}"
                    )
                if size is None:
                    size = image.shape
                    motion = MotionTracker((image.shape[1], image.shape[0]))
                    tracker = CardTracker(
                        motion.scale, mixed_decks=mixed_decks, uncertain_below=uncertain_below,
                        temperatures=getattr(classifier, "temperatures", None),
                    )  # fmt: skip
                elif image.shape != size:
                    raise ValueError(
                        f"frame {frame.index}: {image.shape[1]} x {image.shape[0]} px, the "
                        f"video started at {size[1]} x {size[0]}"
                    )
                assert motion is not None and tracker is not None
                small = small_grey(image, colour=True)
                grey = small_grey(small)
                moved = motion.update(grey)
                known = [c.corners for c in table.cards] if table is not None else []
                seen = touch.update(small, motion.to_small(moved.homography), frame.time_s,
                                    np.asarray(known, np.float32) / motion.scale)  # fmt: skip
                arrived = None
                if pending is not None:
                    pending.since = moved.homography @ pending.since
                elif last:  # a one-frame video: read it now
                    still = not (seen.hand or seen.moving)
                    pending = _Pending(pool.submit(read, image), frame.time_s, grey,
                                       settled=still, since=np.eye(3), hand=seen.hand)  # fmt: skip
                if pending is not None:
                    due = frame.time_s - pending.time_s >= read_every_s - 1e-6
                    if pending.future.done() if realtime else (due or last):
                        arrived = _arrived(pending, pending.future.result())
                        pending = None
                table = tracker.step(
                    grey,
                    moved.homography,
                    seen.hand,
                    frame.time_s,
                    arrived,
                    arm=seen.arm,
                    touch=seen,
                )
                if pending is None and not last and not math.isnan(frame.time_s):
                    pending = _Pending(
                        pool.submit(read, image), frame.time_s, grey,
                        settled=not (seen.hand or seen.moving), since=np.eye(3), hand=seen.hand,
                    )  # fmt: skip
                yield LiveFrame(frame.index, frame.time_s, image, table, seen, arrived is not None)
                if realtime:
                    ahead = next(upcoming, None)
        finally:
            if pending is not None:
                pending.future.cancel()


def _arrived(pending: _Pending, result: tuple[np.ndarray, np.ndarray]) -> Read:
    corners, probabilities = result
    corners = np.asarray(corners, np.float32).reshape(-1, 4, 2)
    carried = (
        cv2.perspectiveTransform(corners.reshape(-1, 1, 2).astype(np.float64), pending.since)
        .reshape(-1, 4, 2)
        .astype(np.float32)
        if len(corners)
        else corners
    )
    return Read(carried, np.asarray(probabilities, np.float32), pending.grey, corners,
                pending.settled, pending.hand)  # fmt: skip


def live_json(frame: LiveFrame) -> dict[str, Any]:
    """The ``setvision live --json`` object for one frame.

    Shape: ``{"frame": i, "time_s": t, "cards": [{"id", "count", "colour", "shape", "fill",
    "label", "confidence", "corners": [[x, y] x 4]}], "sets": [[id, id, id], ...], "hand":
    bool}``: ``id`` the card's track id, ``corners`` frame pixels TL, TR, BR, BL, ``sets`` the
    SETs drawn on the frame (among the cards seen on it).
    """
    cards = [
        {
            "id": c.id,
            "count": c.card.count.value,
            "colour": c.card.colour.value,
            "shape": c.card.shape.value,
            "fill": c.card.fill.value,
            "label": c.card.label,
            # Rounded down, as shown: a card under a threshold never reads as reaching it.
            "confidence": math.floor(c.confidence * 1e4) / 1e4,
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in c.corners],
        }
        for c in frame.table.cards
    ]
    return {
        "frame": frame.index,
        "time_s": round(frame.time_s, 3),
        "cards": cards,
        "sets": [list(s) for s in frame.table.sets],
        "hand": frame.table.hand,
    }
