"""Procedural table surfaces: wood grain, cloth, carpet, white desk, dark felt, and for stress
tests light wood, a checked tablecloth and a busy printed cloth.

Part of :mod:`vision.render` (import the public names from there). All textures are made from
random noise; no photo is used.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.render_camera import _noise_tile, _smooth_noise

__all__ = ["BACKGROUNDS", "EXTRA_BACKGROUNDS", "make_background"]

#: Names accepted by :func:`make_background` (and ``render_table(background=...)``); a random
#: background is one of these.
BACKGROUNDS: Final = ("wood", "cloth", "carpet", "white_desk", "dark_felt")
#: Further names accepted, never picked at random (kept out of the training mix): pale wood only,
#: a gingham tablecloth (white checks with straight edges) and a busy printed cloth.
EXTRA_BACKGROUNDS: Final = ("light_wood", "checked", "print")


def _wood(
    rng: np.random.Generator, h: int, w: int, tone: int | None = None
) -> npt.NDArray[np.float32]:
    """Planks of wood; ``tone`` 0..3 (3 palest) fixes the colour, else it is drawn at random."""
    vertical = rng.random() < 0.5
    if vertical:
        h, w = w, h
    # Grain runs along x. Each plank has its own tone, ring spacing and figure.
    plank = rng.uniform(0.15, 0.4) * max(h, w)
    light = rng.choice(4, p=[0.3, 0.3, 0.25, 0.15])  # drawn either way: same stream
    light = light if tone is None else tone
    base = np.array(
        [[120, 165, 205], [70, 110, 160], [45, 70, 110], [165, 192, 212]][int(light)], np.float32
    )
    base *= rng.uniform(0.85, 1.15, 3).astype(np.float32)
    yy = np.arange(h, dtype=np.float32)[:, None]
    offset = rng.uniform(0, plank)
    plank_id = np.floor((yy + offset) / plank).astype(np.int64)
    n_planks = int(plank_id.max()) + 1
    tones = rng.normal(0, 0.08, n_planks).astype(np.float32)
    periods = rng.uniform(6, 30, n_planks).astype(np.float32)
    warp = _smooth_noise(rng, h, w, 4) * rng.uniform(3, 12) + _smooth_noise(rng, h, w, 12) * 1.5
    phase = (yy + warp) / periods[plank_id]
    late = (phase % 1.0) ** 4  # sharp dark latewood line at the end of each ring
    fine_src = rng.normal(0, 1, (max(h // 2, 2), max(w // 40, 2))).astype(np.float32)
    fine = cv2.resize(fine_src, (w, h), interpolation=cv2.INTER_LINEAR)
    y_in = (yy + offset) % plank
    seam = (y_in < 1.5) | (y_in > plank - 1.0)
    shade = 1.0 + tones[plank_id] - 0.22 * late + 0.05 * fine
    shade = np.where(seam, 0.45, shade)
    out = base[None, None, :] * shade[:, :, None]
    if vertical:
        out = out.transpose(1, 0, 2)
    return np.ascontiguousarray(out)


def _cloth(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    base = rng.uniform(40, 200, 3).astype(np.float32)
    p = rng.uniform(2.5, 6.0)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    weave = np.sin(xx * 2 * np.pi / p) * np.sin(yy * 2 * np.pi / p)
    wrinkles = _smooth_noise(rng, h, w, 5)
    shade = 1.0 + 0.06 * weave + 0.08 * wrinkles + 0.04 * _noise_tile(rng, h, w)[:, :, 0]
    return base[None, None, :] * shade[:, :, None]


def _carpet(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    colours = rng.uniform(30, 190, (3, 3)).astype(np.float32)
    fine = rng.random((h, w)).astype(np.float32)
    fine = cv2.GaussianBlur(fine, (0, 0), rng.uniform(0.6, 1.5))
    pick = np.clip((fine - fine.min()) / max(float(np.ptp(fine)), 1e-6) * 3, 0, 2.999)
    idx = pick.astype(np.int64)
    out = colours[idx]
    shade = 1.0 + 0.1 * _smooth_noise(rng, h, w, 6)
    return out * shade[:, :, None]


def _white_desk(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    base = rng.uniform(190, 240) + rng.normal(0, 6, 3).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(ang) * xx / w + np.sin(ang) * yy / h
    shade = 1.0 - 0.1 * ramp + 0.03 * _smooth_noise(rng, h, w, 4)
    shade += 0.01 * _noise_tile(rng, h, w)[:, :, 0]
    return base[None, None, :] * shade[:, :, None]


def _dark_felt(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    base = np.array(
        [[25, 60, 20], [20, 20, 22], [70, 30, 15], [30, 25, 60]][int(rng.integers(4))],
        np.float32,
    ) * rng.uniform(0.7, 1.4)
    fibre = cv2.GaussianBlur(_noise_tile(rng, h, w)[:, :, 0], (0, 0), 0.8) * 2.0
    shade = 1.0 + 0.25 * fibre + 0.1 * _smooth_noise(rng, h, w, 5)
    return base[None, None, :] * shade[:, :, None]


def _light_wood(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    return _wood(rng, h, w, tone=3)


def _checked(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    """Gingham: white and coloured bands crossing, checks about w / 24 .. w / 14 wide."""
    colour = np.array([[40, 40, 190], [150, 70, 30], [50, 120, 40], [35, 35, 35]][
        int(rng.integers(4))], np.float32) * rng.uniform(0.8, 1.15)  # fmt: skip
    white = np.float32(rng.uniform(215, 245))
    period = w / rng.uniform(7, 12)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    warp = _smooth_noise(rng, h, w, 4) * period * 0.05  # the cloth is not perfectly straight
    band_x = (((xx + warp) / period) % 1.0) < 0.5
    band_y = (((yy - warp) / period) % 1.0) < 0.5
    cover = (band_x.astype(np.float32) + band_y.astype(np.float32)) / 2  # 0 white .. 1 full
    cover = cv2.GaussianBlur(cover, (0, 0), 0.8)
    out = white * (1 - cover[:, :, None]) + colour[None, None, :] * cover[:, :, None]
    shade = 1.0 + 0.06 * _smooth_noise(rng, h, w, 5) + 0.03 * _noise_tile(rng, h, w)[:, :, 0]
    return out * shade[:, :, None]


def _print(rng: np.random.Generator, h: int, w: int) -> npt.NDArray[np.float32]:
    """A busy printed cloth: hundreds of coloured discs, leaves, strokes and a few pale
    rectangles (labels, tickets) on a random ground."""
    out = np.empty((h, w, 3), np.float32)
    out[:] = rng.uniform(40, 200, 3)
    palette = rng.uniform(20, 250, (6, 3))
    scale = w / 40
    for _ in range(int(rng.integers(250, 400))):
        colour = tuple(float(v) for v in palette[int(rng.integers(6))])
        c = (int(rng.integers(w)) * 16, int(rng.integers(h)) * 16)
        size = rng.uniform(0.3, 2.0) * scale
        kind = rng.random()
        if kind < 0.5:
            axes = (int(size * 16), int(size * rng.uniform(0.3, 1.0) * 16))
            cv2.ellipse(out, c, axes, rng.uniform(0, 180), 0, 360, colour, -1, cv2.LINE_AA, 4)
        elif kind < 0.9:
            step = rng.normal(0, size * 2, 2) * 16
            end = (c[0] + int(step[0]), c[1] + int(step[1]))
            cv2.line(out, c, end, colour, max(int(size / 3), 1), cv2.LINE_AA, 4)
        else:
            ang = rng.uniform(0, 180)
            box = cv2.boxPoints(((c[0] / 16, c[1] / 16), (size * 2.5, size * 1.6), ang))
            pale = tuple(float(v) for v in rng.uniform(200, 245, 3))
            cv2.fillConvexPoly(out, np.round(box * 16).astype(np.int32), pale, cv2.LINE_AA, 4)
    shade = 1.0 + 0.06 * _smooth_noise(rng, h, w, 5) + 0.03 * _noise_tile(rng, h, w)[:, :, 0]
    return out * shade[:, :, None]


_MAKERS: Final = {
    "wood": _wood,
    "cloth": _cloth,
    "carpet": _carpet,
    "white_desk": _white_desk,
    "dark_felt": _dark_felt,
    "light_wood": _light_wood,
    "checked": _checked,
    "print": _print,
}


def make_background(
    kind: str | None, rng: np.random.Generator, size: tuple[int, int]
) -> npt.NDArray[np.uint8]:
    """A procedural table surface.

    Args:
        kind: one of :data:`BACKGROUNDS` or :data:`EXTRA_BACKGROUNDS`, or None for a random one
            of :data:`BACKGROUNDS`.
        rng: random generator.
        size: (width, height) in pixels.

    Returns:
        (height, width, 3) uint8 BGR texture.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    if kind is None:
        kind = str(rng.choice(BACKGROUNDS))
    if kind not in _MAKERS:
        raise ValueError(
            f"background: expected one of {BACKGROUNDS + EXTRA_BACKGROUNDS}, got {kind!r}"
        )
    w, h = int(size[0]), int(size[1])
    return np.clip(_MAKERS[kind](rng, h, w), 0, 255).astype(np.uint8)
