"""Where live frames come from: a camera, a video file, a stream URL or a folder of frames.

:func:`open_source` tells them apart by the text a user gives (``0``, ``game.mp4``,
``http://phone:8080/video``, ``frames/``) and returns a :class:`FrameSource`. A camera or a
stream is read on its own thread that keeps only the newest frame, so a slow consumer skips
frames rather than falls behind (the picture never lags); a file or a folder gives every frame.
Every failure a user can meet is a :class:`~vision.errors.SetVisionError` with one line.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import SetVisionError
from vision.io import decoder_messages, list_images, load_image
from vision.live import SourceFrame
from vision.settings import MAX_PIXELS

__all__ = ["DEFAULT_FPS", "FrameSource", "open_source"]

#: Frame rate assumed for a folder of frames, or a video or camera that does not say its own.
DEFAULT_FPS: Final = 30.0
#: Seconds a camera or stream may give no frame before it is said to have dropped (a phone's
#: stream stalls for a second or two on a busy Wi-Fi; a camera unplugged stops at once).
STALL_S: Final = 5.0
#: Seconds to wait for a camera's or stream's first frame (a USB camera takes 1-2 s to start).
FIRST_FRAME_S: Final = 10.0


class FrameSource:
    """Frames from one source.

    Attributes:
        name: the source as the user gave it.
        fps: frames per second (the source's own, or :data:`DEFAULT_FPS`).
        size: (width, height) pixels of every frame.
        live: frames come in real time (a camera or a stream), and are skipped when the
            consumer is slow; False: every frame of a file or folder, in order.
        dropped: frames skipped so far (live sources).
    """

    name: str
    fps: float
    size: tuple[int, int]
    live: bool = False
    dropped: int = 0

    def frames(self) -> Iterator[SourceFrame]:
        """The frames, in order, until the source ends (a file's end)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let the device or file go (idempotent)."""


def open_source(spec: str, *, fps: float | None = None) -> FrameSource:
    """Open what ``spec`` names: a camera index (``0``), a stream URL (``rtsp://``,
    ``http://``, ...), a folder of frames, or a video file.

    Args:
        spec: the source as the user gave it.
        fps: frames per second of a folder of frames (default :data:`DEFAULT_FPS`), or of a
            source that does not say its own.

    Raises:
        SetVisionError: a camera that cannot be opened, a URL that does not answer, a file that
            is not a video OpenCV can read, a folder with no frame in it.
        FileNotFoundError: a file or folder that does not exist.
    """
    if fps is not None and not (math.isfinite(fps) and fps > 0):
        raise SetVisionError(f"--fps: expected a number above 0, got {fps}")
    text = spec.strip()
    if text.isdigit():
        return _LiveCapture(text, int(text), fps)
    if "://" in text:
        return _LiveCapture(text, text, fps)
    path = Path(text)
    if path.is_dir():
        return _Folder(path, fps or DEFAULT_FPS)
    if not path.exists():
        raise FileNotFoundError(f"{text}: no such file, folder or camera")
    return _VideoFile(path, fps)


def _check_frame(image: npt.NDArray[np.uint8] | None) -> bool:
    return image is not None and image.ndim == 3 and image.shape[2] == 3 and image.size > 0


class _VideoFile(FrameSource):
    def __init__(self, path: Path, fps: float | None) -> None:
        self.name = str(path)
        with decoder_messages():  # FFmpeg's own complaints: the one line below says it
            self._cap = cv2.VideoCapture(str(path))
            ok, first = self._cap.read() if self._cap.isOpened() else (False, None)
        if not ok or not _check_frame(first):
            self._cap.release()
            raise SetVisionError(f"{path}: not a video OpenCV can read (or it has no frames)")
        own = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
        # --fps only for a video that does not say its own rate
        self.fps = own if math.isfinite(own) and 0 < own <= 1000 else (fps or DEFAULT_FPS)
        self.size = (first.shape[1], first.shape[0])
        if first.shape[0] * first.shape[1] > MAX_PIXELS:
            self._cap.release()
            raise SetVisionError(f"{path}: frames of {self.size[0]} x {self.size[1]} px are "
                                 f"more than {MAX_PIXELS // 1_000_000} MP")  # fmt: skip
        self._first: npt.NDArray[np.uint8] | None = first

    def frames(self) -> Iterator[SourceFrame]:
        index = 0
        while True:
            if self._first is not None:
                image, self._first = self._first, None
            else:
                ok, image = self._cap.read()
                if not ok:
                    return  # the video ended (or its tail is damaged: it ends there)
            yield SourceFrame(index, index / self.fps, image)
            index += 1

    def close(self) -> None:
        self._cap.release()


class _Folder(FrameSource):
    def __init__(self, folder: Path, fps: float) -> None:
        self.name = str(folder)
        self.fps = fps
        self._paths = list_images(folder)
        if not self._paths:
            raise SetVisionError(f"{folder}: no frames (images) in this folder")
        first = load_image(self._paths[0])
        self.size = (first.shape[1], first.shape[0])

    def frames(self) -> Iterator[SourceFrame]:
        for index, path in enumerate(self._paths):
            image = load_image(path)
            if (image.shape[1], image.shape[0]) != self.size:
                raise SetVisionError(
                    f"{path}: {image.shape[1]} x {image.shape[0]} px, but the folder's first "
                    f"frame is {self.size[0]} x {self.size[1]}; frames of a video are one size"
                )
            yield SourceFrame(index, index / self.fps, image)


class _LiveCapture(FrameSource):
    """A camera or stream, read on a thread that keeps the newest frame only."""

    live = True

    def __init__(self, name: str, device: int | str, fps: float | None) -> None:
        self.name = name
        what = f"camera {device}" if isinstance(device, int) else f"stream {device}"
        with decoder_messages():  # OpenCV's and FFmpeg's warnings: the one line below says it
            self._cap = cv2.VideoCapture(device)
        if not self._cap.isOpened():
            self._cap.release()
            hint = "no camera found, or another program uses it" if isinstance(device, int) else (
                "it does not answer, or OpenCV cannot read its format")  # fmt: skip
            raise SetVisionError(f"{what}: could not be opened ({hint})")
        self._what = what
        own = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = fps or (own if math.isfinite(own) and 0 < own <= 1000 else DEFAULT_FPS)
        self._lock = threading.Condition()
        self._latest: tuple[int, float, npt.NDArray[np.uint8]] | None = None
        self._taken = -1
        self._ended: str | None = None
        self._stop = False
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="setvision-capture", daemon=True)
        self._thread.start()
        with self._lock:
            self._lock.wait_for(lambda: self._latest is not None or self._ended is not None,
                                timeout=FIRST_FRAME_S)  # fmt: skip
            if self._latest is None:
                self.close()
                raise SetVisionError(self._ended or f"{what}: no frame in {FIRST_FRAME_S:.0f} s")
            image = self._latest[2]
        self.size = (image.shape[1], image.shape[0])

    def _run(self) -> None:
        index = 0
        last_ok = time.monotonic()
        while not self._stop:
            ok, image = self._cap.read()
            now = time.monotonic()
            if ok and _check_frame(image):
                last_ok = now
                with self._lock:
                    self._latest = (index, now - self._start, image)
                    self._lock.notify_all()
                index += 1
            elif now - last_ok > STALL_S:
                with self._lock:
                    self._ended = f"{self._what}: no frame for {STALL_S:.0f} s (it dropped)"
                    self._lock.notify_all()
                return
            else:
                time.sleep(0.01)

    def frames(self) -> Iterator[SourceFrame]:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._ended is not None or (
                    self._latest is not None and self._latest[0] > self._taken))  # fmt: skip
                if self._latest is not None and self._latest[0] > self._taken:
                    index, t, image = self._latest
                    self.dropped += index - self._taken - 1
                    self._taken = index
                else:
                    raise SetVisionError(self._ended or f"{self._what}: ended")
            yield SourceFrame(index, t, image)

    def close(self) -> None:
        self._stop = True
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        self._cap.release()
