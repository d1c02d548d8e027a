"""Camera and lighting effects for rendered cards and tables.

Part of :mod:`vision.render` (import the public names from there). Each effect imitates a failure
seen in real photos (``../shared/datasets`` and ``PRIOR_ART.md``): colour casts from tungsten or
cool light, dim noisy webcam frames, defocus and motion blur, JPEG blocks, shadows across cards
and specular glare on glossy card stock.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["apply_camera", "apply_effects", "jitter_corners"]


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cells: int) -> npt.NDArray[np.float32]:
    """Low-frequency noise (h, w) float32, roughly unit variance, ``cells`` blobs across."""
    gh = max(2, int(round(cells * h / max(h, w))) + 1)
    gw = max(2, int(round(cells * w / max(h, w))) + 1)
    small = rng.normal(0.0, 1.0, (gh, gw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _soft_blur(img: npt.NDArray, sigma: float) -> npt.NDArray:
    """Gaussian blur; for large ``sigma`` done at a reduced resolution (same look, far faster)."""
    if sigma <= 2.5:
        return cv2.GaussianBlur(img, (0, 0), sigma)
    h, w = img.shape[:2]
    f = min(int(sigma / 1.2), max(min(h, w) // 4, 1))
    small = cv2.resize(img, (max(w // f, 1), max(h // f, 1)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / f)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _perspective_jitter(
    img: npt.NDArray[np.float32], rng: np.random.Generator, amount: float
) -> npt.NDArray[np.float32]:
    h, w = img.shape[:2]
    src = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    dst = src + rng.uniform(-amount, amount, (4, 2)).astype(np.float32) * np.float32(min(h, w))
    hom = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(img, hom, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REFLECT)  # fmt: skip


def _defocus(img: npt.NDArray[np.float32], radius: float) -> npt.NDArray[np.float32]:
    r = int(np.ceil(radius))
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    kernel = np.clip(radius + 0.5 - np.hypot(xx, yy), 0, 1).astype(np.float32)
    return cv2.filter2D(img, -1, kernel / kernel.sum(), borderType=cv2.BORDER_REFLECT)


def _motion(img: npt.NDArray[np.float32], length: float, angle: float) -> npt.NDArray[np.float32]:
    size = int(np.ceil(length)) | 1
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    dx, dy = np.cos(angle) * length / 2, np.sin(angle) * length / 2
    p0 = (int(round((c - dx) * 16)), int(round((c - dy) * 16)))
    p1 = (int(round((c + dx) * 16)), int(round((c + dy) * 16)))
    cv2.line(kernel, p0, p1, 1.0, 1, cv2.LINE_AA, 4)
    if kernel.sum() <= 0:
        return img
    return cv2.filter2D(img, -1, kernel / kernel.sum(), borderType=cv2.BORDER_REFLECT)


def _shadow_mask(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    """A hard-edged cast shadow (1 inside) from a random polygon entering from one side."""
    mask = np.zeros((h, w), np.float32)
    side = rng.integers(4)
    edge = [(0, 0), (w, 0), (w, h), (0, h)]
    a, b = edge[side], edge[(side + 1) % 4]
    inward = rng.uniform(0.15, 0.6)
    cx, cy = w / 2, h / 2
    pts = [a, b]
    for t in (0.8, 0.5, 0.2):
        px = a[0] + (b[0] - a[0]) * t + (cx - (a[0] + (b[0] - a[0]) * t)) * inward * 2
        py = a[1] + (b[1] - a[1]) * t + (cy - (a[1] + (b[1] - a[1]) * t)) * inward * 2
        px += rng.normal(0, 0.08) * w
        py += rng.normal(0, 0.08) * h
        pts.append((px, py))
    cv2.fillPoly(mask, [np.round(np.array(pts) * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    return mask


def apply_camera(
    image: npt.NDArray[np.uint8],
    rng: np.random.Generator,
    strength: float = 0.5,
    *,
    perspective: bool = True,
    unit: float | None = None,
) -> npt.NDArray[np.uint8]:
    """Photograph ``image``: light, lens, sensor and codec effects, each at random.

    Effects, each applied with a probability and magnitude that grow with ``strength``:
    perspective jitter (only with ``perspective=True``), exposure and gamma, white balance /
    colour cast (warm tungsten, cool daylight, green-magenta tint, dim), a soft shadow gradient,
    a hard cast shadow edge, a specular glare blob, vignetting, defocus / Gaussian / motion blur,
    in-camera sharpening, sensor noise, a tone curve, JPEG re-encoding at a random quality.

    Args:
        image: (H, W, 3) uint8 BGR crop or frame (not modified).
        rng: random generator (the only source of randomness).
        strength: 0 returns an unchanged copy, 1 is harsh (still readable by a person).
        perspective: allow a small geometric warp; turn off when pixel coordinates must stay
            exact (ground-truth corners of a rendered table).
        unit: image pixels per classifier-crop pixel, which scales blur radii (a card about
            ``160 * unit`` pixels wide); by default the image is taken to be crop-sized
            (``min(H, W) / 250``). Pass the cards' width / 160 for a whole frame.

    Returns:
        New (H, W, 3) uint8 BGR image.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image: expected (H, W, 3) uint8 BGR, got {image.shape} {image.dtype}")
    s = float(np.clip(strength, 0.0, 1.0))
    if s == 0.0:
        return image.copy()
    h, w = image.shape[:2]
    img = image.astype(np.float32)

    def chance(p: float) -> bool:
        return bool(rng.random() < p * s)

    if perspective and chance(0.6):
        img = _perspective_jitter(img, rng, 0.03 * s)

    # Light: shadows, glare and vignetting act on the scene before the camera's response. They
    # are smooth, so they are computed at a quarter of the resolution and scaled up.
    lh, lw = max(h // 4, 2), max(w // 4, 2)
    light = np.ones((lh, lw), np.float32)
    glare = None
    yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float32)
    yy /= lh
    xx /= lw
    if chance(0.7):  # soft gradient (lamp falloff, a hand's soft shadow)
        ang = rng.uniform(0, 2 * np.pi)
        ramp = np.cos(ang) * (xx - 0.5) + np.sin(ang) * (yy - 0.5)
        light *= 1.0 - rng.uniform(0.1, 0.45) * s * np.clip(ramp + 0.5, 0, 1)
    if chance(0.5):  # uneven illumination
        light *= 1.0 + 0.12 * s * _smooth_noise(rng, lh, lw, 3)
    if chance(0.5):  # vignetting
        r2 = (xx - 0.5) ** 2 + (yy - 0.5) ** 2
        light *= 1 - rng.uniform(0.1, 0.6) * s * r2
    if chance(0.35):  # specular glare: a bright, partly saturated blob
        cx, cy = rng.uniform(0, 1, 2)
        sx = rng.uniform(0.04, 0.25)
        sy = sx * rng.uniform(0.4, 1.6) * w / h
        glare = (
            rng.uniform(80, 260) * s * np.exp(-(((xx - cx) / sx) ** 2 + ((yy - cy) / sy) ** 2) / 2)
        )
    light = cv2.resize(light, (w, h), interpolation=cv2.INTER_LINEAR)
    if chance(0.45):  # hard cast shadow (an arm, the phone, a lamp edge), at full resolution
        mask = _shadow_mask(rng, h, w)
        soft = rng.uniform(0.5, 0.03 * min(h, w) + 0.6)
        mask = _soft_blur(mask, soft)
        light *= 1.0 - rng.uniform(0.25, 0.6) * s * mask

    # Colour cast: white balance of the light / camera (B, G, R gains), and exposure.
    gains = np.ones(3)
    if chance(0.8):
        kind = rng.choice(["warm", "cool", "tint", "random"], p=[0.4, 0.25, 0.15, 0.2])
        if kind == "warm":  # tungsten
            k = rng.uniform(0.1, 0.45) * s
            gains = np.array([1 - k, 1 - 0.3 * k, 1 + 0.25 * k])
        elif kind == "cool":
            k = rng.uniform(0.05, 0.3) * s
            gains = np.array([1 + 0.4 * k, 1 + 0.05 * k, 1 - 0.35 * k])
        elif kind == "tint":  # fluorescent green / magenta
            k = rng.normal(0, 0.15) * s
            gains = np.array([1 - 0.5 * k, 1 + k, 1 - 0.5 * k])
        else:
            gains = 1 + rng.normal(0, 0.12, 3) * s
    dim = chance(0.25)
    exposure = rng.uniform(0.3, 0.6) if dim else 2.0 ** rng.normal(-0.1, 0.3 * s)
    gains = (np.clip(gains, 0.2, 3.0) * exposure).astype(np.float32)
    if glare is not None:
        img += cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR)[:, :, None]
    img *= light[:, :, None]
    img *= gains

    # Lens: defocus, Gaussian or motion blur.
    scale = min(h, w) / 250.0 if unit is None else float(unit)  # blur radii in crop pixels
    if chance(0.6):
        kind = rng.choice(["gauss", "defocus", "motion"], p=[0.45, 0.3, 0.25])
        if kind == "gauss":
            img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.6) * s * scale + 0.2)
        elif kind == "defocus":
            img = _defocus(img, rng.uniform(0.6, 2.5) * s * scale + 0.3)
        else:
            img = _motion(img, rng.uniform(2, 8) * s * scale + 1, rng.uniform(0, np.pi))

    if chance(0.4):  # in-camera sharpening (phones): unsharp mask, halos at edges
        amount = np.float32(rng.uniform(0.3, 1.2))
        soft = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.8, 2.0) * max(scale, 0.5))
        img = img + amount * (img - soft)

    # Sensor: read + shot noise (stronger when dim), mostly luminance, some chroma.
    noise_level = rng.uniform(0.5, 4.0) * s * (1.8 if dim else 1.0)
    if noise_level > 0.3:
        grain = _noise_tile(rng, h, w)
        img += grain * np.float32(noise_level)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if chance(0.4):  # tone curve
        gamma = rng.uniform(0.8, 1.25)
        lut = np.clip(255.0 * (np.arange(256) / 255.0) ** gamma, 0, 255).astype(np.uint8)
        out = cv2.LUT(out, lut)

    if chance(0.8):  # JPEG re-encoding
        quality = int(rng.uniform(35, 95) if s > 0.5 else rng.uniform(60, 95))
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def apply_effects(
    image: npt.NDArray[np.uint8],
    rng: np.random.Generator,
    *,
    unit: float = 1.0,
    glare: float = 0.0,
    glare_at: tuple[float, float] | None = None,
    shadow: float = 0.0,
    warm: float = 0.0,
    exposure: float = 1.0,
    blur: float = 0.0,
    motion: float = 0.0,
    noise: float = 0.0,
) -> npt.NDArray[np.uint8]:
    """Photograph ``image`` with chosen effects at chosen strengths (0 leaves an effect out).

    Unlike :func:`apply_camera`, nothing is left to chance but positions and directions, so a
    stress test can vary one condition at a time. Effects apply in the order of a camera: light
    on the scene (glare, shadow), white balance and exposure, lens blur, sensor noise.

    Args:
        image: (H, W, 3) uint8 BGR frame (not modified).
        rng: random generator (glare position when ``glare_at`` is None, shadow shape, motion
            direction, noise pattern).
        unit: frame pixels per classifier-crop pixel (a card is about ``160 * unit`` pixels
            wide); glare size and blur lengths scale with it.
        glare: peak grey levels added by a specular blob about a card wide.
        glare_at: the blob's centre (x, y) in pixels; random when None.
        shadow: darkening (0..1) inside a hard-edged cast shadow entering from one side, plus a
            soft falloff of half as much across the frame.
        warm: tungsten cast, 0..1 (blue x ``1 - warm``, red x ``1 + warm / 4``).
        exposure: gain on every channel (0.4 is a dim room).
        blur: Gaussian defocus sigma in crop pixels.
        motion: motion-blur length in crop pixels.
        noise: sensor noise sigma in grey levels.

    Returns:
        New (H, W, 3) uint8 BGR image.
    """
    h, w = image.shape[:2]
    img = image.astype(np.float32)
    if glare > 0:
        cx, cy = glare_at if glare_at is not None else (rng.uniform(0, w), rng.uniform(0, h))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r2 = ((xx - cx) ** 2 + ((yy - cy) * rng.uniform(0.6, 1.4)) ** 2) / (60.0 * unit) ** 2
        img += (glare * np.exp(-r2 / 2))[:, :, None]
    if shadow > 0:
        mask = _soft_blur(_shadow_mask(rng, h, w), 0.005 * min(h, w) + 0.6)
        ang = rng.uniform(0, 2 * np.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ramp = np.clip(np.cos(ang) * xx / w + np.sin(ang) * yy / h + 0.5, 0, 1)
        img *= ((1.0 - shadow * mask) * (1.0 - 0.5 * shadow * ramp))[:, :, None]
    gains = light_gains(warm, exposure)
    img *= gains
    if blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur * unit)
    if motion > 0:
        img = _motion(img, motion * unit, rng.uniform(0, np.pi))
    if noise > 0:
        img += _noise_tile(rng, h, w) * np.float32(noise)
    return np.clip(img, 0, 255).astype(np.uint8)


