#!/usr/bin/env python3
"""Speed of ``setvision live``, headless, as the issue measures it:

* a video file, end to end (decode, tracking, reads, overlay, JSON lines, the annotated video
  encoded): frames processed per second, the median of ``--repeats`` runs, at 720p and 1080p;
* a camera: frames come in real time at 30 a second from a thread (a recorded game played at its
  own pace, as a camera delivers them); the latency from a frame's capture to its overlay being
  ready (median and 95th percentile) and the share of frames skipped to keep up.

The videos are rendered game videos (``vision.render_video.game_script``: a deal, takes, adds),
written once to a temporary folder.

Usage::

    .venv/bin/python scripts/benchmark_live.py [--repeats 3] [--takes 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from script_args import at_least  # noqa: E402

from vision.classify import CardClassifier  # noqa: E402
from vision.live import SourceFrame  # noqa: E402
from vision.live_session import VideoOut, run_live  # noqa: E402
from vision.live_view import View  # noqa: E402
from vision.render_video import GameVideo, game_script  # noqa: E402
from vision.video_source import FrameSource, open_source  # noqa: E402

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080)}


def render(path: Path, size: tuple[int, int], takes: int, seed: int = 5) -> int:
    """Write a rendered game video of ``size`` at 30 fps to ``path``; its frame count."""
    rng = np.random.default_rng(seed)
    video = GameVideo(game_script(rng, takes=takes, wrong_claims=1), rng, size=size,
                      tilt_deg=20, background="cloth")  # fmt: skip
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30.0, size)
    n = 0
    for frame in video.frames():
        writer.write(frame.image)
        n += 1
    writer.release()
    return n


def file_speed(path: Path, classifier: Any, out_dir: Path) -> float:
    """Frames per second of one headless run over the video file, end to end."""
    source = open_source(str(path))
    out = VideoOut(out_dir / f"out-{path.stem}.mp4", source.fps, source.size, force=True)
    with open(os.devnull, "w") as devnull:
        summary = run_live(source, classifier, video=out, json_out=devnull)
    return summary.frames / summary.seconds


class PacedSource(FrameSource):
    """Frames of a video delivered in real time from a thread, the newest only, as a camera
    does (:class:`vision.video_source` reads a camera the same way)."""

    live = True

    def __init__(self, frames: list[np.ndarray], fps: float) -> None:
        self.name, self.fps = "paced", fps
        self.size = (frames[0].shape[1], frames[0].shape[0])
        self._frames = frames
        self._latest: tuple[int, float, np.ndarray] | None = None
        self._cond = threading.Condition()
        self._done = False
        self.captured: dict[int, float] = {}
        self.start = time.monotonic()
        threading.Thread(target=self._play, daemon=True).start()

    def _play(self) -> None:
        for i, image in enumerate(self._frames):
            due = self.start + i / self.fps
            time.sleep(max(0.0, due - time.monotonic()))
            with self._cond:
                self.captured[i] = time.monotonic()
                self._latest = (i, self.captured[i] - self.start, image)
                self._cond.notify_all()
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def frames(self) -> Iterator[SourceFrame]:
        taken = -1
        while True:
            with self._cond:
                self._cond.wait_for(lambda last=taken: self._done or (
                    self._latest is not None and self._latest[0] > last))  # fmt: skip
                if self._latest is None or self._latest[0] <= taken:
                    return
                i, t, image = self._latest
            self.dropped += i - taken - 1
            taken = i
            yield SourceFrame(i, t, image)


class _Clock(View):
    """A view that notes when each frame's overlay is ready."""

    def __init__(self, source: PacedSource) -> None:
        self.source = source
        self.latency: list[float] = []

    def show(self, image: np.ndarray, state: dict[str, Any]) -> None:
        self.latency.append(time.monotonic() - self.source.captured[state["frame"]])


def camera_latency(path: Path, classifier: Any) -> tuple[float, float, float]:
    """(median, p95) seconds from capture to overlay, and the share of frames skipped."""
    cap = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, image = cap.read()
        if not ok:
            break
        frames.append(image)
    source = PacedSource(frames, 30.0)
    clock = _Clock(source)
    run_live(source, classifier, view=clock)
    lat = np.array(clock.latency)
    return float(np.median(lat)), float(np.percentile(lat, 95)), source.dropped / len(frames)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=at_least(1), default=3)
    parser.add_argument("--takes", type=at_least(1), default=2, help="SETs taken in the game.")
    args = parser.parse_args(argv)
    classifier = CardClassifier()
    print(f"{os.cpu_count()} cores; {args.repeats} runs each, median")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, size in SIZES.items():
            path = folder / f"game-{name}.mp4"
            n = render(path, size, args.takes)
            rates = [file_speed(path, classifier, folder) for _ in range(args.repeats)]
            print(f"{name} video file, {n} frames: {statistics.median(rates):.1f} frames/s "
                  f"(runs: {', '.join(f'{r:.1f}' for r in rates)})", flush=True)  # fmt: skip
        median, p95, skipped = camera_latency(folder / "game-720p.mp4", classifier)
        print(
            f"720p camera at 30 fps: latency capture -> overlay median {median * 1000:.0f} ms, "
            f"p95 {p95 * 1000:.0f} ms; {100 * skipped:.1f}% of frames skipped to keep up"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
