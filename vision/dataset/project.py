"""The project's own annotations (``datasets/detection/*.json``, :mod:`vision.evaluation`) to and
from a dataset folder, and a dataset's checked photos as training truth.

The project's files name a photo by its path inside the shared datasets folder and carry
``reviewed`` per photo; a dataset names it relative to its own folder and carries ``checked`` per
photo and per card. Corners, ``partial`` and the four attributes map one to one; the project's
corners are kept to 0.1 px, so a dataset made from them comes back the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from vision.dataset.records import (
    LabelledCard,
    LabelledPhoto,
    card_attributes,
    card_from_attributes,
)
from vision.dataset.store import file_of, load_photos, photo_path
from vision.evaluation import CardTruth, PhotoTruth

__all__ = ["checked_datasets", "dataset_truths", "photos_from_truths", "truths_from_photos"]


def photos_from_truths(
    truths: Iterable[PhotoTruth], folder: Path, data_root: Path
) -> list[LabelledPhoto]:
    """The project's annotated photos as a dataset in ``folder`` (photos under ``data_root``, the
    shared datasets folder); a reviewed photo is checked, and so is each of its cards."""
    photos = []
    for truth in truths:
        cards = tuple(
            LabelledCard(
                corners=card.corners,
                card=card_from_attributes(card.attributes),
                partial=card.partial,
                checked=truth.reviewed,
            )
            for card in truth.cards
        )
        photos.append(
            LabelledPhoto(
                file=file_of(folder, data_root / truth.path),
                width=truth.width,
                height=truth.height,
                cards=cards,
                checked=truth.reviewed,
                note=truth.note,
            )
        )
    return photos


def truths_from_photos(
    photos: Iterable[LabelledPhoto], folder: Path, data_root: Path | None, source: str
) -> list[PhotoTruth]:
    """A dataset's photos in the project's form: paths relative to ``data_root`` where they lie
    under it (else absolute), ``reviewed`` when a person checked the photo."""
    truths = []
    root = None if data_root is None else data_root.resolve()
    for photo in photos:
        path = photo_path(folder, photo.file).resolve()
        name = path.as_posix()
        if root is not None and path.is_relative_to(root):
            name = path.relative_to(root).as_posix()
        cards = tuple(
            CardTruth(card.corners, card.partial, card_attributes(card.card))
            for card in photo.cards
        )
        truths.append(
            PhotoTruth(
                path=name,
                width=photo.width,
                height=photo.height,
                cards=cards,
                reviewed=photo.checked,
                source=source,
                note=photo.note,
            )
        )
    return truths


def dataset_truths(folder: str | Path) -> list[PhotoTruth]:
    """The photos a person checked in the dataset at ``folder``, as training truth: absolute
    paths (so ``root / truth.path`` is the photo whatever ``root``), source ``data:NAME`` (the
    folder's name).

    Raises:
        SetVisionError: no dataset there, or its annotations cannot be read.
    """
    from vision.dataset.store import dataset_folder

    where = dataset_folder(folder, create=False)
    checked = [p for p in load_photos(where) if p.checked]
    return truths_from_photos(checked, where, None, f"data:{where.resolve().name}")


def checked_datasets(folders: Iterable[str | Path]) -> list[Path]:
    """The training scripts' ``--data`` folders, resolved, each checked to be a dataset with at
    least one photo a person checked (said before any training starts).

    Raises:
        SetVisionError: naming the folder: no dataset there, unreadable, or nothing checked.
    """
    from vision.errors import SetVisionError

    out = []
    for folder in folders:
        try:
            truths = dataset_truths(folder)
        except SetVisionError as error:
            raise SetVisionError(f"--data {folder}: {error}") from None
        if not truths:
            raise SetVisionError(
                f"--data {folder}: no photo there is checked yet (setvision label review)"
            )
        out.append(Path(folder).resolve())
    return out
