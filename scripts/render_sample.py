"""Render the README's sample table photo and its ground truth.

Writes ``datasets/samples/table.jpg`` (a 12-card table seen at an angle on a wood-like surface,
1600 x 1200, under 400 KB, with several SETs) and ``datasets/samples/table.json`` (the cards, their
corners and the SETs, in the same shape as ``setvision photo --json``). Both are drawn by
:mod:`vision.render`; no photo is used. Deterministic: the same seed gives the same files.

Usage::

    .venv/bin/python scripts/render_sample.py [--seed 7] [--out datasets/samples]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.cards import Card, full_deck
from vision.render import CardStyle, render_table
from vision.rules import find_sets

REPO = Path(__file__).resolve().parent.parent
MAX_BYTES = 400_000


def choose_cards(rng: np.random.Generator, n: int = 12, min_sets: int = 4) -> list[Card]:
    """``n`` distinct cards with at least ``min_sets`` SETs among them (and not too many)."""
    deck = full_deck()
    while True:
        cards = [deck[i] for i in rng.choice(len(deck), n, replace=False)]
        if min_sets <= len(find_sets(cards)) <= min_sets + 2:
            return cards


def encode_jpeg(frame: np.ndarray, max_bytes: int = MAX_BYTES) -> bytes:
    """The best JPEG quality (95 down to 60) whose file fits in ``max_bytes``."""
    for quality in range(95, 59, -3):
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok and len(buf) <= max_bytes:
            return buf.tobytes()
    raise RuntimeError(f"cannot fit the sample in {max_bytes} bytes")


def to_json(truth: dict) -> str:
    """Readable JSON: one line per card and per SET."""
    head = {k: v for k, v in truth.items() if k not in ("cards", "sets")}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    cards = [f"    {json.dumps(c)}" for c in truth["cards"]]
    lines += ['  "cards": [', ",\n".join(cards), "  ],"]
    lines += [f'  "sets": {json.dumps(truth["sets"])}', "}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "datasets" / "samples")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    cards = choose_cards(rng)
    frame, corners = render_table(
        cards, rng, background="wood", size=(1600, 1200), layout="grid", tilt=0.35,
        strength=0.3, margin=0.1, style=CardStyle(),  # the standard deck's inks
    )  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    jpeg = encode_jpeg(frame)
    (args.out / "table.jpg").write_bytes(jpeg)
    truth = {
        "image": "table.jpg",
        "width": int(frame.shape[1]),
        "height": int(frame.shape[0]),
        "rendered_by": f"scripts/render_sample.py --seed {args.seed}",
        "cards": [
            {
                "id": i,
                "count": card.count.value,
                "colour": card.colour.value,
                "shape": card.shape.value,
                "fill": card.fill.value,
                "label": card.label,
                "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in quad],
            }
            for i, (card, quad) in enumerate(zip(cards, corners, strict=True))
        ],
        "sets": [list(s) for s in find_sets(cards)],
    }
    (args.out / "table.json").write_text(to_json(truth), encoding="utf-8")
    print(f"{args.out / 'table.jpg'}: {len(jpeg) // 1000} KB, {len(cards)} cards, "
          f"{len(truth['sets'])} SETs")  # fmt: skip


if __name__ == "__main__":
    main()
