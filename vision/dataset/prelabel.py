"""Pre-labels: every card the detector finds on a photo, read by the classifier.

The reading is ``setvision photo``'s (:func:`vision.batch.process_photos`, the whole pipeline with
its table-level colour and one-deck decoding); each card keeps the confidence of its reading.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vision.dataset.records import LabelledCard, LabelledPhoto, card_from_attributes

__all__ = ["Prelabelled", "photo_from_reading", "prelabel"]


@dataclass(frozen=True)
class Prelabelled:
    """One photo pre-labelled, or why it could not be.

    Attributes:
        photo: the photo's path as given.
        labelled: its cards (``file`` as the dataset names it), None when it was not read.
        error: one line saying why it was not read, else None.
    """

    photo: Path
    labelled: LabelledPhoto | None
    error: str | None = None


def photo_from_reading(reading: dict[str, Any], file: str) -> LabelledPhoto:
    """A pre-labelled photo from ``setvision photo --json``'s object for it
    (:meth:`vision.table.Table.to_json`). On a colourless photo (no colour could be read) the
    cards are left unread (``card`` None): a person sets them."""
    cards = []
    for item in reading["cards"]:
        card = None if item["colour"] is None else card_from_attributes(item)
        cards.append(
            LabelledCard(
                corners=item["corners"],
                card=card,
                partial=bool(item["partial"]),
                confidence=None if card is None else float(item["confidence"]),
            )
        )
    return LabelledPhoto(
        file=file, width=int(reading["width"]), height=int(reading["height"]), cards=tuple(cards)
    )


def prelabel(
    photos: Sequence[Path],
    files: Sequence[str],
    *,
    model: str | Path | None = None,
    jobs_n: int = 1,
    classifier: Any = None,
    **options: Any,
) -> Iterator[Prelabelled]:
    """Pre-label ``photos`` in order, one :class:`Prelabelled` each.

    Args:
        photos: photo paths.
        files: how the dataset names each photo (:func:`vision.dataset.store.file_of`).
        model, jobs_n, classifier, options: as :func:`vision.batch.process_photos`
            (``detector``, ``max_pixels``, ...).

    Raises:
        SetVisionError: the classifier cannot be loaded.
    """
    from vision.batch import PhotoJob, process_photos

    jobs = [PhotoJob(photo, None) for photo in photos]
    named = dict(zip(photos, files, strict=True))
    stream = process_photos(jobs, model=model, jobs_n=jobs_n, classifier=classifier, **options)
    for outcome in stream:
        if outcome.result is None:
            yield Prelabelled(outcome.photo, None, outcome.error or f"{outcome.photo}: not read")
        else:
            yield Prelabelled(
                outcome.photo, photo_from_reading(outcome.result, named[outcome.photo])
            )
