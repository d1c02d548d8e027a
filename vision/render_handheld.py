"""Hand-held phone footage simulated over a real table photo, with exact truth: a camera that
pans slowly over the table, shakes, blurs when it moves, under warm light, its frames JPEG
compressed as a phone's stream is. For the live overlay's tests and tuning
(:mod:`vision.render_video` renders whole games; this moves over a still, real table).

A frame is the photo seen through a moving virtual camera: a similarity (zoom, turn, shift)
with a slight tilt, from a smooth path (sums of slow sines) plus shake (fast, small random
moves). Motion blur follows each frame's own motion over an exposure time. The truth of a frame
is every annotated card's corners carried into it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.render_camera import light_gains

__all__ = ["HandheldFrame", "HandheldVideo"]

#: Exposure time of a phone's video frame in dim indoor light, seconds (1/60 s at 30 fps).
EXPOSURE_S: Final = 1 / 60
#: Long side of the frames when the size is not given, pixels (720p).
LONG_SIDE: Final = 1280
#: Shake: the camera's random jolts, smoothed over this many seconds.
SHAKE_SMOOTH_S: Final = 0.08


@dataclass(frozen=True)
class HandheldFrame:
    """One frame and its truth.

    Attributes:
        index: frame number from 0; time_s: ``index / fps``.
        image: (H, W, 3) uint8 BGR.
        corners: (N, 4, 2) float32 frame pixels of the photo's N annotated cards, in the
            annotation's order (TL, TR, BR, BL), wherever they are (in view or not).
        in_view: (N,) bool, the card lies wholly inside the frame.
        blur_px: length of this frame's motion blur, pixels.
    """

    index: int
    time_s: float
    image: npt.NDArray[np.uint8]
    corners: npt.NDArray[np.float32]
    in_view: npt.NDArray[np.bool_]
    blur_px: float


class HandheldVideo:
    """A hand-held camera over ``photo``.

    Args:
        photo: (H, W, 3) uint8 BGR, the table.
        corners: (N, 4, 2) the annotated cards' corners in the photo, pixels.
        rng: random generator (the path, the shake, the noise).
        size: frame (width, height) pixels (default: the photo's shape, the long side
            :data:`LONG_SIDE`: a phone films a table upright or across as it was taken);
            fps: frames per second; seconds: length.
        view: share of the photo the frame shows on average (0.85: a little closer than the
            photo).
        pan: how far the camera wanders, as a share of the photo's size (default: as far as
            keeps the frame inside the photo, so no edge of it is ever seen).
        shake_px: standard deviation of the shake, frame pixels.
        turn_deg: how far it turns (slow), degrees.
        warm: tungsten cast, 0..1 (as :func:`vision.render_camera.apply_effects`).
        noise: sensor noise, grey levels; jpeg: JPEG quality of each frame (0: none).
    """

    def __init__(
        self,
        photo: npt.NDArray[np.uint8],
        corners: npt.NDArray[np.floating],
        rng: np.random.Generator,
        *,
        size: tuple[int, int] | None = None,
        fps: float = 30.0,
        seconds: float = 4.0,
        view: float = 0.85,
        pan: float | None = None,
        shake_px: float = 3.0,
        turn_deg: float = 3.0,
        warm: float = 0.3,
        noise: float = 3.0,
        jpeg: int = 80,
    ) -> None:
        if fps <= 0 or seconds <= 0:
            raise ValueError(f"fps and seconds: expected > 0, got {fps}, {seconds}")
        self.photo = photo
        self.corners = np.asarray(corners, np.float32).reshape(-1, 4, 2)
        ph, pw = photo.shape[:2]
        if size is None:
            f = LONG_SIDE / max(ph, pw)
            size = (2 * round(pw * f / 2), 2 * round(ph * f / 2))
        self.size = (int(size[0]), int(size[1]))
        if pan is None:
            pan = 0.8 * (1 - view) / 2
        self.fps = float(fps)
        self.frame_count = int(round(seconds * fps))
        self.view, self.pan, self.turn_deg = view, pan, turn_deg
        self.warm, self.noise, self.jpeg = warm, noise, jpeg
        self._phases = rng.uniform(0, 2 * np.pi, 5)
        self._periods = rng.uniform(3.0, 7.0, 5)
        n = self.frame_count + 2
        jolts = rng.normal(0, 1, (n, 3))
        k = max(1, int(round(SHAKE_SMOOTH_S * fps)))
        kernel = np.ones(k) / k
        smooth = np.stack([np.convolve(jolts[:, i], kernel, "same") for i in range(3)], 1)
        smooth /= max(float(smooth.std()), 1e-6)
        self._shake = smooth * np.array([shake_px, shake_px, 0.3])  # px, px, degrees
        self._seed = int(rng.integers(2**32))

    def camera(self, t: float) -> npt.NDArray[np.float64]:
        """(3, 3) homography, photo pixels -> frame pixels at time ``t`` (seconds)."""
        ph, pw = self.photo.shape[:2]
        w, h = self.size
        wave = np.sin(2 * np.pi * t / self._periods + self._phases)
        scale = max(w / pw, h / ph) / self.view * (1 + 0.03 * wave[2])
        cx = pw / 2 + self.pan * pw * wave[0]
        cy = ph / 2 + self.pan * ph * wave[1]
        turn = self.turn_deg * wave[3]
        i = min(int(t * self.fps), len(self._shake) - 1)
        sx, sy, sturn = self._shake[i]
        move = cv2.getRotationMatrix2D((float(cx), float(cy)), float(turn + sturn), float(scale))
        move[:, 2] += np.array([w / 2 - cx + sx, h / 2 - cy + sy])
        hom = np.vstack([move, [0.0, 0.0, 1.0]])
        tilt = np.eye(3)
        tilt[2, 1] = 0.00004 * wave[4]  # a slight, slow tilt of the phone
        return tilt @ hom

    def frames(self) -> Iterator[HandheldFrame]:
        """Every frame, in order (the same frames every call)."""
        rng = np.random.default_rng(self._seed)
        w, h = self.size
        for index in range(self.frame_count):
            t = index / self.fps
            hom = self.camera(t)
            image = cv2.warpPerspective(self.photo, hom, (w, h), flags=cv2.INTER_AREA,
                                        borderMode=cv2.BORDER_REFLECT)  # fmt: skip
            # Motion blur: where the frame's centre goes during the exposure.
            centre = np.array([[[w / 2, h / 2]]], np.float64)
            before = cv2.perspectiveTransform(
                cv2.perspectiveTransform(centre, np.linalg.inv(hom)),
                self.camera(max(0.0, t - EXPOSURE_S)),
            )[0, 0]
            shift = np.array([w / 2, h / 2]) - before
            blur = float(np.hypot(*shift))
            if blur >= 1.5:
                image = _motion_blur(image, shift)
            lit = image.astype(np.float32)
            lit *= light_gains(self.warm)
            if self.noise > 0:
                lit += rng.normal(0, self.noise, lit.shape).astype(np.float32)
            image = np.clip(lit, 0, 255).astype(np.uint8)
            if self.jpeg:
                _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg])
                image = cv2.imdecode(data, cv2.IMREAD_COLOR)
            corners = (
                cv2.perspectiveTransform(self.corners.reshape(-1, 1, 2).astype(np.float64), hom)
                .reshape(-1, 4, 2)
                .astype(np.float32)
            )
            inside = ((corners >= 0) & (corners < np.array([w, h]))).all(axis=(1, 2))
            yield HandheldFrame(index, t, image, corners, inside, blur)


def _motion_blur(
    image: npt.NDArray[np.uint8], shift: npt.NDArray[np.float64]
) -> npt.NDArray[np.uint8]:
    """``image`` smeared along ``shift`` (dx, dy) pixels: a line kernel."""
    length = int(np.ceil(np.hypot(*shift)))
    size = 2 * length + 1
    kernel = np.zeros((size, size), np.float32)
    c = length
    end = (int(round(c + shift[0] / 2)), int(round(c + shift[1] / 2)))
    start = (int(round(c - shift[0] / 2)), int(round(c - shift[1] / 2)))
    cv2.line(kernel, start, end, 1.0, 1)
    kernel /= max(float(kernel.sum()), 1e-6)
    return cv2.filter2D(image, -1, kernel)
