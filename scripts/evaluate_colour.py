"""Does table-level colour help? Held-out real crops, grouped into tables, under shared light.

The shared crops carry no photo id, so "tables" are made of held-out real crops of one source
(``models/card_classifier_holdout.txt``, never trained on): 12 distinct cards each, seeded. Every
table then goes through one lighting condition applied to all its cards *before* the per-card
white balance (as a real photo would), chosen to reproduce the failure modes users report:

* ``neutral``: as photographed;
* ``warm``: tungsten light through a camera's colour matrix (channel crosstalk, not a pure
  diagonal cast, so white balance cannot fully undo it) and a gamma change;
* ``dim``: a quarter of the light, sensor noise and 8-bit quantisation, then brightened back;
* ``cast``: a strong green-magenta cast with desaturation (webcam auto-white-balance gone wrong).

Reported per source and condition: colour accuracy of the model alone and after table-level
colour (:func:`vision.colour.table_colour`), and cards fully right: model alone, with the deck
decoding only, and with both (the pipeline).

Usage::

    nice .venv/bin/python scripts/evaluate_colour.py [--tables 60] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.cards import Card, parse_card  # noqa: E402
from vision.colour import table_colour  # noqa: E402
from vision.data import shared_datasets  # noqa: E402
from vision.decode import decode_table  # noqa: E402
from vision.warp import white_balance  # noqa: E402

# Camera colour matrix under tungsten light, BGR rows (crosstalk: red leaks into green, etc.).
_WARM = np.array([[0.45, 0.10, 0.02], [0.08, 0.78, 0.18], [0.00, 0.22, 1.00]], np.float32)
_CAST = np.array([[0.80, 0.20, 0.10], [0.15, 1.00, 0.15], [0.10, 0.25, 0.75]], np.float32)


def light(crops: np.ndarray, condition: str, rng: np.random.Generator) -> np.ndarray:
    """Apply one lighting condition to a table's (N, H, W, 3) uint8 BGR crops, then balance."""
    x = crops.astype(np.float32) / 255.0
    if condition == "warm":
        x = np.clip(x @ _WARM.T, 0, 1) ** 1.25
    elif condition == "dim":
        x = x * 0.25 + rng.normal(0, 0.012, x.shape).astype(np.float32)
        x = np.round(np.clip(x, 0, 1) * 255) / 255 * 3.5
    elif condition == "cast":
        grey = x.mean(axis=3, keepdims=True)
        x = np.clip((0.6 * x + 0.4 * grey) @ _CAST.T, 0, 1)
    out = np.clip(x * 255, 0, 255).astype(np.uint8)
    return white_balance(out)


def load_holdout(root: Path) -> dict[str, list[tuple[np.ndarray, Card]]]:
    from vision.classify import crop_single_card

    held = {
        line.strip()
        for line in (ROOT / "models" / "card_classifier_holdout.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    out: dict[str, list[tuple[np.ndarray, Card]]] = defaultdict(list)
    with open(root / "crops.csv", newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            if r["path"] in held:
                image = cv2.imread(str(root / r["path"]))
                if image is None:
                    continue
                card = parse_card(f"{r['count']} {r['colour']} {r['shape']} {r['fill']}")
                out[r["source"]].append((crop_single_card(image), card))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=60, help="tables per source and condition")
    parser.add_argument("--size", type=int, default=12, help="cards per table")
    parser.add_argument("--model", default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from vision.classify import CardClassifier

    classifier = CardClassifier(args.model)
    root = shared_datasets()
    assert root is not None
    data = load_holdout(root)
    report: dict[str, dict[str, dict[str, float]]] = {}
    print(f"{'source':<18} {'light':<8} {'cards':>6} {'model':>7} {'+table':>7} {'card':>7} "
          f"{'+deck':>7} {'+both':>7}")  # fmt: skip
    for source, items in sorted(data.items()):
        for condition in ("neutral", "warm", "dim", "cast"):
            rng = np.random.default_rng(0)
            n = ok_model = ok_table = card_model = card_deck = card_full = 0
            for _ in range(args.tables):
                # Distinct cards: a table from one deck.
                order = rng.permutation(len(items))
                seen: set[Card] = set()
                pick = []
                for i in order:
                    if items[i][1] not in seen:
                        seen.add(items[i][1])
                        pick.append(i)
                    if len(pick) == args.size:
                        break
                crops = light(np.stack([items[i][0] for i in pick]), condition, rng)
                truth = [items[i][1] for i in pick]
                probs = classifier.predict(crops)
                fused, _, _ = table_colour(crops, probs.colour)
                true_colour = np.array([c.positions[1] for c in truth])
                ok_model += int((probs.colour.argmax(1) == true_colour).sum())
                ok_table += int((fused.argmax(1) == true_colour).sum())
                plain = [
                    Card.from_positions(tuple(int(x) for x in row)) for row in probs.positions()
                ]
                decoded = decode_table((probs.count, fused, probs.shape, probs.fill))
                deck = decode_table((probs.count, probs.colour, probs.shape, probs.fill))
                card_model += sum(p == t for p, t in zip(plain, truth))
                card_deck += sum(p == t for p, t in zip(deck.cards, truth))
                card_full += sum(p == t for p, t in zip(decoded.cards, truth))
                n += len(truth)
            row = {
                "cards": n,
                "colour_model": ok_model / n,
                "colour_table": ok_table / n,
                "card_model": card_model / n,
                "card_deck": card_deck / n,
                "card_full": card_full / n,
            }
            report.setdefault(source, {})[condition] = row
            print(
                f"{source:<18} {condition:<8} {n:>6} {row['colour_model']:>7.2%} "
                f"{row['colour_table']:>7.2%} {row['card_model']:>7.2%} {row['card_deck']:>7.2%} "
                f"{row['card_full']:>7.2%}"
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
