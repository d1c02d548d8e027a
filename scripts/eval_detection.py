#!/usr/bin/env python3
"""Measure card detection against the reviewed ground truth in ``datasets/detection/``.

For every reviewed photo: load it (``vision.io.load_image``), run ``vision.detect.find_cards``,
match detections to true cards by polygon IoU >= 0.85 (optimal assignment), and report per source
and overall: precision, recall, corner error in pixels (mean, median, p95, max; after aligning the
corner order, and in the detector's own order), how often the detector's corner order is a
portrait order, and the photos where every card was found and nothing else. Partial true cards
(cut by the frame or mostly covered) need not be found and are not false positives when found
once; a second detection on one is (the card reported twice).

    python scripts/eval_detection.py                       # table per source
    python scripts/eval_detection.py --source pclewis --save-failures /tmp/fails
    python scripts/eval_detection.py --json > detection.json
    python scripts/eval_detection.py --alter blur          # defocused copies (eval_robustness.py)
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

import cv2
import numpy as np
import numpy.typing as npt
import typer

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "scripts") not in sys.path:  # eval_robustness (--alter)
    sys.path.insert(0, str(REPO / "scripts"))

from vision.data import shared_datasets  # noqa: E402
from vision.errors import SetVisionError  # noqa: E402
from vision.evaluation import (  # noqa: E402
    IOU_THRESHOLD,
    DetectionScore,
    PhotoTruth,
    load_annotations,
    score_photo,
    summarise,
)

DEFAULT_ANNOTATIONS = REPO / "datasets" / "detection"

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def load_photo(path: Path) -> npt.NDArray[np.uint8]:
    """The photo as displayed, BGR uint8, via ``vision.io.load_image`` when available."""
    try:
        from vision.io import load_image
    except ImportError:
        data = np.fromfile(str(path), dtype=np.uint8)
        image = cv2.imdecode(data, cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"cannot decode {path}") from None
        return image
    return load_image(path)


def detect(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Detected corners (N, 4, 2) from ``vision.detect.find_cards``."""
    from vision.detect import find_cards

    return np.asarray(find_cards(image).corners, dtype=np.float32).reshape(-1, 4, 2)


def evaluate(
    photos: list[PhotoTruth], data: Path, threshold: float = IOU_THRESHOLD, alter: str | None = None
) -> tuple[list[DetectionScore], dict[str, npt.NDArray[np.float32]], list[float]]:
    """Run the detector on every photo and score it.

    Args:
        alter: name of an alteration of ``scripts/eval_robustness.py`` (``blur``, ``small``,
            ...) applied to each photo first; the detections are mapped back to the original's
            pixels (scaled, turned or mirrored back).

    Returns:
        The scores, the detections per photo path (original coordinates), and the detection
        time per photo (ms).
    """
    scores, found, times = [], {}, []
    for photo in photos:
        image = load_photo(data / photo.path)
        if image.shape[:2] != (photo.height, photo.width):
            raise ValueError(
                f"{photo.path}: annotated as {photo.width}x{photo.height}, "
                f"loaded as {image.shape[1]}x{image.shape[0]}"
            )
        back = None
        if alter is not None:
            from eval_robustness import ALTERATIONS

            encoded, back = ALTERATIONS[alter](image)
            image = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
        start = time.perf_counter()
        quads = detect(image)
        times.append((time.perf_counter() - start) * 1000)
        if back is not None:
            from eval_robustness import to_original

            quads = to_original(quads, back)
        found[photo.path] = quads
        scores.append(score_photo(photo, quads, threshold))
    return scores, found, times


