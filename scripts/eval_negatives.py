#!/usr/bin/env python3
"""False positives of card detection on the shared negative chips.

Runs ``find_cards`` on the 1,500 chips of ``../shared/datasets/negatives.csv`` and sorts every
chip with a detection by the project's review (``datasets/negatives/review.csv``, see
:mod:`vision.negatives`): false positives (chips with no card), chips that do show cards, and
chips never reviewed (look at them, then add a row to the review).

    python scripts/eval_negatives.py
    python scripts/eval_negatives.py --list      # every chip with a detection
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from vision.errors import SetVisionError  # noqa: E402
from vision.negatives import load_review, score_negatives  # noqa: E402

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    list_chips: Annotated[
        bool, typer.Option("--list", help="Print every chip with a detection.")
    ] = False,
) -> None:
    """Count detections on the negative chips, by review verdict."""
    from vision.detect import find_cards

    try:
        review = load_review()
        score = score_negatives(lambda frame: len(find_cards(frame).corners), review)
    except (SetVisionError, ValueError, OSError) as error:
        typer.echo(f"eval_negatives: error: {error}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"{score.chips} chips read; {len(review)} reviewed")
    typer.echo(
        f"false positives: {sum(score.false_positives.values())} detections on "
        f"{len(score.false_positives)} chips with no card"
    )
    typer.echo(
        f"chips showing cards (not counted): {len(score.on_cards)} with "
        f"{sum(score.on_cards.values())} detections"
    )
    typer.echo(f"never reviewed, with detections: {len(score.unreviewed)} chips")
    groups = [("unreviewed", score.unreviewed)]
    if list_chips:
        groups += [("false positive", score.false_positives), ("card", score.on_cards)]
    for label, chips in groups:
        for path, found in sorted(chips.items()):
            typer.echo(f"  {label}: {path}  ({found} found)")


if __name__ == "__main__":
    app()
