"""The detection result: :class:`CardDetections`, one frozen dataclass of array columns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["CardDetections"]


@dataclass(frozen=True)
class CardDetections:
    """Cards found in one frame.

    Attributes:
        corners: (N, 4, 2) float32 pixel coordinates (x, y) in the frame, ordered TL, TR, BR, BL
            of the card in portrait orientation (long side vertical): clockwise on screen, the
            TL-TR edge is the short edge whose midpoint is higher in the image (smaller
            ``y + 0.05 x``, so the left one for a card lying near horizontal). A
            partial card's corners may lie outside the frame.
        scores: (N,) float32 in [0, 1], confidence that the quadrilateral is a whole SET card.
        partial: (N,) bool, True for a card cut by the frame edge.
    """

    corners: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]
    partial: npt.NDArray[np.bool_]

    def __post_init__(self) -> None:
        corners = np.asarray(self.corners)
        if corners.ndim != 3 or corners.shape[1:] != (4, 2) or corners.dtype != np.float32:
            raise ValueError(
                f"corners: expected (N, 4, 2) float32, got {corners.shape} {corners.dtype}"
            )
        n = len(corners)
        scores = np.asarray(self.scores)
        if scores.shape != (n,) or scores.dtype != np.float32:
            raise ValueError(f"scores: expected ({n},) float32, got {scores.shape} {scores.dtype}")
        if n and (np.nanmin(scores) < 0.0 or np.nanmax(scores) > 1.0 or np.isnan(scores).any()):
            raise ValueError("scores: expected values in [0, 1]")
        partial = np.asarray(self.partial)
        if partial.shape != (n,) or partial.dtype != np.bool_:
            raise ValueError(f"partial: expected ({n},) bool, got {partial.shape} {partial.dtype}")
        if not np.isfinite(corners).all():
            raise ValueError("corners: expected finite values")

    @classmethod
    def empty(cls) -> CardDetections:
        """No cards."""
        return cls(np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32), np.zeros(0, np.bool_))

    def __len__(self) -> int:
        return len(self.corners)

    def whole(self) -> CardDetections:
        """Only the cards not cut by the frame edge."""
        keep = ~self.partial
        return CardDetections(self.corners[keep], self.scores[keep], self.partial[keep])
