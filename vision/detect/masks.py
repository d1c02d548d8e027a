"""The working image (the frame shrunk by an integer factor) and its binary candidate masks."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "BRIGHT_TO",
    "CAST_FROM",
    "CAST_TO",
    "KERNEL3",
    "KERNEL5",
    "KERNEL7",
    "WHITE_LEVEL",
    "WORK_LONG_SIDE",
    "balance",
    "brighten",
    "calmed",
    "candidate_masks",
    "noise_level",
    "shrink",
]


#: Smallest long side of the working image in pixels: the frame is shrunk by the largest
#: integer factor that keeps its long side at or above this.
WORK_LONG_SIDE: Final = 640


#: Grey level (darkest channel) that the whitest surfaces of a scene (its brightest 1 %: paper,
#: a white tray) reach at least: a dimmer working image is brightened (see :func:`brighten`).
#: Every annotated photo reaches 156 or more; the detector's absolute thresholds (edge
#: strengths, step sizes) were set on such scenes.
WHITE_LEVEL: Final = 150.0


#: The level a dim working image's whites are brought to: the median of the annotated photos
#: as taken (216; 5th percentile 173). Brought only to :data:`WHITE_LEVEL`, the photos darkened
#: to 60 % (whites 93 to 153) kept their tray cells' faint card edges under the thresholds
#: (detection recall 97.8 %, 18 koff cards lost or replaced by their cells); brought to 216,
#: 98.9 % (200: 98.4 %, 235: 99.0 %).
BRIGHT_TO: Final = 216.0


#: Largest gain :func:`brighten` applies (a darker scene is mostly noise).
MAX_GAIN: Final = 2.0


#: Colour cast (largest over smallest of the three channels' whites, see :func:`balance`) from
#: which the working image is balanced, and the cast it is brought down to. The 122 annotated
#: photos, as they were taken, reach 1.00 to 1.28 (median 1.07; two over 1.25, their
#: detections unchanged by the balance); under the warm light of ``scripts/eval_robustness.py``
#: (blue x 0.75, red x 1.1) 1.21 to 1.80.
CAST_FROM: Final = 1.25
CAST_TO: Final = 1.1


KERNEL3: Final = np.ones((3, 3), np.uint8)


KERNEL5: Final = np.ones((5, 5), np.uint8)


KERNEL7: Final = np.ones((7, 7), np.uint8)


def shrink(frame: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.uint8], int]:
    """Working image (the frame shrunk by an integer factor k, area-averaged) and k.

    k brings the long side near :data:`WORK_LONG_SIDE`, but never shrinks the short side under
    16 px (a 20 x 20000 strip is searched as it is, not reduced to nothing)."""
    h, w = frame.shape[:2]
    k = max(1, min(int(max(h, w) / WORK_LONG_SIDE), min(h, w) // 16))
    if k == 1:
        return frame, 1
    hh, ww = h // k, w // k
    src = frame[: hh * k, : ww * k]  # exact multiples keep OpenCV on its fast integer path
    if k == 2:
        return cv2.resize(src, (ww, hh), interpolation=cv2.INTER_AREA), k
    # A general INTER_AREA resize of a 12 MP photo costs ~30 ms on one core; a bilinear step to
    # twice the target and an exact 2x area step cost ~10 ms and look the same at this scale.
    # For k = 6, 10, ... the bilinear step lands exactly on pixel centres (pixel 3i + 1 for
    # k = 6), so it is a pure subsample: INTER_NEAREST_EXACT picks the same pixels at half the
    # cost (bit-identical result).
    step = cv2.INTER_NEAREST_EXACT if k % 4 == 2 else cv2.INTER_LINEAR
    half = cv2.resize(src, (ww * 2, hh * 2), interpolation=step)
    return cv2.resize(half, (ww, hh), interpolation=cv2.INTER_AREA), k


#: Estimated sensor noise (grey levels, :func:`noise_level`) of the working image above which
#: it is smoothed before the search, and the Gaussian sigmas (px) used: :data:`CALM_SIGMA`
#: [0] up to :data:`CALM_STRONG_ABOVE`, [1] beyond. The 122 annotated photos measure 0 to
#: 4.7 but for one carpet (jtclark2 IMG_6440, 7.9: its texture; its cards are found as before).
#: A 717 x 960 koff tray photo (working image = photo) with Gaussian noise of sigma 12
#: measures 10.3 and lost all 12 cards (sigma 4: 4 false cards on the wood); smoothed, 12.
#: A stronger smoothing is no cure-all: sigma 2 on the clean koff photo lost every card.
CALM_ABOVE: Final = 3.5
CALM_STRONG_ABOVE: Final = 12.0
CALM_SIGMA: Final = (1.0, 1.5)
#: Smallest long side (px) of a working image whose noise is estimated: the estimate needs a
#: scene with some plain surface. A 144 x 224 negative chip filled by one striped symbol
#: measured 6.1 (its stripes, not noise) and, smoothed, showed a card-shaped rectangle.
CALM_MIN_SIDE: Final = 400


def noise_level(image: npt.NDArray[np.uint8]) -> float:
    """Estimated noise of an image, in grey levels: the 10th percentile over 8 x 8 blocks of
    the spread of the grey image's residual from its 3 x 3 mean, scaled to a sigma (x 1.5,
    measured on added Gaussian noise). The quietest blocks (paper, a plain table) show the
    sensor's noise; texture and edges lie in the others.

    Args:
        image: (H, W, 3) uint8 BGR or (H, W) uint8 grey.
    """
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    g = grey.astype(np.float32)
    residual = g - cv2.blur(g, (3, 3))
    h, w = (d // 8 * 8 for d in residual.shape)
    if h == 0 or w == 0:
        return 0.0
    blocks = residual[:h, :w].reshape(h // 8, 8, w // 8, 8).std(axis=(1, 3))
    return float(np.percentile(blocks, 10) * 1.5)


def calmed(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``image`` smoothed (Gaussian) when its long side is :data:`CALM_MIN_SIDE` or more and
    its :func:`noise_level` over :data:`CALM_ABOVE`, else ``image`` itself. (H, W, 3) uint8
    BGR in and out."""
    if max(image.shape[:2]) < CALM_MIN_SIDE:
        return image
    level = noise_level(image)
    if level <= CALM_ABOVE:
        return image
    sigma = CALM_SIGMA[0] if level <= CALM_STRONG_ABOVE else CALM_SIGMA[1]
    return cv2.GaussianBlur(image, (0, 0), sigma)


