#!/usr/bin/env python3
"""Time card detection and warping on one core: median and p95 per frame size.

Frames are real table photos from ``../shared/datasets/tables`` resized (aspect ratio kept) to
the pixel count of 720p (0.9 MP), 1080p (2.1 MP) and 12 MP (4032 x 3024), plus the photos kept
at full camera resolution (``tables/pclewis/resources/crazy.jpg`` at 16 MP, a maormagori photo
at 12 MP).
Decoding is not timed. Each frame is run ``--repeat`` times after one warm-up call; every run
counts. Both wall-clock and process CPU time are reported: on a shared, loaded machine the CPU
time is the fairer number (the load average is printed).

    python scripts/benchmark_detection.py                 # 20 photos, 3 repeats
    python scripts/benchmark_detection.py --photos 40 --json
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated

import cv2
import numpy as np
import typer

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from vision.data import read_csv, shared_datasets  # noqa: E402
from vision.detect import find_cards  # noqa: E402
from vision.io import load_image  # noqa: E402
from vision.warp import warp_cards  # noqa: E402

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080), "12MP": (4032, 3024)}
FULL_RESOLUTION = {
    "tables/pclewis/resources/crazy.jpg",
    "tables/maormagori/photos/20200221_161754.jpg",
}

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def _time(frame: np.ndarray, repeat: int) -> tuple[dict[str, list[float]], int]:
    """Per run (after a warm-up): wall and CPU ms of find_cards + warp_cards together and of
    each alone; and the card count."""
    detections = find_cards(frame)
    warp_cards(frame, detections.corners)
    times: dict[str, list[float]] = {k: [] for k in ("wall", "cpu", "detect", "warp", "detect_cpu")}
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        detections = find_cards(frame)
        w1, c1 = time.perf_counter(), time.process_time()
        warp_cards(frame, detections.corners)
        w2, c2 = time.perf_counter(), time.process_time()
        times["wall"].append((w2 - w0) * 1e3)
        times["cpu"].append((c2 - c0) * 1e3)
        times["detect"].append((w1 - w0) * 1e3)
        times["warp"].append((w2 - w1) * 1e3)
        times["detect_cpu"].append((c1 - c0) * 1e3)
    return times, len(detections)


def _stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values)
    return {"median": float(np.median(a)), "p95": float(np.percentile(a, 95)), "n": len(a)}


@app.command()
def main(
    photos: Annotated[int, typer.Option(help="How many shared photos to resize.")] = 20,
    repeat: Annotated[int, typer.Option(help="Timed runs per frame.")] = 3,
    seed: Annotated[int, typer.Option(help="Photo sample seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Median and p95 of find_cards + warp_cards per frame size, one OpenCV thread."""
    cv2.setNumThreads(1)
    root = shared_datasets()
    assert root is not None
    rows = [r for r in read_csv("tables.csv") if r["labels"] != "negative"]
    rng = np.random.default_rng(seed)
    chosen = [rows[i] for i in rng.choice(len(rows), size=min(photos, len(rows)), replace=False)]
    results: dict[str, dict[str, list[float]]] = {}

    def add(name: str, frame: np.ndarray) -> None:
        times, _ = _time(frame, repeat)
        entry = results.setdefault(name, {k: [] for k in times})
        for key, values in times.items():
            entry[key] += values

    for row in chosen:
        photo = load_image(root / row["path"])
        for name, (w, h) in SIZES.items():
            # Same pixel count as the named frame size, the photo's own aspect ratio kept
            # (stretching a photo would stretch its cards out of shape).
            scale = np.sqrt(w * h / (photo.shape[0] * photo.shape[1]))
            size = (round(photo.shape[1] * scale), round(photo.shape[0] * scale))
            interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
            add(name, cv2.resize(photo, size, interpolation=interp))
    for path in sorted(FULL_RESOLUTION):
        if (root / path).exists():
            photo = load_image(root / path)
            add(f"full {photo.shape[1]}x{photo.shape[0]}", photo)

    report = {
        name: {key: _stats(values) for key, values in entry.items()}
        for name, entry in results.items()
    }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if as_json:
        print(json.dumps({"load_average_1min": load, "results": report}, indent=2))
        return
    print(f"one OpenCV thread; {len(chosen)} photos x {repeat} runs; load average {load:.1f}")
    heads = ["wall med", "wall p95", "cpu med", "cpu p95", "detect med", "warp med", "det cpu"]
    print(f"{'frames':<18}" + "".join(f"{h:>11}" for h in heads))
    for name, entry in report.items():
        print(
            f"{name:<18}{entry['wall']['median']:>11.1f}{entry['wall']['p95']:>11.1f}"
            f"{entry['cpu']['median']:>11.1f}{entry['cpu']['p95']:>11.1f}"
            f"{entry['detect']['median']:>11.1f}{entry['warp']['median']:>11.1f}"
            f"{entry['detect_cpu']['median']:>11.1f}"
        )
    print(
        "(milliseconds per frame: wall and cpu are find_cards + warp_cards; detect and warp are "
        "each alone, wall clock; det cpu is find_cards' CPU time)"
    )


if __name__ == "__main__":
    app()
