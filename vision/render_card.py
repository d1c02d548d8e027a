"""Draw one flat SET card: symbol geometry, ink, paper and deck-edition variation.

Part of :mod:`vision.render` (import the public names from there). Everything is drawn
procedurally; no photo is used. Geometry was measured on real cards (57 x 89 mm, the crops in
``../shared/datasets/crops`` and table photos from several decks):

* symbols are stacked vertically in portrait, centred, each about 0.64-0.72 of the card width
  wide and 2.0 times as wide as high; centre-to-centre pitch about 0.30 of the card height
  (centres at 0.5 for one, 0.35/0.65 for two, 0.2/0.5/0.8 for three);
* open strokes about 1 mm (0.018-0.028 of the card width);
* stripes are thin lines perpendicular to the symbol's long axis (vertical in portrait), with a
  pitch of about 0.022-0.03 of the card width;
* the squiggle is point-symmetric (a 180 degree turn maps it onto itself) and has one handedness
  in every deck we looked at: in portrait its left end is low, its right end high
  (tables/nakkstar123, tables/tomwhite, crops/kaggle-set-cards, crops/omega697). Note that the
  ``crops/tomwhite`` crops show the mirror image, so those crops appear to be mirrored.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import Card, Colour, Fill, Shape
from vision.render_camera import _noise_tile
from vision.warp import CARD_ASPECT

__all__ = [
    "CardStyle",
    "DEFAULT_CARD_SIZE",
    "INK_HUES",
    "render_card",
    "render_card_and_mask",
    "sample_style",
    "symbol_polygon",
]

#: Default size (width, height) in pixels of :func:`render_card`'s output.
DEFAULT_CARD_SIZE: Final = (320, 500)

#: Hue ranges (degrees, 0..360, HSV) the sampled ink of each colour falls in. Red wraps around
#: 0: crimson (~348) to orange-red (~14). Green from yellow-green (~95) to teal (~170). Purple
#: from blue-ish purple (~240, the Kaggle deck prints near 248) to violet (~290). Measured on
#: white-balanced real crops (median hue red 5-8, green 133-138, purple 249-276 by source).
INK_HUES: Final[dict[Colour, tuple[float, float]]] = {
    Colour.RED: (-12.0, 14.0),
    Colour.GREEN: (95.0, 170.0),
    Colour.PURPLE: (240.0, 290.0),
}
# (saturation range, value range) per colour, HSV in 0..1, from the same real crops.
_INK_SV: Final[dict[Colour, tuple[tuple[float, float], tuple[float, float]]]] = {
    Colour.RED: ((0.65, 1.0), (0.78, 1.0)),
    Colour.GREEN: ((0.55, 1.0), (0.42, 0.75)),
    Colour.PURPLE: ((0.5, 0.95), (0.4, 0.72)),
}


@dataclass(frozen=True)
class CardStyle:
    """Parameters of one deck edition and print run (shared by all cards of a deck).

    Lengths are fractions of the card width unless stated. Colours are BGR floats in 0..255.

    Attributes:
        inks: ink colour per :class:`Colour`, BGR 0..255.
        paper: paper colour, BGR 0..255 (white, cream or cool white).
        symbol_width: symbol width / card width.
        symbol_aspect: symbol width / symbol height.
        pitch: centre-to-centre distance of stacked symbols / card height.
        stroke: outline width / card width.
        stripe_pitch: stripe period / card width.
        stripe_width: stripe line width / stripe period (duty cycle).
        corner_radius: rounded-corner radius / card width.
        squiggle_bulge: 0..1, how strongly the squiggle's waist is pinched (edition variation).
        diamond_round: corner rounding of the diamond (0 sharp).
        ink_spread: blur sigma of the ink edges, in fractions of the card width.
        misregistration: max per-channel plate offset / card width.
        print_offset: max offset of the whole print from the card centre / card width.
        paper_grain: amplitude of the paper texture (grey levels).
    """

    inks: dict[Colour, tuple[float, float, float]] = field(
        default_factory=lambda: {
            Colour.RED: (40.0, 30.0, 225.0),
            Colour.GREEN: (70.0, 150.0, 10.0),
            Colour.PURPLE: (125.0, 30.0, 95.0),
        }
    )
    paper: tuple[float, float, float] = (238.0, 242.0, 244.0)
    symbol_width: float = 0.68
    symbol_aspect: float = 2.0
    pitch: float = 0.30
    stroke: float = 0.022
    stripe_pitch: float = 0.026
    stripe_width: float = 0.38
    corner_radius: float = 0.065
    squiggle_bulge: float = 0.3
    diamond_round: float = 0.0
    ink_spread: float = 0.002
    misregistration: float = 0.003
    print_offset: float = 0.01
    paper_grain: float = 2.0


def _sample_ink(colour: Colour, rng: np.random.Generator) -> tuple[float, float, float]:
    lo, hi = INK_HUES[colour]
    hue = (rng.uniform(lo, hi) % 360.0) / 360.0
    (s0, s1), (v0, v1) = _INK_SV[colour]
    r, g, b = colorsys.hsv_to_rgb(hue, rng.uniform(s0, s1), rng.uniform(v0, v1))
    return (b * 255.0, g * 255.0, r * 255.0)


def sample_style(rng: np.random.Generator) -> CardStyle:
    """A random deck edition: ink hues, paper tone, symbol proportions, stroke, stripes.

    Args:
        rng: random generator (the only source of randomness).

    Returns:
        A :class:`CardStyle`; ranges come from the real decks in ``../shared/datasets``.
    """
    inks = {c: _sample_ink(c, rng) for c in Colour}
    tone = rng.choice(3, p=[0.6, 0.25, 0.15])  # neutral, cream, cool
    base = rng.uniform(230, 250)
    tint = {0: (0.0, 0.0, 0.0), 1: (-12.0, -3.0, 2.0), 2: (4.0, 0.0, -5.0)}[int(tone)]
    paper = tuple(float(np.clip(base + t + rng.normal(0, 1.5), 200, 255)) for t in tint)
    return CardStyle(
        inks=inks,
        paper=paper,  # type: ignore[arg-type]
        symbol_width=rng.uniform(0.62, 0.73),
        symbol_aspect=rng.uniform(1.85, 2.25),
        pitch=rng.uniform(0.27, 0.32),
        stroke=rng.uniform(0.012, 0.022),
        stripe_pitch=rng.uniform(0.02, 0.03),
        stripe_width=rng.uniform(0.12, 0.3),
        corner_radius=rng.uniform(0.045, 0.085),
        squiggle_bulge=rng.uniform(0.1, 0.5),
        diamond_round=rng.uniform(0.0, 0.03),
        ink_spread=rng.uniform(0.0, 0.004),
        misregistration=rng.uniform(0.0, 1.0) ** 2 * 0.003,
        print_offset=rng.uniform(0.0, 0.02),
        paper_grain=rng.uniform(0.5, 4.0),
    )


# ---------------------------------------------------------------------------------------------
# Symbol outlines, in a unit box: x in [-1, 1] (long axis), y in [-0.5, 0.5], image y down.


def _bezier(p0, c1, c2, p1, n: int) -> npt.NDArray[np.float64]:  # noqa: ANN001
    t = np.linspace(0.0, 1.0, n, endpoint=False)[:, None]
    pts = np.array([p0, c1, c2, p1], dtype=np.float64)
    return (
        (1 - t) ** 3 * pts[0]
        + 3 * (1 - t) ** 2 * t * pts[1]
        + 3 * (1 - t) * t**2 * pts[2]
        + t**3 * pts[3]
    )


def _squiggle_unit(bulge: float, n: int) -> npt.NDArray[np.float64]:
    """Closed squiggle outline (point-symmetric, left end low, right end high in image axes)."""
    dip = -0.36 + 0.14 * bulge  # y of the dip in the top edge (higher = more pinched waist)
    segments = [
        ((-0.98, 0.16), (-0.99, -0.15), (-0.8, -0.45), (-0.45, -0.45)),  # left end up to hump
        ((-0.45, -0.45), (-0.15, -0.45), (0.0, dip), (0.25, dip)),  # hump down to the dip
        ((0.25, dip), (0.45, dip), (0.5, -0.5), (0.72, -0.5)),  # dip up to the right top
        ((0.72, -0.5), (0.9, -0.5), (0.98, -0.4), (0.98, -0.16)),  # round the right end
    ]
    half = [_bezier(*s, n) for s in segments]
    top = np.concatenate(half)
    return np.concatenate([top, -top])


def symbol_polygon(shape: Shape, style: CardStyle, n: int = 24) -> npt.NDArray[np.float64]:
    """Outline of one symbol in the unit box x in [-1, 1], y in [-0.5, 0.5] (image y down).

    Args:
        shape: which symbol.
        style: deck edition (squiggle waist, diamond rounding).
        n: points per curved segment.

    Returns:
        (P, 2) float64 closed polygon (last point not repeated), clockwise on screen.
    """
    if shape is Shape.OVAL:
        a = np.linspace(-np.pi / 2, np.pi / 2, 2 * n)
        right = np.stack([0.5 + 0.5 * np.cos(a), 0.5 * np.sin(a)], axis=1)
        return np.concatenate([right, -right])
    if shape is Shape.DIAMOND:
        return np.array([[-1.0, 0.0], [0.0, -0.5], [1.0, 0.0], [0.0, 0.5]])
    return _squiggle_unit(style.squiggle_bulge, n)


# ---------------------------------------------------------------------------------------------
# Drawing


def _stripe_profile(width: int, x0: float, pitch: float, duty: float) -> npt.NDArray[np.float32]:
    """Anti-aliased coverage (0..1) of vertical stripes per pixel column."""
    x = np.arange(width, dtype=np.float32) - x0
    d = np.abs((x / pitch + 0.5) % 1.0 - 0.5) * pitch  # distance to the nearest stripe centre
    half = 0.5 * max(duty * pitch, 0.6)
    return np.clip(half - d + 0.5, 0.0, 1.0).astype(np.float32)


def _coverage(
    card: Card, style: CardStyle, w: int, h: int, rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Ink coverage (h, w) float32 0..1 of the card's symbols."""
    shift = 4  # sub-pixel precision bits for cv2 drawing
    scale = float(1 << shift)
    sym_w = style.symbol_width * w
    sym_h = sym_w / style.symbol_aspect
    n = card.count.value
    off = rng.uniform(-1, 1, 2) * style.print_offset * w
    cx = (w - 1) / 2 + off[0]
    cy0 = (h - 1) / 2 + off[1]
    unit = symbol_polygon(card.shape, style)
    stroke = max(style.stroke * w, 1.0)
    # Outlines are drawn centred on the path; inset the path so the outer ink edge is the shape.
    inner_w, inner_h = max(sym_w - stroke, 2.0), max(sym_h - stroke, 2.0)
    polys = []
    for k in range(n):
        cy = cy0 + (k - (n - 1) / 2) * style.pitch * h
        pts = unit * np.array([inner_w / 2, inner_h]) + np.array([cx, cy])
        polys.append(np.round(pts * scale).astype(np.int32))
    outline = np.zeros((h, w), np.uint8)
    fill_mask = np.zeros((h, w), np.uint8)
    thick = max(int(round(stroke)), 1)
    if card.fill is Fill.SOLID:
        cv2.fillPoly(outline, polys, 255, cv2.LINE_AA, shift)
        cv2.polylines(outline, polys, True, 255, thick, cv2.LINE_AA, shift)
        return outline.astype(np.float32) / 255.0
    cv2.polylines(outline, polys, True, 255, thick, cv2.LINE_AA, shift)
    cov = outline.astype(np.float32) / 255.0
    if card.fill is Fill.STRIPED:
        cv2.fillPoly(fill_mask, polys, 255, cv2.LINE_AA, shift)
        pitch = max(style.stripe_pitch * w, 2.2)
        stripes = _stripe_profile(w, cx + rng.uniform(0, pitch), pitch, style.stripe_width)
        cov = np.maximum(cov, fill_mask.astype(np.float32) / 255.0 * stripes[None, :])
    return cov


