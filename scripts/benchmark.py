"""Milliseconds per photo by stage for ``setvision photo``, and photos per second with a pool.

Photos: a rendered 12-card table (:func:`vision.render.render_table`, seeded) at 720p, 1080p and
12 MP, plus real shared photos grouped by size (``../shared/datasets``: ~2 MP re-encoded photos
and the full-resolution 12-16 MP ones). Every photo is written to a temporary JPEG first, so
``load`` includes decoding, as for a user. One core: OpenCV and onnxruntime are limited to one
thread. Each photo is run ``--repeats`` times after one warm-up; the report gives the median and
95th percentile per stage (load, detect, warp, classify, colour, rules, draw), end to end (wall
clock) and the process's CPU time per photo (``cpu``: with one thread, the single-core cost even
when other work shares the machine and stretches the wall clock).

Usage::

    nice .venv/bin/python scripts/benchmark.py [--repeats 5] [--jobs 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from script_args import at_least  # noqa: E402

from vision.cards import full_deck  # noqa: E402
from vision.data import shared_datasets  # noqa: E402

STAGES = ("load", "detect", "warp", "classify", "colour", "rules", "draw")
SIZES = {"720p": (1280, 720), "1080p": (1920, 1080), "12MP": (4000, 3000)}


def rendered_photos(folder: Path, seed: int = 7) -> dict[str, list[Path]]:
    """The same 12-card table rendered at each size, written as JPEG."""
    from vision.render import render_table

    rng = np.random.default_rng(seed)
    deck = full_deck()
    cards = [deck[i] for i in rng.choice(81, 12, replace=False)]
    out = {}
    for name, size in SIZES.items():
        frame, _ = render_table(cards, np.random.default_rng(seed), size=size)
        path = folder / f"rendered-{name}.jpg"
        cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
        out[f"rendered {name}"] = [path]
    return out


def real_photos(limit: int) -> dict[str, list[Path]]:
    """Shared table photos: up to ``limit`` ~2 MP ones and every photo of 10 MP or more."""
    root = shared_datasets(required=False)
    if root is None:
        return {}
    with open(root / "tables.csv", newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["labels"] != "negative"]
    big = [r for r in rows if int(r["width"]) * int(r["height"]) >= 10e6]
    mid = [r for r in rows if 1.5e6 <= int(r["width"]) * int(r["height"]) <= 2.5e6]
    step = max(1, len(mid) // max(limit, 1))
    return {
        "real ~2MP": [root / r["path"] for r in mid[::step][:limit]],
        "real 12-16MP": [root / r["path"] for r in big],
    }


def stats(values: list[float]) -> tuple[float, float]:
    return float(np.median(values)), float(np.percentile(values, 95))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=at_least(1), default=5)
    parser.add_argument("--real", type=at_least(0), default=8, help="how many ~2 MP real photos")
    parser.add_argument(
        "--jobs", type=at_least(1), default=2, help="pool size for the throughput run"
    )
    parser.add_argument("--model", default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    cv2.setNumThreads(1)
    from vision.batch import PhotoJob, process_photos
    from vision.classify import CardClassifier
    from vision.errors import SetVisionError
    from vision.pipeline import process_photo

    try:
        classifier = CardClassifier(args.model, threads=1)
    except SetVisionError as error:  # a missing or corrupt --model: one line, not a traceback
        parser.error(f"--model: {error}")
    report: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        groups = rendered_photos(Path(tmp))
        groups.update(real_photos(args.real))
        columns = (*STAGES, "total", "cpu")
        print(f"{'photos':<16} {'n':>3} " + " ".join(f"{s:>12}" for s in columns))
        print(f"{'':<16} {'':>3} " + " ".join(f"{'med / p95':>12}" for _ in columns))
        for name, paths in groups.items():
            if not paths:
                continue
            per_stage: dict[str, list[float]] = {s: [] for s in (*STAGES, "total", "cpu")}
            cards = 0
            for path in paths:
                process_photo(path, classifier)  # warm-up
                for _ in range(args.repeats):
                    start, cpu = time.perf_counter(), time.process_time()
                    done = process_photo(path, classifier)
                    total = (time.perf_counter() - start) * 1000
                    per_stage["cpu"].append((time.process_time() - cpu) * 1000)
                    for stage in STAGES:
                        per_stage[stage].append(done.table.timings_ms.get(stage, 0.0))
                    per_stage["total"].append(total)
                cards += len(done.table)
            report[name] = {k: list(stats(v)) for k, v in per_stage.items()}
            cells = " ".join(
                f"{stats(v)[0]:>5.1f} /{stats(v)[1]:>5.1f}" for v in per_stage.values()
            )
            print(f"{name:<16} {len(paths):>3} {cells}   ({cards / len(paths):.0f} cards/photo)")

        # Throughput with a process pool on ~2 MP real photos (or the rendered 1080p one).
        pool_paths = groups.get("real ~2MP") or groups["rendered 1080p"]
        batch = [
            PhotoJob(p, Path(tmp) / f"out{i}.sets.jpg", overwrite=True)
            for i, p in enumerate(pool_paths * 3)
        ]
        for jobs in sorted({1, args.jobs}):
            start = time.perf_counter()
            outcomes = list(process_photos(batch, model=args.model, jobs_n=jobs))
            seconds = time.perf_counter() - start
            failed = sum(1 for o in outcomes if o.error)
            rate = len(batch) / seconds
            print(
                f"--jobs {jobs}: {len(batch)} photos in {seconds:.1f} s = {rate:.1f} photos/s "
                f"(pool start-up included{f', {failed} failed' if failed else ''})"
            )
            report[f"throughput jobs={jobs}"] = {"photos_per_s": [rate]}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
