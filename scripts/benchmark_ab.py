#!/usr/bin/env python3
"""Interleaved A/B timing of find_cards + warp_cards in two checkouts, on one core.

On a shared machine the load drifts by tens of percent within a minute, so two versions timed
one after the other are not comparable. This runs the same frames through checkout A and
checkout B in alternating subprocesses (A B B A A B ...), each frame ``--repeat`` times after a
warm-up, and reports the medians of wall-clock and CPU time per stage over all runs.

Frames are shared table photos (the same choice as ``scripts/benchmark_detection.py``: seed 0)
resized to the pixel count of each named size; they are written once to a temporary folder.

    python scripts/benchmark_ab.py /path/to/old/checkout .            # 1080p and 12MP
    python scripts/benchmark_ab.py OLD NEW --sizes 1080p --rounds 8 --photos 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080), "12MP": (4032, 3024)}

# Run in each checkout (its root first on sys.path): times every frame of one size.
WORKER = """
import json, sys, time
import cv2, numpy as np
root, folder, size, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, root)
cv2.setNumThreads(1)
from pathlib import Path
from vision.detect import find_cards
from vision.warp import warp_cards
frames = [np.load(p) for p in sorted(Path(folder).glob(size + "_*.npy"))]
out = {k: [] for k in ("detect", "warp", "total", "detect_cpu", "warp_cpu", "cpu")}
for frame in frames:
    warp_cards(frame, find_cards(frame).corners)
for _ in range(repeat):
    for frame in frames:
        w0, c0 = time.perf_counter(), time.process_time()
        found = find_cards(frame)
        w1, c1 = time.perf_counter(), time.process_time()
        warp_cards(frame, found.corners)
        w2, c2 = time.perf_counter(), time.process_time()
        for key, value in (("detect", w1 - w0), ("warp", w2 - w1), ("total", w2 - w0),
                           ("detect_cpu", c1 - c0), ("warp_cpu", c2 - c1), ("cpu", c2 - c0)):
            out[key].append(value * 1e3)
print(json.dumps(out))
"""


def write_frames(folder: Path, photos: int, sizes: list[str]) -> None:
    from vision.data import read_csv, shared_datasets
    from vision.io import load_image

    root = shared_datasets()
    assert root is not None
    rows = [r for r in read_csv("tables.csv") if r["labels"] != "negative"]
    rng = np.random.default_rng(0)
    chosen = [rows[i] for i in rng.choice(len(rows), size=min(photos, len(rows)), replace=False)]
    for j, row in enumerate(chosen):
        photo = load_image(root / row["path"])
        for name in sizes:
            w, h = SIZES[name]
            scale = np.sqrt(w * h / (photo.shape[0] * photo.shape[1]))
            size = (round(photo.shape[1] * scale), round(photo.shape[0] * scale))
            interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
            np.save(folder / f"{name}_{j:03d}.npy", cv2.resize(photo, size, interpolation=interp))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a", type=Path, help="checkout A (repository root)")
    parser.add_argument("b", type=Path, help="checkout B (repository root)")
    parser.add_argument("--sizes", default="1080p,12MP", help="comma-separated: 720p,1080p,12MP")
    parser.add_argument("--photos", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4, help="A/B pairs per size")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per frame per round")
    args = parser.parse_args(argv)
    sizes = args.sizes.split(",")
    roots = {"A": str(args.a.resolve()), "B": str(args.b.resolve())}
    with tempfile.TemporaryDirectory() as tmp:
        write_frames(Path(tmp), args.photos, sizes)
        for size in sizes:
            runs: dict[str, dict[str, list[float]]] = {"A": {}, "B": {}}
            for r in range(args.rounds):
                for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
                    done = subprocess.run(
                        [sys.executable, "-c", WORKER, roots[name], tmp, size, str(args.repeat)],
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    for key, values in json.loads(done.stdout).items():
                        runs[name].setdefault(key, []).extend(values)
            print(f"{size}: medians in ms over {len(runs['A']['total'])} runs each")
            for key in runs["A"]:
                a, b = float(np.median(runs["A"][key])), float(np.median(runs["B"][key]))
                print(f"  {key:<11} A {a:7.1f}   B {b:7.1f}   ({(b - a) / a * 100:+.0f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
