"""Compare sets of cross-validation models, alone or averaged, on the data they never saw.

Each ``--models NAME=DIR[,DIR...]`` names a folder of cross-validation models (the
``without-<split>.onnx`` files that ``scripts/eval_classifier.py`` trains, one per crop source
left out and per table fold; see ``eval_classifier.cv_folder``); several folders joined by
commas are read as one ensemble whose logits are averaged. For every entry it prints the cards
wrong (any of the four attributes) on:

* each crop source left out: kaggle-set-cards (all), tomwhite (all), omega697 (verified labels);
* the table folds pooled: every annotated table-photo card of a fold's sources, read by the
  model trained without them;
* the annotated table-photo cards warped from their corners scaled about the centre by
  :data:`FRAMING` (each read by the model that never saw its source), as
  ``eval_classifier.evaluate_framing`` does.

The model card's "Retrained on version-2 crops, two-seed ensembles, ..." table was made with
it. Usage (the folders must exist: train them with eval_classifier.py or train_classifier.py)::

    python scripts/compare_models.py --models s0=/tmp/setvision-cache/cv/v7-zoom-mirror-1500-0 \\
        --models "s0+s1=/tmp/setvision-cache/cv/v7-zoom-mirror-1500-0,/tmp/.../...-1500-1"
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eval_classifier as ec  # noqa: E402
import train_classifier as tc  # noqa: E402

from vision.classify import CROP_VERSION, CardClassifier  # noqa: E402
from vision.errors import SetVisionError  # noqa: E402
from vision.warp import warp_cards  # noqa: E402

#: Scales of the annotated corners about each card's centre (1.0: as annotated).
FRAMING = (1.0, 1.2, 1.3)
#: The cross-validation splits every folder must hold.
SPLITS = tc.SOURCES + tuple(tc.TABLE_FOLDS)


def parse_entry(text: str) -> tuple[str, list[Path]]:
    """``NAME=DIR[,DIR...]`` -> (name, folders).

    Raises:
        ValueError: for a missing name, no folder, or a folder without every split's model.
    """
    name, sep, rest = text.partition("=")
    folders = [Path(p) for p in rest.split(",") if p.strip()]
    if not sep or not name.strip() or not folders:
        raise ValueError(f"expected NAME=DIR[,DIR...], got {text!r}")
    for folder in folders:
        missing = [s for s in SPLITS if not (folder / f"without-{s}.onnx").is_file()]
        if missing:
            raise ValueError(f"{folder}: no model for {', '.join(missing)}")
    return name.strip(), folders


def cards_wrong(logits: np.ndarray, labels: np.ndarray) -> int:
    """Cards with any attribute wrong: ``logits`` (N, 12) float, ``labels`` (N, 4) int
    (value positions per head). Softmax is monotonic, so the arg-max of each head's logits is
    the reading."""
    pred = np.asarray(logits).reshape(len(logits), 4, 3).argmax(axis=-1)
    return int((pred != np.asarray(labels)).any(axis=1).sum())


def averaged(models: list[CardClassifier], crops: np.ndarray, batch: int = 512) -> np.ndarray:
    """(N, 12) float32 logits averaged over ``models`` (one model: its own logits)."""
    out = []
    for i in range(0, len(crops), batch):
        chunk = np.asarray(crops[i : i + batch])
        out.append(np.mean([m.logits(chunk) for m in models], axis=0))
    return np.concatenate(out) if out else np.zeros((0, 12), np.float32)


def measure(folders: list[Path], data: dict, tables: dict, photos: list) -> dict[str, int]:
    """Cards wrong per set (see the module docstring) for the ensemble of ``folders``."""
    models = {
        s: [CardClassifier(f / f"without-{s}.onnx") for f in folders] for s in SPLITS
    }  # fmt: skip
    out: dict[str, int] = {}
    for s, source in enumerate(tc.SOURCES):
        idx = np.flatnonzero(data["source"] == s)
        if source == "omega697":
            idx = idx[~data["noisy"][idx]]
        out[source] = cards_wrong(averaged(models[source], data["crops"][idx]), data["labels"][idx])
    wrong = 0
    for fold, sources in tc.TABLE_FOLDS.items():
        rows = np.flatnonzero(np.isin(tables["source"], sources))
        wrong += cards_wrong(averaged(models[fold], tables["crops"][rows]), tables["labels"][rows])
    out["folds pooled"] = wrong
    split_of = {src: fold for fold, srcs in tc.TABLE_FOLDS.items() for src in srcs}
    for f in FRAMING:
        out[f"quad x{f:g}"] = 0
    for frame, corners, labels, source in photos:
        centre = corners.mean(axis=1, keepdims=True)
        split = split_of.get(source, source)
        for f in FRAMING:
            crops = warp_cards(frame, centre + np.float32(f) * (corners - centre))
            out[f"quad x{f:g}"] += cards_wrong(averaged(models[split], crops), labels)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models", action="append", required=True, metavar="NAME=DIR[,DIR...]",
        help="a folder of cross-validation models, or several averaged (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    try:
        entries = [parse_entry(e) for e in args.models]
    except ValueError as error:
        parser.error(str(error))
    data = tc.load_real(crop_version=CROP_VERSION)
    tables, photos = tc.load_tables(), ec.labelled_photos()
    rows: dict[str, dict[str, int]] = {}
    for name, folders in entries:
        try:
            rows[name] = measure(folders, data, tables, photos)
        except SetVisionError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"{name}: {rows[name]}", flush=True)
    sets = list(next(iter(rows.values())))
    print("\n| cards wrong | " + " | ".join(rows) + " |")
    print("|---" * (len(rows) + 1) + "|")
    for s in sets:
        print(f"| {s} | " + " | ".join(str(r[s]) for r in rows.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
