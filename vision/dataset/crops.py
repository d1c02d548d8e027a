"""A dataset's cards as warped crops, one folder per card (torchvision's ImageFolder layout).

``crops/NN-COUNT-COLOUR-FILL-SHAPE/P-PHOTO-K.png``: each read, whole card cut from its photo by
:func:`vision.warp.warp_cards` (upright, white-balanced, the classifier's own input before its
resize). ``NN`` is the card's index 0..80, so that the folders sort in ``vision.cards`` order
(the class numbers ImageFolder gives); ``P`` the photo's number in the dataset, ``K`` the card's
on it. Partial cards and cards without a reading are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.cards import Card
from vision.dataset.records import LabelledPhoto

__all__ = ["class_folder", "export_crops"]


def class_folder(card: Card) -> str:
    """The folder name of ``card``'s crops, e.g. ``"31-2-red-open-diamond"``."""
    values = (card.count.value, card.colour.value, card.fill.value, card.shape.value)
    return f"{card.index:02d}-" + "-".join(str(v) for v in values)


def export_crops(photos: Sequence[LabelledPhoto], paths: Sequence[Path], out: Path) -> int:
    """Write the crops of ``photos`` (photo files at ``paths``) under ``out``.

    Returns:
        The number of crops written.

    Raises:
        SetVisionError, FileNotFoundError, ValueError: a photo cannot be read
            (:func:`vision.io.load_image`).
    """
    from vision.batch import write_whole
    from vision.io import load_image
    from vision.warp import warp_cards

    written = 0
    for number, (photo, path) in enumerate(zip(photos, paths, strict=True), start=1):
        cards = [c for c in photo.cards if c.card is not None and not c.partial]
        if not cards:
            continue
        frame = load_image(path)
        corners = np.array([c.corners for c in cards], np.float32)
        crops = warp_cards(frame, corners)
        for k, (card, crop) in enumerate(zip(cards, crops, strict=True)):
            assert card.card is not None
            folder = out / class_folder(card.card)
            folder.mkdir(parents=True, exist_ok=True)
            ok, data = cv2.imencode(".png", crop)
            if not ok:
                raise ValueError(f"{path}: card {k + 1}: could not encode its crop")
            write_whole(folder / f"{number}-{path.stem}-{k + 1}.png", data.tobytes())
            written += 1
    return written
