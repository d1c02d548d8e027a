"""A ``setvision live`` run: frames from a source through the tracker (:func:`vision.live.follow`)
to what the user asked for: an annotated video, JSON lines, a view, photos saved on request.

Nothing a user had is overwritten, and nothing written is lost on the way out: the video is
written to a hidden file beside its name and moved into place when the run ends, however it
ends (the video's end, quit, Ctrl-C, a stream that drops), so it always plays.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import SetVisionError
from vision.live import LiveFrame, follow, live_json
from vision.live_view import Controls, View
from vision.overlay import draw_table
from vision.table import Table
from vision.track import LiveTable
from vision.video_source import FrameSource

__all__ = ["LiveSummary", "VideoOut", "draw_live", "run_live", "video_fourcc"]

#: Containers an annotated video can be written in, and the codec each gets from the codecs
#: every OpenCV build has (MPEG-4 part 2 for MP4, Motion JPEG for AVI).
VIDEO_CODECS: Final = {".mp4": "mp4v", ".m4v": "mp4v", ".mov": "mp4v", ".avi": "MJPG"}
#: Colour of the frame drawn round the picture while a hand is over the table (BGR orange).
HAND_COLOUR: Final = (0, 140, 255)


def video_fourcc(path: Path) -> int:
    """The codec for an annotated video named ``path``.

    Raises:
        SetVisionError: for an extension that is not one of :data:`VIDEO_CODECS`.
    """
    codec = VIDEO_CODECS.get(path.suffix.lower())
    if codec is None:
        raise SetVisionError(
            f"{path}: cannot write a video named {path.suffix or 'without an extension'}; "
            f"use one of {', '.join(VIDEO_CODECS)}"
        )
    return cv2.VideoWriter_fourcc(*codec)


class VideoOut:
    """An annotated video written to a hidden file and moved into place by :meth:`finish`.

    Args:
        path: the video's name.
        fps: frames per second; size: (width, height) pixels.
        force: replace a file already there.

    Raises:
        SetVisionError: if ``path`` exists (without ``force``), is a folder, its folder does not
            exist, or the codec cannot be opened.
    """

    def __init__(self, path: Path, fps: float, size: tuple[int, int], *, force: bool) -> None:
        check_video_path(path, force=force)
        self.path = path
        self._temp = path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")
        self._writer = cv2.VideoWriter(str(self._temp), video_fourcc(path), fps, size)
        if not self._writer.isOpened():
            self._writer.release()
            with contextlib.suppress(OSError):
                self._temp.unlink()
            raise SetVisionError(f"{path}: could not write a video there (codec or permissions)")
        self.frames = 0
        self._done: Path | None | bool = False

    def write(self, image: npt.NDArray[np.uint8]) -> None:
        self._writer.write(image)
        self.frames += 1

    def finish(self) -> Path | None:
        """Close the video and move it into place (None: no frame was written, no file);
        again: the same answer, nothing more done."""
        if self._done is not False:
            return self._done  # type: ignore[return-value]
        self._done = None
        self._writer.release()
        if self.frames == 0:
            with contextlib.suppress(OSError):
                self._temp.unlink()
            return None
        os.replace(self._temp, self.path)
        self._done = self.path
        return self.path


def check_video_path(path: Path, *, force: bool) -> None:
    """Refuse an annotated video's name before anything runs (see :class:`VideoOut`)."""
    if path.is_dir():
        raise SetVisionError(f"{path}: is a folder; give the video's file name")
    video_fourcc(path)
    if path.exists() and not force:
        raise SetVisionError(f"{path}: exists; not overwritten (use --force to replace it)")
    if not path.parent.exists():
        raise SetVisionError(f"{path.parent}: no such folder for the video")


@dataclass(frozen=True)
class LiveSummary:
    """How a run went.

    Attributes:
        frames: frames processed; dropped: frames a live source skipped.
        seconds: wall-clock time of the run.
        ended: why it stopped: ``"end"`` (the video or folder ended), ``"quit"``.
        last: what was shown on the last frame (None: no frame).
        video: the annotated video written, or None.
        saved: photos saved on request.
    """

    frames: int
    dropped: int
    seconds: float
    ended: str
    last: LiveTable | None
    video: Path | None
    saved: tuple[Path, ...]


def draw_live(image: npt.NDArray[np.uint8], table: LiveTable) -> npt.NDArray[np.uint8]:
    """An annotated copy of a frame: each card seen on it outlined and labelled with its track
    id (a card under a hand, or lifted, is not drawn), each SET in its colour, the legend, and an
    orange frame round the picture while a hand is over the table. ``image``: (H, W, 3) uint8
    BGR (not modified)."""
    h, w = image.shape[:2]
    cards = [c for c in table.cards if c.seen]
    n = len(cards)
    position = {c.id: i for i, c in enumerate(cards)}
    as_table = Table(
        width=w,
        height=h,
        cards=tuple(c.card for c in cards),
        corners=np.array([c.corners for c in cards], np.float32).reshape(n, 4, 2),
        scores=np.ones(n, np.float32),
        partial=np.zeros(n, bool),
        confidences=np.array([c.confidence for c in cards], np.float32),
        probabilities=np.zeros((n, 4, 3), np.float32),
        model_probabilities=np.zeros((n, 4, 3), np.float32),
        uncertain=np.array([c.uncertain for c in cards], bool),
        duplicates=np.zeros(n, bool),
        sets=tuple(tuple(position[i] for i in s) for s in table.sets),  # type: ignore[misc]
    )
    out = draw_table(image, as_table, numbers=[c.id for c in cards],
                     no_set_advice=not table.hand)  # fmt: skip
    if table.hand:
        edge = max(2, round(max(h, w) / 300))
        cv2.rectangle(out, (0, 0), (w - 1, h - 1), HAND_COLOUR, edge)
    return out


