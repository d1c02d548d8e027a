"""Measure the card classifier on real crops it was not trained on.

Accuracy per attribute, per card (all four right) and confusion matrices, through the runtime
path (:class:`vision.classify.CardClassifier`, onnxruntime) on the shared crops as
``scripts/train_classifier.py`` caches them (same preprocessing as at run time).

The evaluations (each one's results stored under its key):

* ``holdout``: the shipped model on the fixed stratified 1,000-crop hold-out
  (``models/card_classifier_holdout.txt``), per source; and on the same crops with their
  content scaled by 0.85 and 1.15 and mirrored (:data:`GEOMETRY`), which must not change a
  reading;
* ``loso`` (leave-one-source-out): for each crop source, a model trained without it (its crops
  and its table photos; same recipe, ``--loso-steps`` steps; trained on demand into
  ``$SETVISION_CACHE/cv``) tested on every crop of that source (omega697 split into verified
  and noisy labels), each crop also read as a photo of that card alone is read (the model and
  the card's own ink hue, :func:`read_alone`), on those crops dealt into tables of 12 and read
  as a table is read
  (:func:`dealt_tables`: table-level colour and one-deck decoding), and on the annotated
  cards of its table photos;
* ``folds``: cross-validation over the annotated table photos (``datasets/detection``): for each
  fold of ``train_classifier.TABLE_FOLDS``, a model trained without those sources tested on
  their cards, cut from the annotated corners as at run time. Together with ``loso`` every
  annotated table source is read by a model that never saw it (``scripts/evaluate.py --cv``
  runs the same models end to end, detector included);
* ``framing`` (with ``folds``): every annotated table-photo card warped from its corners
  scaled about the centre (x0.9 to x1.3: a detector quad off, the table round the card),
  read by the cross-validation model that never saw its source (:func:`evaluate_framing`);
* ``reliability`` and ``calibration`` (full run only): what a card's confidence means, over
  every left-out card with a trusted label: per confidence bin, the share of cards read fully
  right; and the per-head temperatures fitted on those cards, written into the shipped model's
  JSON (``calibration``), which the runtime applies to the confidence it reports;
* ``end_to_end_cv`` (full run, or ``--only end-to-end``): every labelled table photo read end to
  end, detector and all, by the cross-validation model that never saw its source
  (``scripts/evaluate.py --cv``): per attribute, per card and per table (a table is right only
  when every card is).

Usage::

    nice .venv/bin/python scripts/eval_classifier.py               # everything, writes JSON
    nice .venv/bin/python scripts/eval_classifier.py --only holdout

The full run trains the cross-validation models it does not find in the cache (PyTorch, the
``train`` extra; six pairs of about 15 minutes each on the 2-core machine; a minute or two
each evaluation when they are cached). Results go to ``models/card_classifier_eval.json`` (the
baselines that tests compare against) and a readable summary to stdout; ``--no-write`` leaves
both JSON files as they are, and so does ``--model`` with another model than the shipped one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import train_classifier as tc  # noqa: E402

from vision.classify import CROP_VERSION, HEADS, CardClassifier  # noqa: E402
from vision.colour import card_colour, symbol_colours, table_colour  # noqa: E402
from vision.decode import decode_table, tempered_log_probs  # noqa: E402
from vision.warp import warp_cards  # noqa: E402

RESULTS = REPO / "models" / "card_classifier_eval.json"


def predict(model: CardClassifier, crops: np.ndarray, batch: int = 256) -> np.ndarray:
    """(N, 4) predicted value positions."""
    return predict_scored(model, crops, batch)[0]


def predict_scored(
    model: CardClassifier, crops: np.ndarray, batch: int = 256
) -> tuple[np.ndarray, np.ndarray]:
    """(N, 4) predicted value positions and (N, 4, 3) float32 probabilities (head, value)."""
    pos, probs = [], []
    for i in range(0, len(crops), batch):
        p = model.predict(np.asarray(crops[i : i + batch]))
        pos.append(p.positions())
        probs.append(p.stacked())
    if not pos:
        return np.zeros((0, 4), np.int64), np.zeros((0, 4, 3), np.float32)
    return np.concatenate(pos), np.concatenate(probs)


#: Readings collected for :func:`reliability` and :func:`fit_temperatures`: (probabilities
#: (N, 4, 3), labels (N, 4)) per set of cards.
Scored = list[tuple[np.ndarray, np.ndarray]]

#: Confidence bins of :func:`reliability` (lower edges; the last bin ends at 1).
RELIABILITY_BINS = (0.0, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
#: Temperatures tried per head by :func:`fit_temperatures`.
TEMPERATURES = np.round(np.arange(0.10, 2.001, 0.01), 2)


def read_alone(
    crops: np.ndarray, pred: np.ndarray, probs: np.ndarray, batch: int = 1024
) -> np.ndarray:
    """(N, 4) value positions of each crop read as a photo of that one card is read: the model,
    its colour weighed with the card's own ink hue (:func:`vision.colour.card_colour` on a
    table of one card). ``crops`` (N, 250, 160, 3) uint8 BGR, ``pred`` (N, 4) the model's
    positions, ``probs`` (N, 4, 3) its probabilities."""
    out = pred.copy()
    for start in range(0, len(crops), batch):
        inks = symbol_colours(np.asarray(crops[start : start + batch]))
        for i in range(len(inks)):
            one = card_colour(probs[start + i : start + i + 1, 1], inks.take([i]))
            out[start + i, 1] = int(one.argmax())
    return out


def _tempered(probs: np.ndarray, temperatures: np.ndarray) -> np.ndarray:
    """(N, 4, 3) probabilities re-softmaxed at one temperature per head, as the runtime does
    (:func:`vision.decode.tempered_log_probs`)."""
    heads = [np.exp(tempered_log_probs(probs[:, h], t)) for h, t in enumerate(temperatures)]
    return np.stack(heads, axis=1)


def fit_temperatures(scored: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """(4,) temperature per head (count, colour, shape, fill) minimising the negative log
    likelihood of the true values over ``scored`` (probabilities (N, 4, 3), labels (N, 4)):
    temperature scaling (Guo et al., "On Calibration of Modern Neural Networks", ICML 2017),
    on :data:`TEMPERATURES`."""
    probs = np.concatenate([p for p, _ in scored])
    labels = np.concatenate([t for _, t in scored])
    best = np.ones(4)
    rows = np.arange(len(labels))
    for h in range(4):
        nll = [-tempered_log_probs(probs[:, h], t)[rows, labels[:, h]].mean() for t in TEMPERATURES]
        best[h] = TEMPERATURES[int(np.argmin(nll))]
    return best


def reliability(
    scored: list[tuple[np.ndarray, np.ndarray]], temperatures: np.ndarray | None = None
) -> list[dict]:
    """What a card's confidence means: for each bin of :data:`RELIABILITY_BINS`, how many
    cards read by a model that never saw their source fall in it, how many of them are fully
    right, and their mean confidence. ``scored``: (probabilities (N, 4, 3), labels (N, 4));
    the confidence is the product of the heads' top probabilities, at ``temperatures``."""
    if not scored:
        return []
    probs = np.concatenate([p for p, _ in scored])
    labels = np.concatenate([t for _, t in scored])
    if temperatures is not None:
        probs = _tempered(probs, temperatures)
    conf = probs.max(axis=2).prod(axis=1).astype(np.float64)
    right = (probs.argmax(axis=2) == labels).all(axis=1)
    edges = (*RELIABILITY_BINS, np.inf)  # the last bin takes 1.0 too
    rows = []
    how = "raw" if temperatures is None else "calibrated"
    print(f"what the {how} confidence means (cards of left-out sources, classifier alone):")
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (conf >= lo) & (conf < hi)
        n = int(inside.sum())
        row = {"from": lo, "to": min(float(hi), 1.0), "n": n}
        if n:
            row |= {"right": round(float(right[inside].mean()), 5),
                    "mean_confidence": round(float(conf[inside].mean()), 4)}  # fmt: skip
            print(f"  {lo:.2f}-{min(hi, 1.0):.2f}: {n:>6} cards, {100 * row['right']:.2f}% right")
        rows.append(row)
    return rows