def _levels(image: npt.NDArray[np.uint8], fraction: float) -> list[float]:
    """Per channel of a uint8 (H, W) or (H, W, C) image: the grey level under which
    ``fraction`` of its pixels lie (OpenCV's histogram: no per-channel copies)."""
    levels = []
    for c in range(1 if image.ndim == 2 else image.shape[2]):
        counts = cv2.calcHist([image], [c], None, [256], [0, 256]).ravel().cumsum()
        levels.append(float(np.searchsorted(counts, fraction * counts[-1])))
    return levels


def balance(small: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The working image with a strong colour cast reduced (a warm lamp, a blue window).

    The detector's colour cues (paper whiter than the table, the warmth edge between cream
    paper and a bluish tray) were set on scenes as photographed, whose casts vary; under a
    stronger one, paper loses its whiteness in one channel and cards go unfound (recall 93.5 %
    under the warm light of ``scripts/eval_robustness.py``). Each channel's white is its 99th
    percentile level (the paper, a white tray). When the largest over the smallest exceeds
    :data:`CAST_FROM`, the weaker channels are raised (gains >= 1, by a von Kries diagonal
    scaling, the same in every pixel) until that ratio is :data:`CAST_TO`, with a gain of at
    most :data:`MAX_GAIN` (a near-empty channel is the scene's colour, not the light's);
    otherwise the image is returned as it is (the same object).

    Measured (``scripts/eval_detection.py --alter warm``, 122 annotated photos): recall 93.5
    -> 97.9 %, precision 98.3 -> 99.3 %. The photos as taken (two over :data:`CAST_FROM`,
    their corners moved 0.2 px at most) and the 1,500 negative chips give the same
    detections; the darkened, blurred, smaller, noisy and re-saved copies and the synthetic
    stress set the same figures.

    Args:
        small: (H, W, 3) uint8 BGR working image.

    Returns:
        (H, W, 3) uint8 BGR, balanced or ``small`` itself.
    """
    whites = np.maximum(_levels(small, 0.99), 1.0)
    cast = float(whites.max() / whites.min())
    if cast <= CAST_FROM:
        return small
    # Gains (white_max / white_c) ** p leave the cast at cast ** (1 - p) = CAST_TO.
    power = 1.0 - np.log(CAST_TO) / np.log(cast)
    gains = np.minimum((whites.max() / whites) ** power, MAX_GAIN)
    levels = np.arange(256, dtype=np.float64)
    lut = np.stack([np.clip(levels * g + 0.5, 0, 255) for g in gains], axis=1).astype(np.uint8)
    return cv2.LUT(small, lut[None])


def brighten(small: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.uint8], float]:
    """The working image brought up to a normal exposure, and the gain applied (>= 1).

    A dim scene (a dark room) lowers every contrast in proportion: a card's faint edge against
    a white tray cell falls under the detector's absolute thresholds, the card's region does
    not close and the tray cell is taken for it. When the scene's whitest 1 % (darkest channel)
    is under :data:`WHITE_LEVEL`, every channel is multiplied up to bring it to
    :data:`BRIGHT_TO`, a typical photo's (at most :data:`MAX_GAIN`); brighter scenes are
    returned as they are.
    """
    white = cv2.min(cv2.min(small[..., 0], small[..., 1]), small[..., 2])
    (top,) = _levels(white, 0.99)  # 99th percentile level
    if top >= WHITE_LEVEL:
        return small, 1.0
    gain = min(MAX_GAIN, BRIGHT_TO / max(top, 1.0))
    lut = np.clip(np.arange(256) * gain + 0.5, 0, 255).astype(np.uint8)
    return cv2.LUT(small, lut), gain


def candidate_masks(small: npt.NDArray[np.uint8]) -> tuple[list[np.ndarray], np.ndarray]:
    """Binary candidate masks (uint8 0/255) of the working image, and an edge map.

    A whiteness threshold (Otsu's level of the per-pixel channel minimum) finds paper on darker
    or coloured surfaces; the regions enclosed by edges and thin dark lines (the seam between
    two touching cards, found by a black-hat filter) separate touching cards and find cards on
    light surfaces and under uneven light; the regions enclosed by faint edges (gaps closed)
    find cards on white trays. The edge map (faint edges) is for outlines that do not close (a
    white card on a white desk shows three sides at best). Measured on the annotated photos,
    more threshold levels, a local (adaptive) threshold and the threshold mask cut by the edges
    added nothing.
    """
    blue, green, red = cv2.split(small)  # contiguous planes: no per-call copies of views
    white = cv2.min(cv2.min(blue, green), red)
    white = cv2.GaussianBlur(white, (3, 3), 0)
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    _, paper = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    dx, dy = cv2.spatialGradient(grey)  # the 3x3 Sobel pair in one pass (CV_16S)
    edges = cv2.Canny(dx, dy, 20, 50, L2gradient=True)
    faint = cv2.Canny(dx, dy, 10, 25, L2gradient=True)
    seams = cv2.morphologyEx(white, cv2.MORPH_BLACKHAT, KERNEL7)
    cuts = cv2.bitwise_or(edges, cv2.threshold(seams, 7, 255, cv2.THRESH_BINARY)[1])
    # Warmth edges (R - B): cream paper on a bluish-white tray or desk differs in hue more
    # than in grey level.
    warm = cv2.addWeighted(red, 0.5, blue, -0.5, 128.0)
    # cv2.Canny of an image takes its Sobel pair with replicated borders: the same, faster.
    wx, wy = cv2.spatialGradient(cv2.GaussianBlur(warm, (5, 5), 0), borderType=cv2.BORDER_REPLICATE)
    warm_edges = cv2.Canny(wx, wy, 15, 40, L2gradient=True)
    cuts = cv2.bitwise_or(cuts, warm_edges)
    keep = cv2.bitwise_not(cv2.dilate(cuts, KERNEL3))
    near = cv2.dilate(faint, KERNEL3)
    closed = cv2.bitwise_not(cv2.dilate(near, KERNEL3))  # = faint dilated by 5 x 5
    return [paper, keep, closed], near