def run_live(
    source: FrameSource,
    classifier: Any,
    *,
    video: VideoOut | None = None,
    json_out: IO[str] | None = None,
    view: View | None = None,
    controls: Controls | None = None,
    save_dir: Path | None = None,
    on_change: Callable[[LiveFrame], None] | None = None,
    on_saved: Callable[[Path], None] | None = None,
    on_frame: Callable[[LiveFrame], None] | None = None,
    decorate: Callable[[npt.NDArray[np.uint8], LiveFrame], None] | None = None,
    max_frames: int | None = None,
    **options: Any,
) -> LiveSummary:
    """Follow ``source`` to its end (or a quit) and write what was asked.

    Args:
        source: the frames (:func:`vision.video_source.open_source`).
        classifier: a :class:`vision.classify.Classifier`.
        video: annotated video to write every frame to.
        json_out: a text stream for one :func:`vision.live.live_json` line per frame (flushed
            each line).
        view: where to show the annotated frames; controls: the view's buttons and keys.
        save_dir: where ``s`` saves the frame (``live-FRAME.jpg`` and its annotated copy
            ``live-FRAME.sets.jpg``; never over a file); default the current folder.
        on_change: called with a frame whose shown cards or SETs differ from the last frame's.
        on_saved: called with each photo saved.
        on_frame: called with every frame, before it is drawn (the referee).
        decorate: draws more on each annotated frame (image, frame), in place.
        max_frames: stop after this many frames.
        **options: passed to :func:`vision.live.follow` (``mixed_decks``, ``uncertain_below``).

    The video is finished (playable) however the run ends; a ``KeyboardInterrupt``, a broken
    pipe or a source that drops is raised again after that.
    """
    controls = controls or Controls()
    saved: list[Path] = []
    frames = 0
    last: LiveTable | None = None
    shown_key: tuple[Any, ...] | None = None
    ended = "end"
    last_index = -1
    start = time.perf_counter()
    try:
        for live in follow(source.frames(), classifier, realtime=source.live, **options):
            frames += 1
            last = live.table
            if on_frame is not None:
                on_frame(live)
            annotated = draw_live(live.image, live.table) if video or view else None
            if decorate is not None and annotated is not None:
                decorate(annotated, live)
            if video is not None and annotated is not None:
                # A camera's frames skipped to keep up are filled with this one, so the video
                # keeps the camera's pace (it played fast before).
                for _ in range(max(1, live.index - last_index) if source.live else 1):
                    video.write(annotated)
            last_index = live.index
            state = live_json(live)
            if json_out is not None:
                json_out.write(json.dumps(state, separators=(",", ":")) + "\n")
                json_out.flush()
            key = (tuple((c.id, c.card) for c in live.table.cards), live.table.sets)
            if on_change is not None and key != shown_key and not live.table.hand:
                on_change(live)
                shown_key = key
            if view is not None and annotated is not None:
                view.show(annotated, state)
            while True:
                if controls.save:
                    controls.save = False
                    for path in _save(live, annotated, save_dir or Path(".")):
                        saved.append(path)
                        if on_saved is not None:
                            on_saved(path)
                if not controls.paused or controls.quit:
                    break
                (view or View()).wait(0.05)
            if controls.quit:
                ended = "quit"
                break
            if max_frames is not None and frames >= max_frames:
                ended = "quit"
                break
    finally:
        written = video.finish() if video is not None else None
        if view is not None:
            view.close()
        source.close()
    return LiveSummary(frames, source.dropped, time.perf_counter() - start, ended, last,
                       written, tuple(saved))  # fmt: skip


def _save(live: LiveFrame, annotated: npt.NDArray[np.uint8] | None, folder: Path) -> list[Path]:
    """Save the frame (and its annotated copy) as photos in ``folder``, never over a file."""
    stem = f"live-{live.index:06d}"
    k = 1
    while (folder / f"{stem}.jpg").exists() or (folder / f"{stem}.sets.jpg").exists():
        k += 1
        stem = f"live-{live.index:06d}-{k}"
    out = []
    pictures = [(".jpg", live.image)] + (
        [(".sets.jpg", annotated)] if annotated is not None else []
    )
    for suffix, image in pictures:
        path = folder / f"{stem}{suffix}"
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        if not ok:
            raise SetVisionError(f"{path}: could not encode the frame")
        with open(path, "xb") as f:  # x: never over a file that appeared meanwhile
            f.write(data.tobytes())
        out.append(path)
    return out
