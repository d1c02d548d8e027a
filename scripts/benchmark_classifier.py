"""Benchmark the card classifier: milliseconds per card for a batch of 15 crops on one core.

Times :meth:`vision.classify.CardClassifier.predict` end to end (downscale, the ink chroma
normalisation of models that use it, scaling, and onnxruntime) and the onnxruntime call alone,
median and p95 over many repeats, with one intra-op thread, on rendered card crops (random
pixels would skip the ink normalisation, whose cost depends on the crop). Target (issue 4):
<= 1 ms per card.

Usage::

    .venv/bin/python scripts/benchmark_classifier.py [--batch 15] [--repeats 300] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.cards import full_deck  # noqa: E402
from vision.classify import CardClassifier  # noqa: E402
from vision.render_scene import render_training_batch  # noqa: E402


def timed(fn, repeats: int) -> np.ndarray:
    for _ in range(10):
        fn()
    out = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        fn()
        out[i] = time.perf_counter() - t0
    return out * 1000.0


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--batch", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    clf = CardClassifier(args.model, threads=args.threads)
    deck = full_deck()
    cards = [deck[(7 * i) % len(deck)] for i in range(args.batch)]  # every fill and colour
    crops, _ = render_training_batch(cards, seed=0)
    x = clf.input_tensor(crops)
    session = clf._session  # the raw onnxruntime call, without the preprocessing

    total = timed(lambda: clf.predict(crops), args.repeats) / args.batch
    model = timed(lambda: session.run(None, {"crops": x}), args.repeats) / args.batch
    result = {
        "batch": args.batch,
        "threads": args.threads,
        "ms_per_card_predict_median": round(float(np.median(total)), 4),
        "ms_per_card_predict_p95": round(float(np.percentile(total, 95)), 4),
        "ms_per_card_onnx_median": round(float(np.median(model)), 4),
        "ms_per_card_onnx_p95": round(float(np.percentile(model, 95)), 4),
        "model": str(clf.info.onnx_path.name),
        "model_bytes": clf.info.onnx_path.stat().st_size,
    }
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
