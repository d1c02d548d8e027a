"""Hand-held footage over a photo (vision.render_handheld): the truth follows the picture."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.render_handheld import HandheldVideo


def _photo() -> tuple[np.ndarray, np.ndarray]:
    """A 900 x 600 grey table with two white cards (their corners, TL TR BR BL)."""
    img = np.full((600, 900, 3), 70, np.uint8)
    rng = np.random.default_rng(0)
    img += rng.integers(0, 20, img.shape, dtype=np.uint8)
    cards = np.array([[[200, 200], [300, 200], [300, 350], [200, 350]],
                      [[500, 150], [600, 150], [600, 300], [500, 300]]], np.float32)  # fmt: skip
    for q in cards:
        cv2.fillPoly(img, [q.astype(np.int32)], (240, 240, 240))
    return img, cards


def test_the_truth_corners_lie_on_the_cards_in_every_frame() -> None:
    photo, cards = _photo()
    assert HandheldVideo(photo, cards, np.random.default_rng(1)).size == (1280, 854)  # its shape
    video = HandheldVideo(photo, cards, np.random.default_rng(1), size=(480, 320), seconds=1.0,
                          noise=0, warm=0, jpeg=0)  # fmt: skip
    frames = list(video.frames())
    assert len(frames) == 30
    for f in frames:
        assert f.corners.shape == (2, 4, 2)
        for q, inside in zip(f.corners, f.in_view):
            if not inside:
                continue
            centre = q.mean(axis=0).astype(int)
            assert f.image[centre[1], centre[0]].mean() > 180  # a card's white
            outside = (q[0] + (q[0] - centre) * 0.3).astype(int)
            if (outside >= 0).all() and (outside < video.size).all():
                assert f.image[outside[1], outside[0]].mean() < 130  # the table beside it


def test_it_moves_shakes_and_blurs_and_is_the_same_every_call() -> None:
    photo, cards = _photo()
    video = HandheldVideo(photo, cards, np.random.default_rng(2), size=(480, 320), seconds=2.0,
                          shake_px=4)  # fmt: skip
    a, b = list(video.frames()), list(video.frames())
    assert all(np.array_equal(x.image, y.image) for x, y in zip(a, b))
    centres = np.array([f.corners[0].mean(axis=0) for f in a])
    assert np.ptp(centres, axis=0).max() > 5  # the camera moves
    assert max(f.blur_px for f in a) > 1.5  # and blurs while it does


@pytest.mark.parametrize(("fps", "seconds"), [(0, 1), (30, 0), (-1, 2)])
def test_bad_timing_is_refused(fps: float, seconds: float) -> None:
    photo, cards = _photo()
    with pytest.raises(ValueError, match="fps and seconds"):
        HandheldVideo(photo, cards, np.random.default_rng(0), fps=fps, seconds=seconds)