def draw_failure(
    image: npt.NDArray[np.uint8],
    photo: PhotoTruth,
    quads: npt.NDArray[np.float32],
    score: DetectionScore,
) -> npt.NDArray[np.uint8]:
    """The photo with true cards (green; missed ones red, partial ones grey) and detections
    (blue; false positives magenta), at most 1600 px on the long side."""
    out = image.copy()
    thick = max(2, int(round(max(image.shape[:2]) / 800)))
    for i, card in enumerate(photo.cards):
        colour = (160, 160, 160) if card.partial else (0, 200, 0)
        if i in score.missed:
            colour = (0, 0, 255)
        cv2.polylines(out, [np.round(card.corners).astype(np.int32)], True, colour, thick * 2)
    for j, quad in enumerate(quads):
        colour = (255, 0, 255) if j in score.false_indices else (255, 128, 0)
        cv2.polylines(out, [np.round(quad).astype(np.int32)], True, colour, thick)
    scale = min(1.0, 1600 / max(out.shape[:2]))
    return cv2.resize(out, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def report(scores: list[DetectionScore], times: list[float]) -> dict[str, Any]:
    """Figures per source and overall, as JSON-ready dicts."""
    by_source: dict[str, list[DetectionScore]] = defaultdict(list)
    for s in scores:
        by_source[s.source].append(s)
    result: dict[str, Any] = {
        "iou_threshold": IOU_THRESHOLD,
        "overall": summarise(scores).to_json(),
        "sources": {k: summarise(v).to_json() for k, v in sorted(by_source.items())},
        "detect_ms_median": round(float(np.median(times)), 1) if times else None,
        "failures": [
            {
                "path": s.path,
                "missed": list(s.missed),
                "false_positives": s.false_positives,
            }
            for s in scores
            if not s.perfect
        ],
    }
    return result


def _fmt(value: float) -> str:
    return "   -" if value != value else f"{value:6.1f}"  # NaN check


def print_table(result: dict[str, Any]) -> None:
    head = (
        f"{'source':12s} {'photos':>6s} {'perfect':>7s} {'cards':>5s} {'TP':>5s} {'FP':>4s} "
        f"{'prec':>7s} {'recall':>7s} {'c.mean':>6s} {'c.med':>6s} {'c.p95':>6s} {'c.max':>6s} "
        f"{'raw.mean':>8s} {'portrait':>8s}"
    )
    typer.echo(head)
    rows = list(result["sources"].items()) + [("overall", result["overall"])]
    for name, r in rows:
        if name == "overall":
            typer.echo("-" * len(head))
        typer.echo(
            f"{name:12s} {r['photos']:6d} {r['perfect_photos']:7d} {r['truth']:5d} "
            f"{r['true_positives']:5d} {r['false_positives']:4d} "
            f"{100 * r['precision']:6.2f}% {100 * r['recall']:6.2f}% "
            f"{_fmt(r['corner_mean'])} {_fmt(r['corner_median'])} {_fmt(r['corner_p95'])} "
            f"{_fmt(r['corner_max'])} {_fmt(r['raw_corner_mean']):>8s} "
            f"{100 * r['portrait_order_ok']:7.1f}%"
        )
    typer.echo(f"detection median {result['detect_ms_median']} ms per photo (as loaded)")
    for f in result["failures"]:
        typer.echo(f"  not perfect: {f['path']}  missed {f['missed']}  FP {f['false_positives']}")


@app.command()
def main(
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Only these sources.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    save_failures: Annotated[
        Path | None,
        typer.Option(help="Write an image of every photo with a miss or a false positive here."),
    ] = None,
    annotations: Annotated[
        Path, typer.Option(help="Folder of annotation files.")
    ] = DEFAULT_ANNOTATIONS,
    include_unreviewed: Annotated[
        bool, typer.Option(help="Also use photos not yet reviewed.")
    ] = False,
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="IoU needed for a match.")
    ] = IOU_THRESHOLD,
    alter: Annotated[
        str | None,
        typer.Option(
            help="Alter each photo first, as scripts/eval_robustness.py: "
            "blur, small, noise, jpeg95, jpeg50, dark60, warm or none."
        ),
    ] = None,
) -> None:
    """Precision, recall and corner error of vision.detect.find_cards on the annotated photos."""
    if alter is not None:
        from eval_robustness import ALTERATIONS

        if alter not in ALTERATIONS:
            raise typer.BadParameter(
                f"unknown alteration {alter!r}; one of {', '.join(sorted(ALTERATIONS))}",
                param_hint="'--alter'",
            )
    if not annotations.is_dir():
        raise typer.BadParameter(f"{annotations} is not a folder", param_hint="'--annotations'")
    if save_failures is not None and save_failures.exists() and not save_failures.is_dir():
        # Checked now: its mkdir (and FileExistsError) came after every photo had been read.
        raise typer.BadParameter(f"{save_failures} is not a folder", param_hint="'--save-failures'")
    photos = load_annotations(annotations, reviewed_only=not include_unreviewed)
    if source:
        known = sorted({p.source for p in photos})
        unknown = sorted(set(source) - set(known))
        if unknown:  # a typo selected nothing and said only "no annotated photos selected"
            raise typer.BadParameter(
                f"no annotated photos of {', '.join(unknown)}; sources: {', '.join(known)}",
                param_hint="'--source'",
            )
        photos = [p for p in photos if p.source in set(source)]
    if not photos:
        raise typer.BadParameter(f"no annotated photos in {annotations}")
    try:
        data = shared_datasets()
    except SetVisionError as error:  # no shared photos here: one line, not a traceback
        typer.echo(f"eval_detection.py: error: {error}", err=True)
        raise typer.Exit(2) from None
    assert data is not None
    scores, found, times = evaluate(photos, data, threshold, alter)
    result = report(scores, times)
    if as_json:
        typer.echo(json.dumps(result, indent=1))
    else:
        print_table(result)
    if save_failures is not None:
        save_failures.mkdir(parents=True, exist_ok=True)
        for photo, score in zip(photos, scores):
            if score.perfect:
                continue
            image = load_photo(data / photo.path)
            name = photo.path.replace("/", "__").rsplit(".", 1)[0] + ".png"
            cv2.imwrite(
                str(save_failures / name), draw_failure(image, photo, found[photo.path], score)
            )


if __name__ == "__main__":
    app()