def light_gains(warm: float, exposure: float = 1.0) -> npt.NDArray[np.float32]:
    """(3,) float32 BGR gains of a light: a tungsten cast ``warm`` 0..1 (blue x ``1 - warm``,
    green x ``1 - 0.3 warm``, red x ``1 + warm / 4``) and an ``exposure`` on every channel."""
    return np.array([1 - warm, 1 - 0.3 * warm, 1 + 0.25 * warm], np.float32) * np.float32(exposure)


_NOISE_TILE: npt.NDArray[np.float32] | None = None
_TILE = 512


def _noise_tile(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    """(h, w, 3) float32 sensor noise, unit luminance sigma plus half as much chroma.

    Cut at a random offset from a fixed pre-computed tile (tiled for large frames): far faster
    than drawing fresh normals, and still deterministic for a given ``rng``.
    """
    global _NOISE_TILE
    if _NOISE_TILE is None:
        gen = np.random.default_rng(20261129)
        luma = gen.normal(0, 1, (_TILE, _TILE, 1)).astype(np.float32)
        _NOISE_TILE = luma + gen.normal(0, 0.5, (_TILE, _TILE, 3)).astype(np.float32)
    # The tiled array repeats with period _TILE, so a cut at offset (y, x) < _TILE is the same
    # whatever size the array has grown to: results never depend on earlier calls.
    base = _NOISE_TILE[:_TILE, :_TILE]
    if h + _TILE > _NOISE_TILE.shape[0] or w + _TILE > _NOISE_TILE.shape[1]:
        reps = ((h + _TILE) // _TILE + 1, (w + _TILE) // _TILE + 1, 1)
        _NOISE_TILE = np.tile(base, reps)
    y, x = int(rng.integers(_TILE)), int(rng.integers(_TILE))
    out = _NOISE_TILE[y : y + h, x : x + w]
    return out[::-1] if rng.random() < 0.5 else out


def jitter_corners(
    corners: npt.NDArray[np.float32],
    rng: np.random.Generator,
    sigma: float = 0.012,
    *,
    max_shift: float = 0.03,
) -> npt.NDArray[np.float32]:
    """Move each corner a little, as a detector's corner error would.

    Args:
        corners: (N, 4, 2) or (4, 2) float32 pixel coordinates (TL, TR, BR, BL).
        rng: random generator.
        sigma: standard deviation of the shift, as a fraction of each card's short side (0.012
            of a 160 px wide card is about 2 px).
        max_shift: clip of the shift per axis, same unit.

    Returns:
        New float32 array of the same shape.
    """
    quads = np.asarray(corners, np.float32)
    single = quads.ndim == 2
    q = quads[None] if single else quads
    short = np.minimum(
        np.linalg.norm(q[:, 1] - q[:, 0], axis=1), np.linalg.norm(q[:, 3] - q[:, 0], axis=1)
    )[:, None, None]
    shift = np.clip(rng.normal(0, sigma, q.shape), -max_shift, max_shift) * short
    out = (q + shift).astype(np.float32)
    return out[0] if single else out
