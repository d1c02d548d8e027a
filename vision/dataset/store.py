"""A dataset folder on disk: ``annotations.json`` (COCO) and the Label Studio files beside it.

Every write replaces a file whole (:func:`vision.batch.write_whole`: a temporary file renamed
over it), so a crash or Ctrl-C leaves the previous version, never half a file; changes are read,
applied and written under a lock on the folder (:func:`update_photos`), so the review page and a
``setvision label`` run at the same time do not lose each other's edits. A folder whose
``annotations.json`` cannot be read is left exactly as it is: nothing is written into it.

Layout of ``DATASET_DIR``::

    annotations.json          COCO: every photo, card, reading, confidence, checked flag
    labelstudio_tasks.json    the same, as Label Studio tasks (import into a project)
    labelstudio_config.xml    the labelling config those tasks fit
    yolo/, crops/             optional exports (vision.dataset.yolo, vision.dataset.crops)

Photos stay where they are; ``file_name`` is their path relative to the folder.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from vision.dataset.coco import from_coco, to_coco
from vision.dataset.labelstudio import (
    LABEL_CONFIG,
    file_from_url,
    from_export,
    local_files_url,
    to_tasks,
)
from vision.dataset.records import LabelledPhoto
from vision.errors import SetVisionError

__all__ = [
    "ANNOTATIONS_FILE",
    "LABEL_STUDIO_CONFIG",
    "LABEL_STUDIO_TASKS",
    "dataset_folder",
    "file_of",
    "import_label_studio",
    "load_photos",
    "photo_path",
    "save_photos",
    "update_photos",
]

ANNOTATIONS_FILE: Final = "annotations.json"
LABEL_STUDIO_TASKS: Final = "labelstudio_tasks.json"
LABEL_STUDIO_CONFIG: Final = "labelstudio_config.xml"
#: The lock file of :func:`update_photos` (hidden: not part of the dataset).
LOCK_FILE: Final = ".setvision.lock"


def dataset_folder(path: str | Path, *, create: bool) -> Path:
    """``path`` as a dataset folder, made (with its parents) when ``create`` and missing.

    Raises:
        SetVisionError: ``path`` is a file, or (without ``create``) no dataset folder.
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise SetVisionError(f"{folder}: is a file, not a dataset folder (name a folder)")
    if not folder.is_dir():
        if not create:
            raise SetVisionError(f"{folder}: no such dataset folder")
        folder.mkdir(parents=True)
    elif not create and not (folder / ANNOTATIONS_FILE).is_file():
        raise SetVisionError(
            f"{folder}: no {ANNOTATIONS_FILE} here (make a dataset with "
            f"'setvision label PHOTOS --out {folder}')"
        )
    return folder


def load_photos(folder: Path) -> list[LabelledPhoto]:
    """The photos of the dataset in ``folder``; [] when it has no ``annotations.json`` yet.

    Raises:
        SetVisionError: the file cannot be read or is not a dataset's (said in one line, with
            what to do; the file is left as it is).
    """
    path = folder / ANNOTATIONS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise SetVisionError(f"{path}: cannot be read ({reason})") from None
    try:
        return from_coco(json.loads(text))
    except (json.JSONDecodeError, ValueError) as error:
        raise SetVisionError(
            f"{path}: not a dataset's annotations ({error}); nothing was changed: repair the "
            "file, or move it away to start again"
        ) from None


def save_photos(folder: Path, photos: list[LabelledPhoto]) -> None:
    """Write ``annotations.json`` and the Label Studio tasks and config, each whole."""
    from vision.batch import write_whole

    write_whole(folder / ANNOTATIONS_FILE, _lines(to_coco(photos)).encode())
    tasks = to_tasks(photos, lambda photo: local_files_url(photo_path(folder, photo.file)))
    write_whole(folder / LABEL_STUDIO_TASKS, _lines(tasks).encode())
    write_whole(folder / LABEL_STUDIO_CONFIG, LABEL_CONFIG.encode())


def _lines(value: dict | list) -> str:
    """JSON with one image, annotation, category or task per line: a diff shows what changed,
    and a person can read the file."""
    if isinstance(value, list):
        return "[\n" + ",\n".join(json.dumps(item) for item in value) + "\n]\n"
    parts = []
    for key, item in value.items():
        if isinstance(item, list) and item:
            rows = ",\n".join(f"  {json.dumps(row)}" for row in item)
            parts.append(f" {json.dumps(key)}: [\n{rows}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(item)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def update_photos(
    folder: Path, change: Callable[[list[LabelledPhoto]], list[LabelledPhoto]]
) -> list[LabelledPhoto]:
    """Read the dataset, apply ``change`` and write the result, under the folder's lock.

    Returns:
        The photos written.

    Raises:
        SetVisionError: the dataset cannot be read (:func:`load_photos`): nothing written.
    """
    with _locked(folder):
        photos = change(load_photos(folder))
        save_photos(folder, photos)
        return photos


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): one writer at a time is up to the user
        yield
        return
    with open(folder / LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def file_of(folder: Path, photo: Path) -> str:
    """How the dataset in ``folder`` names ``photo``: relative to it, with forward slashes
    (absolute where no relative path exists, another drive on Windows)."""
    absolute = Path(os.path.abspath(photo))
    try:
        return Path(os.path.relpath(absolute, os.path.abspath(folder))).as_posix()
    except ValueError:
        return absolute.as_posix()


def photo_path(folder: Path, file: str) -> Path:
    """The photo a dataset's ``file`` names (the inverse of :func:`file_of`)."""
    path = Path(file)
    return path if path.is_absolute() else Path(os.path.normpath(folder / path))


def file_of_url(folder: Path, url: str) -> str:
    """The dataset's ``file`` of a photo a Label Studio task names by a local-files URL.

    Raises:
        ValueError: the URL is not one of Label Studio's local files.
    """
    path = file_from_url(url)
    if path is None:
        raise ValueError(
            f"image {url!r} is no local file (tasks made by setvision carry 'setvision_file')"
        )
    return file_of(folder, path)


def import_label_studio(folder: Path, export: Path) -> tuple[int, int]:
    """Bring a Label Studio JSON export (Export -> JSON) into the dataset in ``folder``.

    Each task a person submitted replaces that photo's cards (its checks are newer than what
    the dataset holds) or adds the photo; tasks skipped or never opened change nothing.

    Returns:
        (photos taken from the export, of which new to the dataset).

    Raises:
        SetVisionError: the export or the dataset cannot be read (nothing written).
    """
    try:
        tasks = json.loads(export.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SetVisionError(f"{export}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise SetVisionError(f"{export}: not a Label Studio JSON export ({reason})") from None
    counts = [0, 0]

    def size_of(file: str) -> tuple[int, int]:
        from vision.io import load_image

        frame = load_image(photo_path(folder, file))
        return frame.shape[1], frame.shape[0]

    def change(photos: list[LabelledPhoto]) -> list[LabelledPhoto]:
        known = {p.file: p for p in photos}
        try:
            done = from_export(tasks, known, lambda url: file_of_url(folder, url), size_of)
        except ValueError as error:
            raise SetVisionError(f"{export}: {error}") from None
        where = {p.file: i for i, p in enumerate(photos)}
        for photo in done:
            if photo.file in where:
                photos[where[photo.file]] = photo
            else:
                where[photo.file] = len(photos)
                photos.append(photo)
                counts[1] += 1
        counts[0] = len(done)
        return photos

    update_photos(folder, change)
    return counts[0], counts[1]
