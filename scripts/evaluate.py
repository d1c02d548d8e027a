"""End-to-end accuracy of ``setvision photo`` on labelled real table photos.

Truth: ``../shared/datasets/tables.csv`` rows with ``labels == multiset`` and their cards in
``table_cards.csv`` (an unordered multiset per photo), plus the project's own annotations
(``datasets/detection/*.json``, reviewed photos) where every whole card carries all four
attributes.

Card readings are compared as multisets per photo: predicted cards are matched to true cards by
an assignment maximising the number of agreeing attributes (Hungarian). Reported per source:

* per attribute: matched cards with that attribute right / true cards (a missed card counts
  wrong for every attribute; an extra detection is counted separately),
* per card: true cards matched to a prediction with all four attributes right,
* per table: the predicted multiset equals the true one,
* SETs: the SETs found (as card triples) equal the true table's SETs,
* count: the number of cards found equals the number of true cards.

Cards annotated ``partial`` (cut by the frame edge or mostly covered) are not in the truth, and a
detection lying half or more inside one is dropped before scoring (as in the detection
evaluation): finding and reading such a card is neither a misread nor an extra card.

``unseen`` pools the photos read by a model that never trained on their source (its crops or
its table photos). The shipped model trains on every source, so for it that pool is empty: use
``--cv``, which reads each photo with the cross-validation model trained without its source (the
table folds and leave-one-source-out models of ``scripts/eval_classifier.py``), to measure new
tables, cameras and decks.

Each figure is also given for the ablations that the saved probabilities allow: the model alone
(argmax per attribute), + table-level colour, + deck decoding, and the full pipeline.

Usage::

    nice .venv/bin/python scripts/evaluate.py [--source tomwhite] [--json out.json] [-v]
    nice .venv/bin/python scripts/evaluate.py --cv     # every photo by a model that never saw it
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.cards import Card, parse_card  # noqa: E402
from vision.data import shared_datasets  # noqa: E402
from vision.decode import decode_table  # noqa: E402
from vision.rules import find_sets  # noqa: E402

ATTRS = ("count", "colour", "shape", "fill")
VARIANTS = ("model", "model+colour", "model+deck", "full")


@dataclass
class Truth:
    path: str
    source: str
    cards: list[Card]
    #: corners of annotated partial cards (cut by the frame or mostly covered): not in ``cards``,
    #: and a detection lying inside one is ignored, as in the detection evaluation.
    partial: list[np.ndarray] = field(default_factory=list)
    #: corners of the annotated whole cards (empty for photos with shared labels only): a
    #: detection matching one is kept even where it lies over a partial card (a card on a pile).
    whole: list[np.ndarray] = field(default_factory=list)


def load_truth(root: Path, use_annotations: bool = True) -> list[Truth]:
    """Labelled table photos: shared multisets, then the project's attribute annotations."""
    with open(root / "tables.csv", newline="", encoding="utf-8") as handle:
        tables = {r["path"]: r for r in csv.DictReader(handle) if r["labels"] == "multiset"}
    cards: dict[str, list[Card]] = defaultdict(list)
    with open(root / "table_cards.csv", newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            text = f"{r['count']} {r['colour']} {r['shape']} {r['fill']}"
            cards[r["path"]].append(parse_card(text))
    out = [Truth(p, tables[p]["source"], cards[p]) for p in tables]
    folder = ROOT / "datasets" / "detection"
    if use_annotations and folder.is_dir():
        from vision.evaluation import load_annotations

        known = {t.path: t for t in out}
        for photo in load_annotations(folder, reviewed_only=True):
            whole = [c for c in photo.cards if not c.partial]
            partial = [c.corners for c in photo.cards if c.partial]
            if photo.path in known:
                known[photo.path].partial = partial
                known[photo.path].whole = [c.corners for c in whole]
            if photo.path in tables or not whole:
                continue
            if all(all(a in c.attributes for a in ATTRS) for c in whole):
                labelled = [
                    parse_card(" ".join(str(c.attributes[a]) for a in ATTRS)) for c in whole
                ]
                out.append(
                    Truth(
                        photo.path,
                        photo.source or "annotated",
                        labelled,
                        partial,
                        [c.corners for c in whole],
                    )
                )
    return out


def match(pred: list[Card], truth: list[Card]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Assignment of predicted to true cards maximising agreeing attributes, and among the
    assignments that tie on those, the cards fully right (the shared labels are a multiset per
    photo, without positions: a misread "2 striped ovals" beside a right "1 striped oval" must
    not move the blame to the right card by pairing it with the misread's truth).

    Returns:
        ((4,) int correct counts per attribute over matched pairs, matched (pred, truth) pairs).
    """
    if not pred or not truth:
        return np.zeros(4, int), []
    agree = np.array(
        [[[a == b for a, b in zip(p.positions, t.positions)] for t in truth] for p in pred]
    )  # (P, T, 4)
    # Integer agreement first; a bonus under 1 in total for each pair fully right breaks ties.
    bonus = agree.all(axis=2) / (len(pred) + len(truth) + 1)
    rows, cols = linear_sum_assignment(-(agree.sum(axis=2) + bonus))
    return agree[rows, cols].sum(axis=0), list(zip(rows.tolist(), cols.tolist()))


def outside_partial(
    corners: np.ndarray, partial: list[np.ndarray], whole: list[np.ndarray] | None = None
) -> list[int]:
    """Indices of detections not lying (half their area or more) inside a partial true card,
    or matching a ``whole`` true card (IoU >= ``IOU_THRESHOLD``, matched one to one against the
    whole and partial cards, as ``vision.evaluation.score_photo`` does: the card on top of a
    pile lies over the cards it covers)."""
    from vision.evaluation import IGNORE_OVERLAP, match_quads, polygon_area, polygon_intersection

    whole = whole or []
    matched = {f for t, f, _ in match_quads(whole + partial, list(corners)) if t < len(whole)}
    keep = []
    for i, quad in enumerate(corners):
        if i in matched:
            keep.append(i)
            continue
        area = polygon_area(quad)
        inside = max((polygon_intersection(quad, p) for p in partial), default=0.0)
        if not (area > 0 and inside / area >= IGNORE_OVERLAP):
            keep.append(i)
    return keep


def set_triples(cards: list[Card]) -> Counter:
    return Counter(tuple(sorted(cards[i].index for i in t)) for t in find_sets(cards))


@dataclass
class Tally:
    photos: int = 0
    truth_cards: int = 0
    extra: int = 0
    count_right: int = 0
    attr: np.ndarray = field(default_factory=lambda: np.zeros(4, int))
    cards_right: int = 0
    tables_right: int = 0
    sets_right: int = 0

    def add(self, pred: list[Card], truth: list[Card]) -> bool:
        correct, pairs = match(pred, truth)
        full = sum(1 for p, t in pairs if pred[p] == truth[t])
        self.photos += 1
        self.truth_cards += len(truth)
        self.extra += max(0, len(pred) - len(truth))
        self.count_right += len(pred) == len(truth)
        self.attr += correct
        self.cards_right += full
        right = Counter(pred) == Counter(truth)
        self.tables_right += right
        self.sets_right += set_triples(pred) == set_triples(truth)
        return right

    def row(self) -> dict[str, float]:
        n = max(self.truth_cards, 1)
        out = {f"{a}": float(self.attr[i] / n) for i, a in enumerate(ATTRS)}
        out.update(
            photos=self.photos,
            cards=self.truth_cards,
            extra_detections=self.extra,
            count_right=self.count_right / max(self.photos, 1),
            card=self.cards_right / n,
            table=self.tables_right / max(self.photos, 1),
            sets=self.sets_right / max(self.photos, 1),
        )
        return out


def variants(table) -> dict[str, list[Card]]:  # noqa: ANN001 - vision.table.Table
    """The cards each ablation reads from one recognised table."""
    model = table.model_probabilities
    fused = table.probabilities

    def argmax(p: np.ndarray) -> list[Card]:
        return [Card.from_positions(tuple(int(x) for x in row)) for row in p.argmax(axis=2)]

    deck = decode_table(tuple(model[:, a] for a in range(4)), mixed_decks=False)
    return {
        "model": argmax(model),
        "model+colour": argmax(fused),
        "model+deck": list(deck.cards),
        "full": list(table.cards),
    }


def _non_negative(text: str) -> int:
    """An argparse type: a whole number >= 0 (``--limit -1`` silently left out the last
    photo)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def scaled_detector(scale: float):
    """``vision.detect.find_cards`` with every quad scaled by ``scale`` about its centre."""
    from types import SimpleNamespace

    from vision.detect import find_cards

    def detect(frame: np.ndarray) -> SimpleNamespace:
        found = find_cards(frame)
        corners = np.asarray(found.corners, np.float32).reshape(-1, 4, 2)
        centre = corners.mean(axis=1, keepdims=True)
        return SimpleNamespace(
            corners=centre + np.float32(scale) * (corners - centre),
            scores=found.scores,
            partial=found.partial,
        )

    return detect


def detectors(kind: str):  # noqa: ANN201 - source -> detector, or None for the default
    """None for ``learned`` (the pipeline's default, the shipped model); with ``learned-cv`` a
    function source -> the learned model of the fold that left the source out (the shipped one
    for a source in no fold)."""
    if kind == "learned":
        return None
    from vision.detect.learned_find import LearnedDetector

    shipped = LearnedDetector()
    sys.path.insert(0, str(ROOT / "scripts"))
    from train_detector import CV_ROOT, FOLDS

    by_source = {}
    for i, fold in enumerate(FOLDS):
        model = CV_ROOT / f"fold{i}" / "card_detector.onnx"
        if not model.exists():
            sys.exit(f"evaluate: {model} missing: train the folds first (scripts/train_detector.py"
                     f" --leave-out {','.join(fold)} --out {model})")  # fmt: skip
        found = LearnedDetector(str(model))
        by_source.update({source: found for source in fold})
    return lambda source: by_source.get(source, shipped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", action="append", help="only these sources (repeatable)")
    parser.add_argument("--model", default=None, help="classifier .onnx (default: packaged)")
    parser.add_argument(
        "--limit", type=_non_negative, default=0, help="at most this many photos (0: all)"
    )
    parser.add_argument("--no-annotations", action="store_true", help="shared labels only")
    parser.add_argument(
        "--cv", action="store_true",
        help="read each photo with the cross-validation model that never saw its source "
        "(the folds and leave-one-source-out models that scripts/eval_classifier.py trains)",
    )  # fmt: skip
    parser.add_argument(
        "--cv-steps", type=int, default=None,
        help="steps of the CV models (default: the shipped model's, train_classifier.STEPS)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--record", action="store_true",
        help="with --cv: store the figures in models/card_classifier_eval.json (end_to_end_cv)",
    )  # fmt: skip
    parser.add_argument("-v", "--verbose", action="store_true", help="list every misread card")
    parser.add_argument(
        "--detector", choices=("learned", "learned-cv"), default="learned",
        help="the card finder: vision.detect.find_cards, the model in models/ (learned), or "
        "each source by the model of its fold that never saw it (learned-cv: "
        "build/detector_cv, scripts/train_detector.py)",
    )  # fmt: skip
    parser.add_argument(
        "--quad-scale", type=float, default=1.0,
        help="scale every detected quad about its centre (1.2: each found 1.2x too large, as a "
        "tray cell or a sleeve would be): how the reading holds when the detector is off",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not 0.5 <= args.quad_scale <= 2.0:
        parser.error(f"--quad-scale: expected 0.5 to 2, got {args.quad_scale:g}")
    if args.record and args.quad_scale != 1.0:
        parser.error("--record: only with the quads as found (--quad-scale 1)")
    if args.record and args.detector != "learned":
        parser.error("--record: only with the default detector (--detector learned)")
    if args.quad_scale != 1.0 and args.detector != "learned":
        parser.error("--quad-scale: only with --detector learned")

    from vision.classify import CardClassifier
    from vision.errors import SetVisionError
    from vision.pipeline import process_photo

    try:
        root = shared_datasets()
    except SetVisionError as error:  # no shared photos here: one line, not a traceback
        parser.error(str(error))
    assert root is not None
    truths = load_truth(root, not args.no_annotations)
    if args.source:
        known = sorted({t.source for t in truths})
        unknown = sorted(set(args.source) - set(known))
        if unknown:  # a typo printed an empty table, numpy warnings and "median nan ms"
            parser.error(f"--source: no labelled photos of {', '.join(unknown)}; sources: "
                         f"{', '.join(known)}")  # fmt: skip
        truths = [t for t in truths if t.source in args.source]
    if args.limit:
        truths = truths[: args.limit]
    try:
        classifier = CardClassifier(args.model)
    except SetVisionError as error:  # a missing or corrupt --model: one line
        parser.error(f"--model: {error}")
    cv: dict[str, CardClassifier] = {}
    if args.cv:
        sys.path.insert(0, str(ROOT / "scripts"))
        from eval_classifier import cv_classifiers
        from train_classifier import STEPS

        args.cv_steps = args.cv_steps or STEPS
        cv = cv_classifiers(args.cv_steps, 0, classifier)
    detector_for = detectors(args.detector)
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    wrong_tables: list[str] = []
    times: list[float] = []
    for k, truth in enumerate(truths, 1):
        start = time.perf_counter()
        model = cv.get(truth.source, classifier)
        options = {} if args.quad_scale == 1.0 else {"detector": scaled_detector(args.quad_scale)}
        if detector_for is not None:
            options = {"detector": detector_for(truth.source)}
        table = process_photo(root / truth.path, model, draw=False, **options).table
        times.append((time.perf_counter() - start) * 1000)
        keep = outside_partial(table.corners, truth.partial, truth.whole)
        for name, pred in variants(table).items():
            pred = [pred[i] for i in keep]
            groups = (truth.source, "all") + (() if trained_on(model, truth) else ("unseen",))
            for source in groups:
                right = tallies[(source, name)].add(pred, truth.cards)
            if name == "full" and not right:
                wrong_tables.append(truth.path)
                if args.verbose:
                    _explain(truth, pred, table, keep)
        print(f"\r{k}/{len(truths)} photos", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    pooled = ["unseen", "all"]
    sources = sorted({s for s, _ in tallies if s not in pooled}) + [
        s for s in pooled if (s, "full") in tallies
    ]
    header = (
        f"{'source':<12} {'variant':<13} {'photos':>6} {'cards':>5} {'n ok':>5} "
        + " ".join(f"{a:>6}" for a in ATTRS)
        + f" {'card':>6} {'table':>6} {'SETs':>6} {'extra':>5}"
    )
    print(header)
    report: dict[str, dict[str, dict[str, float]]] = {}
    for source in sources:
        for name in VARIANTS:
            r = tallies[(source, name)].row()
            report.setdefault(source, {})[name] = r
            print(
                f"{source:<12} {name:<13} {r['photos']:>6} {r['cards']:>5} "
                f"{r['count_right']:>5.0%} "
                + " ".join(f"{r[a]:>6.1%}" for a in ATTRS)
                + f" {r['card']:>6.1%} {r['table']:>6.1%} {r['sets']:>6.1%} "
                f"{r['extra_detections']:>5}"
            )
    print(f"median {np.median(times):.0f} ms per photo (load + recognise)")
    if wrong_tables and not args.verbose:
        print(f"{len(wrong_tables)} tables not fully right (use -v for details)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if args.record and args.cv:
        from eval_classifier import RESULTS
        from train_classifier import RECIPE

        results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        results["end_to_end_cv"] = {
            "recipe": RECIPE,
            "steps": args.cv_steps,
            "sources": sorted(s for s in report if s not in pooled),
            "figures": report,
        }
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {RESULTS}")
    return 0


def trained_on(classifier, truth: Truth) -> bool:  # noqa: ANN001 - CardClassifier
    """Did the classifier train on this photo's source (its crops or its table photos)?
    Photos of the other sources ("unseen") are the test of generalisation."""
    training = classifier.info.meta.get("training", {})
    seen = set(training.get("real_sources", [])) | set(training.get("table_sources", []))
    return truth.source in seen


def _explain(truth: Truth, pred: list[Card], table, keep: list[int]) -> None:  # noqa: ANN001
    _, pairs = match(pred, truth.cards)
    ignored = len(table.cards) - len(keep)
    note = f" ({ignored} inside partial cards ignored)" if ignored else ""
    print(f"\n{truth.path}: {len(pred)} found{note}, {len(truth.cards)} true")
    matched_t = {t for _, t in pairs}
    for p, t in pairs:
        if pred[p] != truth.cards[t]:
            conf = float(table.confidences[keep[p]])
            print(
                f"  #{keep[p] + 1} read {pred[p].label} ({conf:.2f}), truth {truth.cards[t].label}"
            )
    for t, card in enumerate(truth.cards):
        if t not in matched_t:
            print(f"  missed {card.label}")


if __name__ == "__main__":
    raise SystemExit(main())
