"""Cards from the learned segmenter, as :class:`vision.detect.CardDetections`: the network's
quads put in portrait corner order, checked for a card's shape, cut by the frame edge or not,
and their sides snapped to the card's edges in the full-resolution frame."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.geometry import order_corners, quad_area
from vision.detect.learned import CardSegmenter
from vision.detect.plausible import plausible
from vision.detect.refine import refine
from vision.detect.result import CardDetections

__all__ = ["MIN_SCORE", "WORK_LONG_SIDE", "LearnedDetector", "find_cards", "find_cards_learned"]

#: A card's long side over its short side is 89 / 57 = 1.56; a camera at 60 degrees
#: foreshortens a card lying across its view to about 0.8, one along it to about 3.1.
MIN_SIDE_RATIO: Final = 0.75
MAX_SIDE_RATIO: Final = 3.2
#: Frames with a side under this many pixels hold no readable card (and the network would
#: see them as a line of pixels).
MIN_FRAME_SIDE: Final = 16
#: A quad reaching this share of its short side past the frame edge is a card cut by it
#: (``partial``); past :data:`CUT_TOO_FAR`, too little of it shows to be reported.
CUT_TOLERANCE: Final = 0.02
CUT_TOO_FAR: Final = 0.25
#: Least mean card probability over a card's piece. Chosen on the leave-source-out folds of
#: the annotated photos (webrew not looked at): of the cards found, 1% score under 0.86 and 5%
#: under 0.96; most false ones score 0.5-0.8.
MIN_SCORE: Final = 0.75
#: Least area of a card against the median of the frame's cards (with 3 or more found): the
#: cards of one table are of one size, give or take the perspective. On the folds, 1% of the
#: true cards came under 0.65; most false ones (a symbol, a piece of a card) under 0.4.
MIN_AREA_SHARE: Final = 0.4
#: The scene check (:func:`vision.detect.plausible.plausible`) looks at the frame shrunk by the
#: largest integer factor that keeps its long side at this many pixels or more: its thresholds
#: (grain in grey levels, ink crops warped from that image) were set on the working image of the
#: older contour detector (deleted, #33), which shrank frames to a long side near 640 px.
WORK_LONG_SIDE: Final = 640


def find_cards_learned(
    frame: npt.NDArray[np.uint8],
    segmenter: CardSegmenter,
    *,
    refine_corners: bool = True,
    check_scene: bool = True,
) -> CardDetections:
    """Every card the segmenter finds in a frame.

    Args:
        frame: (H, W, 3) uint8 BGR.
        segmenter: the loaded model.
        refine_corners: snap each side to the strongest edge near it in the full-resolution
            frame (:func:`vision.detect.refine.refine`).
        check_scene: drop what is not plausibly a SET card of this scene
            (:func:`vision.detect.plausible.plausible`: colourless ink among coloured cards, a
            blank grainy patch, far smaller than the cards around it).

    Returns:
        :class:`CardDetections` in frame pixels, corners TL, TR, BR, BL of the portrait card.

    Raises:
        ValueError: if ``frame`` is not an (H, W, 3) uint8 array.
    """
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        shape = getattr(frame, "shape", None)
        raise ValueError(f"frame: expected (H, W, 3) uint8 BGR, got shape {shape}")
    if frame.dtype != np.uint8:
        raise ValueError(f"frame: expected uint8, got {frame.dtype}")
    if min(frame.shape[:2]) < MIN_FRAME_SIDE:
        return CardDetections.empty()
    found = segmenter.find(frame)
    quads = found.corners.astype(np.float64)
    keep = found.scores >= MIN_SCORE
    if keep.sum() >= 3:
        area = quad_area(quads)
        keep &= area >= MIN_AREA_SHARE * np.median(area[keep])
    quads, scores = quads[keep], found.scores[keep]
    if not len(quads):
        return CardDetections.empty()
    h, w = frame.shape[:2]
    if refine_corners:
        k = max(1, round(max(h, w) / segmenter.long_side))
        quads = refine(frame, order_corners(quads), k)
    quads = order_corners(quads)
    sides = np.linalg.norm(np.roll(quads, -1, axis=1) - quads, axis=2)
    short = np.minimum(sides[:, 0] + sides[:, 2], sides[:, 1] + sides[:, 3]) / 2
    long = np.maximum(sides[:, 0] + sides[:, 2], sides[:, 1] + sides[:, 3]) / 2
    ratio = long / np.maximum(short, 1e-6)
    beyond = np.maximum(
        np.maximum(-quads[..., 0], quads[..., 0] - (w - 1)).max(axis=1),
        np.maximum(-quads[..., 1], quads[..., 1] - (h - 1)).max(axis=1),
    )
    keep = (
        (ratio >= MIN_SIDE_RATIO)
        & (ratio <= MAX_SIDE_RATIO)
        & (beyond <= CUT_TOO_FAR * short)
        & (quad_area(quads) > 0)
    )
    partial = beyond > CUT_TOLERANCE * short
    quads, scores, partial = quads[keep], scores[keep], partial[keep]
    if check_scene and len(quads) >= 2:
        # Judged on an image of the size its thresholds were set on (WORK_LONG_SIDE).
        k = max(1, max(h, w) // WORK_LONG_SIDE)
        small = frame if k == 1 else cv2.resize(frame, (w // k, h // k),
                                                interpolation=cv2.INTER_AREA)  # fmt: skip
        ok = plausible(small, (quads + 0.5) / k - 0.5, partial)
        quads, scores, partial = quads[ok], scores[ok], partial[ok]
    return CardDetections(quads.astype(np.float32), scores.astype(np.float32), partial)


class LearnedDetector:
    """A detector for :func:`vision.pipeline.recognise` (frame -> :class:`CardDetections`)
    with the learned model: the packaged one (:func:`vision.models.detector_path`) or
    ``path``. Picklable for worker processes: each loads its own session on first use.

    Args:
        path: a card detector ``.onnx`` with its ``.json`` (None: the packaged one).
    """

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._segmenter: CardSegmenter | None = None

    def __call__(self, frame: npt.NDArray[np.uint8]) -> CardDetections:
        if self._segmenter is None:
            from vision.models import detector_path

            self._segmenter = CardSegmenter(self.path or detector_path())
        return find_cards_learned(frame, self._segmenter)

    def __getstate__(self) -> dict[str, str | None]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, str | None]) -> None:
        self.path = state["path"]
        self._segmenter = None


#: The packaged model, loaded on first use, once per process.
_PACKAGED = LearnedDetector()


def find_cards(frame: npt.NDArray[np.uint8]) -> CardDetections:
    """Every card in a frame, found by the packaged model (``models/card_detector.onnx``).

    Args:
        frame: (H, W, 3) uint8 BGR.

    Returns:
        :class:`CardDetections` in frame pixels: corners (N, 4, 2) float32 TL, TR, BR, BL of the
        portrait card, scores (N,) float32 in [0, 1] (mean card probability over the card),
        partial (N,) bool (cut by the frame edge).
    """
    return _PACKAGED(frame)
