"""A dataset as YOLO files (ultralytics' layout): one card class, as boxes or with 4 corners.

Layout (https://docs.ultralytics.com/datasets/detect/ and /datasets/pose/)::

    yolo/data.yaml                 path, train, val, names (and kpt_shape, flip_idx for pose)
    yolo/images/{train,val}/NAME   the photos (links to them, or copies where links fail)
    yolo/labels/{train,val}/STEM.txt
        boxes: ``0 xc yc w h``                       (normalised to 0..1 of the photo)
        pose:  ``0 xc yc w h x1 y1 v1 ... x4 y4 v4``  (corners TL, TR, BR, BL; v 2 inside the
               photo, a corner outside it ``0 0 0``: not labelled)

Boxes are the cards' outlines clipped to the photo. Every :data:`VAL_EVERY`-th photo goes to
``val`` (all to both when there are fewer than that).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Final

import numpy as np

from vision.dataset.records import LabelledPhoto

__all__ = ["YoloKind", "export_yolo", "yolo_lines"]

#: One photo in this many goes to the validation split.
VAL_EVERY: Final = 5
#: A horizontal flip swaps left and right corners: TL <-> TR, BR <-> BL (ultralytics' flip_idx).
FLIP_IDX: Final = (1, 0, 3, 2)


class YoloKind(StrEnum):
    """What each YOLO label line holds."""

    BOXES = "boxes"
    POSE = "pose"


def yolo_lines(photo: LabelledPhoto, kind: YoloKind) -> list[str]:
    """The label file lines of ``photo`` (class 0, "card"), numbers to 6 decimals."""
    size = np.array([photo.width, photo.height], np.float64)
    lines = []
    for card in photo.cards:
        low = np.clip(card.corners.min(axis=0), 0, size) / size
        high = np.clip(card.corners.max(axis=0), 0, size) / size
        if np.any(high - low <= 0):
            continue  # wholly outside the photo
        centre, extent = (low + high) / 2, high - low
        numbers = [*centre, *extent]
        if kind is YoloKind.POSE:
            for point in card.corners:
                inside = bool(np.all((point >= 0) & (point <= size)))
                numbers += [*(point / size), 2] if inside else [0, 0, 0]
        lines.append("0 " + " ".join(_number(v) for v in numbers))
    return lines


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}"


def export_yolo(
    photos: Sequence[LabelledPhoto], paths: Sequence[Path], out: Path, kind: YoloKind
) -> int:
    """Write the YOLO dataset of ``photos`` (photo files at ``paths``) into ``out``.

    Files this export wrote before for photos no longer exported are removed; nothing else in
    ``out`` is touched.

    Returns:
        The number of photos written.
    """
    from vision.batch import write_whole

    out.mkdir(parents=True, exist_ok=True)
    many = len(photos) >= VAL_EVERY
    names: set[str] = set()
    wanted: set[Path] = set()
    for n, (photo, path) in enumerate(zip(photos, paths, strict=True)):
        split = "val" if many and n % VAL_EVERY == VAL_EVERY - 1 else "train"
        name = _unique(path.name, names)
        image = out / "images" / split / name
        label = out / "labels" / split / (Path(name).stem + ".txt")
        image.parent.mkdir(parents=True, exist_ok=True)
        label.parent.mkdir(parents=True, exist_ok=True)
        _link(path, image)
        lines = yolo_lines(photo, kind)
        write_whole(label, "".join(line + "\n" for line in lines).encode())
        wanted |= {image, label}
    for folder in ("images", "labels"):
        for old in (out / folder).rglob("*") if (out / folder).is_dir() else ():
            if (old.is_file() or old.is_symlink()) and old not in wanted:
                old.unlink()
    yaml = [f"path: {out.resolve().as_posix()}", "train: images/train"]
    yaml.append(f"val: images/{'val' if many else 'train'}")
    if kind is YoloKind.POSE:
        yaml += ["kpt_shape: [4, 3]", f"flip_idx: [{', '.join(map(str, FLIP_IDX))}]"]
    yaml += ["names:", "  0: card", ""]
    write_whole(out / "data.yaml", "\n".join(yaml).encode())
    return len(photos)


def _unique(name: str, taken: set[str]) -> str:
    stem, suffix = Path(name).stem, Path(name).suffix
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{stem}-{n}{suffix}"
    taken.add(candidate.lower())
    return candidate


def _link(photo: Path, image: Path) -> None:
    """``image`` made a link to ``photo`` (a copy where links cannot be made)."""
    target = photo.resolve()
    if image.is_symlink() or image.exists():
        if image.is_symlink() and Path(os.readlink(image)) == target:
            return
        image.unlink()
    try:
        image.symlink_to(target)
    except OSError:
        shutil.copyfile(target, image)