def report(name: str, pred: np.ndarray, truth: np.ndarray) -> dict:
    """Accuracy per attribute and per card, confusion matrices (rows truth, columns predicted)."""
    right = pred == truth
    result = {
        "n": int(len(truth)),
        "per_attribute": {h: round(float(right[:, i].mean()), 5) for i, h in enumerate(HEADS)},
        "card": round(float(right.all(axis=1).mean()), 5),
        "cards_wrong": int((~right.all(axis=1)).sum()),
        "confusion": {
            h: np.bincount(truth[:, i] * 3 + pred[:, i], minlength=9).reshape(3, 3).tolist()
            for i, h in enumerate(HEADS)
        },
    }
    attrs = " ".join(f"{h} {100 * v:.2f}%" for h, v in result["per_attribute"].items())
    print(f"{name:<40} n={len(truth):>6}  {attrs}  card {100 * result['card']:.2f}%")
    for h in HEADS:
        conf = result["confusion"][h]
        if any(conf[a][b] for a in range(3) for b in range(3) if a != b):
            labels = tc.LABELS[h]
            errs = [
                f"{labels[a]}->{labels[b]} {conf[a][b]}"
                for a in range(3)
                for b in range(3)
                if a != b and conf[a][b]
            ]
            print(f"{'':<42}{h} errors: " + ", ".join(errs))
    return result