def _rounded_mask(w: int, h: int, radius: float) -> npt.NDArray[np.float32]:
    """(h, w) float32 0..1 mask of a rounded rectangle filling the image."""
    mask = np.zeros((h, w), np.uint8)
    r = max(radius, 1.0)
    shift, s = 4, 16.0
    pts = []
    for cx, cy, a0 in ((w - 0.5 - r, r - 0.5, -90), (w - 0.5 - r, h - 0.5 - r, 0),
                       (r - 0.5, h - 0.5 - r, 90), (r - 0.5, r - 0.5, 180)):  # fmt: skip
        a = np.deg2rad(np.linspace(a0, a0 + 90, 10))
        pts.append(np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], axis=1))
    poly = np.round(np.concatenate(pts) * s).astype(np.int32)
    cv2.fillPoly(mask, [poly], 255, cv2.LINE_AA, shift)
    return mask.astype(np.float32) / 255.0


def render_card_and_mask(
    card: Card,
    rng: np.random.Generator,
    style: CardStyle | None = None,
    size: tuple[int, int] = DEFAULT_CARD_SIZE,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """Render one flat card and its rounded-rectangle alpha mask.

    Args:
        card: the card to draw.
        rng: random generator (print offset, stripe phase, grain, misregistration).
        style: deck edition; ``sample_style(rng)`` when None.
        size: (width, height) in pixels, portrait; the card fills the image edge to edge.

    Returns:
        ``(image, mask)``: (h, w, 3) uint8 BGR card (outside the rounded corners: paper colour)
        and (h, w) float32 alpha in 0..1 (0 outside the rounded corners).

    Raises:
        ValueError: if ``size`` is below 8 x 8 pixels.
    """
    if style is None:
        style = sample_style(rng)
    w, h = int(size[0]), int(size[1])
    if w < 8 or h < 8:
        raise ValueError(f"size: expected at least 8 x 8 pixels, got {size}")
    cov = _coverage(card, style, w, h, rng)
    if style.ink_spread > 0:
        sigma = style.ink_spread * w
        if sigma > 0.3:
            cov = cv2.GaussianBlur(cov, (0, 0), sigma)
    ink = np.array(style.inks[card.colour], np.float32) / 255.0
    paper = np.array(style.paper, np.float32)
    # Ink density: slightly uneven, as on a printed sheet.
    density = 1.0 - 0.04 * rng.random()
    mis = style.misregistration * w
    if mis > 0.05:  # colour plates printed slightly out of register
        planes = []
        for _ in range(3):
            dx, dy = rng.uniform(-mis, mis, 2)
            m = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
            planes.append(cv2.warpAffine(cov, m, (w, h), flags=cv2.INTER_LINEAR))
        cov3 = cv2.merge(planes)
    else:
        cov3 = cv2.merge([cov, cov, cov])
    # Subtractive print: the ink multiplies the paper's reflectance.
    absorb = (density * (1.0 - ink)).astype(np.float32)
    img = paper * (1.0 - cov3 * absorb)
    if style.paper_grain > 0:
        img += _noise_tile(rng, h, w)[:, :, :1] * np.float32(style.paper_grain)
    mask = _rounded_mask(w, h, style.corner_radius * w)
    return np.clip(img, 0, 255).astype(np.uint8), mask


def render_card(
    card: Card,
    rng: np.random.Generator,
    style: CardStyle | None = None,
    size: tuple[int, int] = DEFAULT_CARD_SIZE,
    corner_colour: tuple[int, int, int] = (40, 40, 40),
) -> npt.NDArray[np.uint8]:
    """Render one flat card, portrait, filling the image.

    Args:
        card: the card to draw.
        rng: random generator.
        style: deck edition; ``sample_style(rng)`` when None.
        size: (width, height) in pixels; the default keeps the 57:89 card aspect.
        corner_colour: BGR colour shown outside the rounded corners.

    Returns:
        (h, w, 3) uint8 BGR image.

    Raises:
        ValueError: if ``size`` is below 8 x 8 pixels.
    """
    img, mask = render_card_and_mask(card, rng, style, size)
    bg = np.array(corner_colour, np.float32)
    out = img.astype(np.float32) * mask[:, :, None] + bg * (1.0 - mask[:, :, None])
    return out.astype(np.uint8)


def card_size_for_width(width: float) -> tuple[int, int]:
    """(width, height) in whole pixels of a card ``width`` pixels wide (57:89 aspect)."""
    return max(int(round(width)), 8), max(int(round(width / CARD_ASPECT)), 8)
