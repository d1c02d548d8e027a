"""How the picture of the table moves from frame to frame: a homography between consecutive
frames from sparse optical flow (a hand-held phone pans and shakes; a camera on a stand drifts),
so card corners found on one frame can be carried to the next without running the detector.

The table is a plane, so a camera's move maps it by a homography. Corners are tracked with
pyramidal Lucas-Kanade on a small grey copy of the frame (:data:`WORK_WIDTH`), and the
homography is fitted with RANSAC, which leaves out points on a moving hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["WORK_WIDTH", "FrameMotion", "MotionTracker", "small_grey"]

#: Width in pixels of the grey copy that motion, touch and presence are measured on: a card of a
#: 12-card table is then about 40 px wide, enough for corners to a pixel of the copy (3 px at
#: 1080p; the detector's reads re-anchor corners every few frames).
WORK_WIDTH: Final = 480
#: Corners tracked per frame (Shi-Tomasi), and their least spacing in px of the copy.
MAX_POINTS: Final = 300
MIN_SPACING: Final = 8
#: Fresh corners are found when fewer than this many survive the flow.
RESEED_BELOW: Final = 120
#: Least RANSAC inliers for a homography; fewer (a blank table, a frame all hand): no move.
MIN_INLIERS: Final = 12
#: RANSAC reprojection threshold, px of the copy.
RANSAC_PX: Final = 1.5


def small_grey(
    frame: npt.NDArray[np.uint8], width: int = WORK_WIDTH, *, colour: bool = False
) -> npt.NDArray[np.uint8]:
    """(h, width) uint8 grey copy of a (H, W, 3) BGR frame, h keeping the aspect ratio;
    ``colour``: the (h, width, 3) BGR copy instead (``frame`` may then be that copy already)."""
    h, w = frame.shape[:2]
    height = max(1, round(h * width / w))
    if (w, h) != (width, height):
        frame = cv2.resize(frame, (width, height), interpolation=cv2.INTER_LINEAR)
    if colour or frame.ndim == 2:
        return frame
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)


@dataclass(frozen=True)
class FrameMotion:
    """The move from the previous frame to this one.

    Attributes:
        homography: (3, 3) float64, previous frame's pixels -> this frame's pixels (full-size
            frame coordinates).
        inliers: points that agreed with it (0: no estimate, identity assumed).
        shift_px: median point displacement in full-frame pixels (how fast the picture moves).
    """

    homography: npt.NDArray[np.float64]
    inliers: int
    shift_px: float


class MotionTracker:
    """Frame-to-frame homographies of the table from sparse optical flow.

    Args:
        frame_size: (width, height) of the full frames, pixels.
    """

    def __init__(self, frame_size: tuple[int, int]) -> None:
        w, h = frame_size
        self.scale = w / WORK_WIDTH  # full-frame px per px of the copy
        self._to_full = np.diag([self.scale, self.scale, 1.0])
        self._to_small = np.diag([1 / self.scale, 1 / self.scale, 1.0])
        self._prev: npt.NDArray[np.uint8] | None = None
        self._points: npt.NDArray[np.float32] | None = None

    def update(self, grey: npt.NDArray[np.uint8]) -> FrameMotion:
        """The move from the last frame given to ``grey`` (a :func:`small_grey` copy)."""
        identity = FrameMotion(np.eye(3), 0, 0.0)
        prev, points = self._prev, self._points
        self._prev = grey
        if prev is None or prev.shape != grey.shape:
            self._points = self._seed(grey)
            return identity
        if points is None or len(points) < RESEED_BELOW:
            points = self._seed(prev)
        if points is None or len(points) < MIN_INLIERS:
            self._points = self._seed(grey)
            return identity
        moved, status, _ = cv2.calcOpticalFlowPyrLK(prev, grey, points, None, winSize=(15, 15))
        ok = status.ravel() == 1
        src, dst = points[ok].reshape(-1, 2), moved[ok].reshape(-1, 2)
        if len(src) < MIN_INLIERS:
            self._points = self._seed(grey)
            return identity
        hom, mask = cv2.findHomography(src, dst, cv2.RANSAC, RANSAC_PX)
        inliers = int(mask.sum()) if mask is not None else 0
        if hom is None or inliers < MIN_INLIERS:
            self._points = self._seed(grey)
            return identity
        keep = mask.ravel().astype(bool)
        self._points = dst[keep].reshape(-1, 1, 2).astype(np.float32)
        shift = float(np.median(np.linalg.norm(dst - src, axis=1))) * self.scale
        return FrameMotion(self._to_full @ hom @ self._to_small, inliers, shift)

    def to_small(self, homography: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """A full-frame homography as one between grey copies (:func:`small_grey`)."""
        return self._to_small @ homography @ self._to_full

    @staticmethod
    def _seed(grey: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32] | None:
        points = cv2.goodFeaturesToTrack(grey, MAX_POINTS, 0.01, MIN_SPACING)
        return None if points is None else points.astype(np.float32)