#: Geometric alterations of the hold-out crops that must not change a card's reading: the content
#: scaled about the crop's centre (a deck printing its symbols 15% smaller or larger, or a crop a
#: little outside or inside the card; the border replicated), and a left-right mirror (a mirroring
#: webcam; the squiggles' handedness flips).
GEOMETRY: dict[str, float | None] = {"scale 0.85": 0.85, "scale 1.15": 1.15, "mirror": None}


def alter_geometry(crops: np.ndarray, scale: float | None) -> np.ndarray:
    """(N, H, W, 3) uint8 crops with their content scaled by ``scale`` about the centre
    (bilinear, border replicated), or mirrored left-right when ``scale`` is None."""
    crops = np.asarray(crops)
    if scale is None:
        return np.ascontiguousarray(crops[:, :, ::-1])
    h, w = crops.shape[1:3]
    m = np.array([[scale, 0, (1 - scale) * (w - 1) / 2], [0, scale, (1 - scale) * (h - 1) / 2]])
    return np.stack([
        cv2.warpAffine(c, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        for c in crops
    ])  # fmt: skip


def holdout_rows(data: dict) -> np.ndarray:
    """Row indices of the hold-out crops (``models/card_classifier_holdout.txt``) in ``data``."""
    held = tc.holdout_paths(data)
    return np.flatnonzero([p in held for p in data["paths"]])


def evaluate_geometry(model: CardClassifier, data: dict) -> dict:
    """The model on the hold-out crops under each of :data:`GEOMETRY`'s alterations."""
    idx = holdout_rows(data)
    crops = np.asarray(data["crops"][idx])
    truth = data["labels"][idx]
    return {
        name: report(f"hold-out, {name}", predict(model, alter_geometry(crops, scale)), truth)
        for name, scale in GEOMETRY.items()
    }


def evaluate_holdout(model: CardClassifier, data: dict) -> dict:
    idx = holdout_rows(data)
    pred = predict(model, data["crops"][idx])
    truth = data["labels"][idx]
    out = {"all": report("hold-out (all sources)", pred, truth)}
    for s, name in enumerate(tc.SOURCES):
        mask = data["source"][idx] == s
        out[name] = report(f"hold-out {name}", pred[mask], truth[mask])
        if name == "omega697":
            for kind, noisy in (("verified", False), ("noisy", True)):
                sub = mask & (data["noisy"][idx] == noisy)
                if sub.any():
                    out[f"{name}-{kind}"] = report(
                        f"hold-out {name} ({kind})", pred[sub], truth[sub]
                    )
    return out


def cv_folder(steps: int, seed: int) -> Path:
    """Where the cross-validation models of the current recipe and labels live (trained on
    demand; a label added or corrected gives another folder: ``train_classifier.labels_digest``)."""
    return tc.cache_dir() / "cv" / tc.cv_models_name(steps, seed)


def cv_model(left_out: str, steps: int, seed: int, threads: int, train: bool = True) -> Path:
    """The model trained without ``left_out`` (a crop source, which also drops that source's
    table photos, or a table fold of ``tc.TABLE_FOLDS``); trained now when missing."""
    path = cv_folder(steps, seed) / f"without-{left_out}.onnx"
    if not path.exists():
        if not train:
            raise FileNotFoundError(f"{path} (run scripts/eval_classifier.py first)")
        path.parent.mkdir(parents=True, exist_ok=True)
        flag = (
            ["--fold", left_out] if left_out in tc.TABLE_FOLDS else ["--exclude-source", left_out]
        )
        print(f"training a model without {left_out} ({steps} steps) -> {path}", flush=True)
        t0 = time.time()
        tc.main(
            flag + ["--steps", str(steps), "--seed", str(seed)]
            + ["--threads", str(threads), "--out", str(path)]
        )  # fmt: skip
        print(f"  trained in {time.time() - t0:.0f}s", flush=True)
    return path


def cv_models(steps: int, seed: int, threads: int = 2, train: bool = True) -> dict[str, Path]:
    """For every annotated table source, the cross-validation model that never saw it: the
    table folds' models, and the leave-one-source-out models for tomwhite and omega697."""
    out: dict[str, Path] = {}
    for fold, sources in tc.TABLE_FOLDS.items():
        for source in sources:
            out[source] = cv_model(fold, steps, seed, threads, train)
    for source in ("tomwhite", "omega697"):
        out[source] = cv_model(source, steps, seed, threads, train)
    return out


def cv_classifiers(
    steps: int, seed: int, shipped: CardClassifier, train: bool = False
) -> dict[str, CardClassifier]:
    """:func:`cv_models` loaded, each given ``shipped``'s calibration temperatures (fitted on
    these models' readings and stored with the shipped model only), so that their confidences
    are the ones ``setvision photo`` would show."""
    models = {s: CardClassifier(p) for s, p in cv_models(steps, seed, train=train).items()}
    for model in models.values():
        model.temperatures = shipped.temperatures
    return models


#: Tables dealt from a left-out crop source by :func:`dealt_tables`: how many, of how many
#: distinct cards each (the crops carry no photo id, so a "table" is a seeded draw).
DEALT_TABLES = 200
DEALT_SIZE = 12


def dealt_tables(crops: np.ndarray, probs: np.ndarray, truth: np.ndarray, seed: int = 0) -> dict:
    """Crops of one source dealt into :data:`DEALT_TABLES` tables of :data:`DEALT_SIZE`
    distinct cards (one deck) and read as ``setvision photo`` reads a table: the table-level
    colour (:func:`vision.colour.table_colour`) and the one-deck decoding
    (:func:`vision.decode.decode_table`). ``crops`` (N, 250, 160, 3) uint8 BGR, ``probs``
    (N, 4, 3) the model's probabilities, ``truth`` (N, 4) value positions. Returns the
    figures of :func:`report` plus ``tables`` (share of tables with every card right)."""
    ids = truth @ np.array([27, 9, 3, 1])
    rng = np.random.default_rng(seed)
    preds, truths, right = [], [], []
    for _ in range(DEALT_TABLES):
        pick = rng.permutation(len(ids))
        pick = pick[np.sort(np.unique(ids[pick], return_index=True)[1])][:DEALT_SIZE]
        p = probs[pick]
        fused = table_colour(np.asarray(crops[pick]), p[:, 1])[0]
        decoded = decode_table((p[:, 0], fused, p[:, 2], p[:, 3]))
        pred = np.array([card.positions for card in decoded.cards])
        preds.append(pred)
        truths.append(truth[pick])
        right.append(bool((pred == truth[pick]).all()))
    name = f"  dealt into {DEALT_TABLES} tables of {DEALT_SIZE}"
    out = report(name, np.concatenate(preds), np.concatenate(truths))
    out["tables"] = round(float(np.mean(right)), 5)
    print(f"{'':<42}tables fully right {100 * out['tables']:.2f}%")
    return out


def evaluate_loso(
    data: dict, tables: dict, steps: int, seed: int, threads: int, scored: Scored
) -> dict:
    """Each crop source left out (its crops and its table photos): every crop of it, and the
    annotated cards of its table photos, read by the model trained without it."""
    out = {}
    for s, name in enumerate(tc.SOURCES):
        path = cv_model(name, steps, seed, threads)
        model = CardClassifier(path)
        idx = np.flatnonzero(data["source"] == s)
        pred, probs = predict_scored(model, data["crops"][idx])
        truth = data["labels"][idx]
        clean = ~data["noisy"][idx]  # verified labels only: noisy ones measure the labels
        scored.append((probs[clean], truth[clean]))
        meta = json.loads(path.with_suffix(".json").read_text())
        alone = read_alone(data["crops"][idx], pred, probs)
        res = {"model": meta["training"], "all": report(f"LOSO {name} (all)", pred, truth)}
        res["all_alone"] = report(f"LOSO {name} (all, card alone)", alone, truth)
        res["dealt"] = dealt_tables(data["crops"][idx[clean]], probs[clean], truth[clean], seed)
        if data["noisy"][idx].any():
            for kind, noisy in (("verified", False), ("noisy", True)):
                sub = data["noisy"][idx] == noisy
                res[kind] = report(f"LOSO {name} ({kind})", pred[sub], truth[sub])
                res[f"{kind}_alone"] = report(
                    f"LOSO {name} ({kind}, card alone)", alone[sub], truth[sub]
                )
        rows = np.flatnonzero(tables["source"] == name)
        if len(rows):
            pred, probs = predict_scored(model, tables["crops"][rows])
            res["tables"] = report(f"LOSO {name} (table photos)", pred, tables["labels"][rows])
            alone = read_alone(tables["crops"][rows], pred, probs)
            res["tables_alone"] = report(
                f"LOSO {name} (table photos, card alone)", alone, tables["labels"][rows]
            )
            scored.append((probs, tables["labels"][rows]))
        out[name] = res
    return out


def evaluate_folds(tables: dict, steps: int, seed: int, threads: int, scored: Scored) -> dict:
    """Cross-validation by table source: each fold's sources (crops and photos) left out of
    training, their annotated cards (cut from the annotated corners) read by that fold's model.
    ``pooled`` is every fold's left-out cards together: each read by a model that never saw
    its source."""
    out: dict[str, dict] = {}
    preds, truths, alones = [], [], []
    for fold, sources in tc.TABLE_FOLDS.items():
        path = cv_model(fold, steps, seed, threads)
        model = CardClassifier(path)
        rows = np.flatnonzero(np.isin(tables["source"], sources))
        pred, probs = predict_scored(model, tables["crops"][rows])
        truth = tables["labels"][rows]
        scored.append((probs, truth))
        preds.append(pred)
        truths.append(truth)
        alones.append(read_alone(tables["crops"][rows], pred, probs))
        meta = json.loads(path.with_suffix(".json").read_text())
        res = {
            "model": meta["training"],
            "all": report(f"{fold} ({', '.join(sources)})", pred, truth),
        }
        for source in sources:
            sub = tables["source"][rows] == source
            res[source] = report(f"  {fold} {source}", pred[sub], truth[sub])
        out[fold] = res
    out["pooled"] = report("folds pooled", np.concatenate(preds), np.concatenate(truths))
    out["pooled_alone"] = report(
        "folds pooled (card alone)", np.concatenate(alones), np.concatenate(truths)
    )
    return out


#: Scales of the annotated corners about each card's centre for :func:`evaluate_framing`: a quad
#: found a little inside the card (0.9), or too large (a tray cell, a card sleeve, a shadow
#: taken with the card), so that the table and the neighbouring cards show round it.
FRAMING = (0.9, 1.0, 1.1, 1.2, 1.3)


def labelled_photos() -> list[tuple[np.ndarray, np.ndarray, np.ndarray, str]]:
    """(frame (H,W,3) uint8 BGR, corners (N,4,2) float32, labels (N,4) int64 value positions,
    source) for every reviewed annotated photo with whole, fully labelled cards."""
    from vision.evaluation import load_annotations
    from vision.io import load_image

    root = tc.shared_datasets()
    assert root is not None
    out = []
    for photo in load_annotations(tc.ANNOTATIONS, reviewed_only=True):
        cards = [
            c for c in photo.cards if not c.partial and all(a in c.attributes for a in tc.LABELS)
        ]
        if cards:
            labels = [[tc.LABELS[a].index(str(c.attributes[a])) for a in tc.LABELS] for c in cards]
            out.append((
                load_image(root / photo.path),
                np.array([c.corners for c in cards], np.float32),
                np.array(labels, np.int64),
                photo.source,
            ))  # fmt: skip
    return out


def evaluate_framing(steps: int, seed: int, threads: int) -> dict:
    """Every annotated table-photo card warped (``vision.warp.warp_cards``, white-balanced as at
    run time) from its corners scaled about their mean by each of :data:`FRAMING`, read by the
    cross-validation model that never saw its source (:func:`cv_models`): how a reading holds
    when the detector's quad is off, with the real table round the card."""
    models = {s: CardClassifier(p) for s, p in cv_models(steps, seed, threads).items()}
    preds: dict[float, list[np.ndarray]] = {f: [] for f in FRAMING}
    truths = []
    for frame, corners, labels, source in labelled_photos():
        centre = corners.mean(axis=1, keepdims=True)
        truths.append(labels)
        for f in FRAMING:
            crops = warp_cards(frame, centre + np.float32(f) * (corners - centre))
            preds[f].append(predict(models[source], crops))
    truth = np.concatenate(truths)
    return {
        f"x{f:g}": report(f"table-photo cards, quad x{f:g}", np.concatenate(preds[f]), truth)
        for f in FRAMING
    }


def write_calibration(
    temperatures: np.ndarray, cards: int, steps: int, seed: int, path: Path = tc.SHIPPED_JSON
) -> None:
    """Store the fitted temperatures in the shipped model's JSON (``calibration``), which
    :class:`vision.classify.CardClassifier` applies to the confidence it reports, with the
    cross-validation models they were fitted on (``cv_models``: a retrained model of the same
    recipe keeps them, ``train_classifier.kept_calibration``)."""
    meta = json.loads(path.read_text())
    meta["calibration"] = {
        "temperatures": [float(t) for t in temperatures],
        "heads": list(HEADS),
        "cv_models": tc.cv_models_name(steps, seed),
        "fitted_on": f"{cards} cards of sources left out of the cross-validation models "
        f"(recipe {tc.RECIPE}, {steps} steps): scripts/eval_classifier.py",
    }
    path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote the calibration into {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", type=Path, default=None,
        help="the model read on the hold-out (default: the shipped model; another one implies "
        "--no-write)",
    )  # fmt: skip
    parser.add_argument(
        "--only", choices=["holdout", "loso", "folds", "end-to-end"], default=None,
        help="run one evaluation (default: all of them, then the calibration)",
    )  # fmt: skip
    parser.add_argument(
        "--loso-steps", type=int, default=tc.STEPS,
        help="steps of the CV models (default: the shipped model's)",
    )  # fmt: skip
    parser.add_argument("--threads", type=int, default=2, help="torch threads for LOSO training")
    parser.add_argument("--seed", type=int, default=0, help="seed of the CV models (default 0)")
    parser.add_argument(
        "--no-write", action="store_true",
        help="leave models/card_classifier_eval.json and the shipped model's calibration as "
        "they are",
    )  # fmt: skip
    args = parser.parse_args(argv)
    shipped = tc.SHIPPED_JSON.with_suffix(".onnx").resolve()
    if args.model is not None and args.model.resolve() != shipped and not args.no_write:
        print(f"--model {args.model} is not the shipped model: its figures are not recorded")
        args.no_write = True
    if args.only == "end-to-end" and args.seed != 0:  # scripts/evaluate.py --cv: seed 0
        parser.error("--seed: the end-to-end evaluation reads the seed-0 models")

    if args.only == "end-to-end":  # the models are there or not: nothing else to load
        _end_to_end(args)
        return
    data = tc.load_real(crop_version=CROP_VERSION)  # the crops cut as well as we can
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if args.only in (None, "holdout"):
        model = CardClassifier(args.model)
        results["holdout"] = evaluate_holdout(model, data)
        results["holdout_geometry"] = evaluate_geometry(model, data)
        results["holdout_model_sha256"] = model.info.meta["sha256"]
    tables = tc.load_tables()
    scored: list[tuple[np.ndarray, np.ndarray]] = []
    if args.only in (None, "loso"):
        results["loso"] = evaluate_loso(
            data, tables, args.loso_steps, args.seed, args.threads, scored
        )
        results["loso_steps"] = args.loso_steps
        results["cv_recipe"] = tc.RECIPE
    if args.only in (None, "folds"):
        results["folds"] = evaluate_folds(tables, args.loso_steps, args.seed, args.threads, scored)
        results["loso_steps"] = args.loso_steps
        results["cv_recipe"] = tc.RECIPE
    if args.only in (None, "folds"):
        results["framing"] = evaluate_framing(args.loso_steps, args.seed, args.threads)
    if args.only is None:  # every left-out card: what the confidence means, and calibration
        temperatures = fit_temperatures(scored)
        print("temperatures (count, colour, shape, fill):", temperatures.tolist())
        results["reliability"] = reliability(scored)
        results["calibration"] = {
            "temperatures": temperatures.tolist(),
            "cards": int(sum(len(t) for _, t in scored)),
            "reliability": reliability(scored, temperatures),
        }
        if not args.no_write:  # the runtime reads them from the shipped model's JSON
            write_calibration(
                temperatures, results["calibration"]["cards"], args.loso_steps, args.seed
            )
    if not args.no_write:
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {RESULTS}")
    if args.only is None and args.seed == 0:  # after the calibration: the confidences shown
        _end_to_end(args)
    elif args.only is None:
        print("end to end: not run (scripts/evaluate.py --cv reads the seed-0 models)")


def _end_to_end(args: argparse.Namespace) -> None:
    """Every labelled photo read end to end by the cross-validation models
    (``scripts/evaluate.py --cv``), recorded as ``end_to_end_cv`` unless ``--no-write``."""
    import evaluate

    record = [] if args.no_write else ["--record"]
    try:
        evaluate.main(["--cv", "--cv-steps", str(args.loso_steps), *record])
    except FileNotFoundError as error:  # the models are not trained yet: one line
        raise SystemExit(f"eval_classifier.py: error: {error}") from None


if __name__ == "__main__":
    main()
