"""Desk clutter for rendered tables: objects beside the cards and a sheet under them.

Part of :mod:`vision.render` (import the public names from there). What a card detector meets on
real desks and that the older distractors (notes, phones, receipts, card boxes) lack: keyboards
and laptops (rows of pale or dark rectangles with straight edges), a computer mouse, a cup seen
from above (a ring), an envelope (white paper with a flap's diagonal edges), and a paper sheet or
mat under the cards, plain, ruled, or printed with a cell round every card (a tray or a drawn grid:
the cell's edge runs parallel to the card's, a few millimetres outside it).

Every object is drawn procedurally; sizes are in card widths (a card is 57 mm wide).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "CLUTTER_KINDS",
    "SHEET_KINDS",
    "clutter_object",
    "clutter_width",
    "draw_sheet",
    "rounded_rect_mask",
]

#: Object kinds drawn by :func:`clutter_object`.
CLUTTER_KINDS: Final = ("keyboard", "laptop", "mouse", "cup", "envelope")
#: Sheet kinds drawn by :func:`draw_sheet`.
SHEET_KINDS: Final = ("plain", "ruled", "cells")

#: Object width range in card widths: a keyboard is about 440 mm (7.7 cards), a laptop's
#: keyboard deck about 300 mm, a mouse about 65 mm, a mug's rim about 85 mm, a DL envelope
#: 220 mm; drawn smaller too, as when only part of one is in view.
_WIDTHS: Final = {
    "keyboard": (3.5, 7.7),
    "laptop": (3.0, 5.5),
    "mouse": (0.9, 1.2),
    "cup": (1.2, 1.6),
    "envelope": (2.0, 3.9),
}


def rounded_rect_mask(w: int, h: int, r: int) -> npt.NDArray[np.uint8]:
    """(h, w) uint8 mask, 255 inside a rectangle filling the image with corners rounded to
    radius ``r`` px (anti-aliased arcs)."""
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def clutter_width(kind: str, rng: np.random.Generator) -> float:
    """A random width for ``kind``, in card widths."""
    lo, hi = _WIDTHS[kind]
    return float(rng.uniform(lo, hi))


def _keys(img: npt.NDArray[np.float32], rng: np.random.Generator, x0: int, y0: int, x1: int,
          y1: int, key: npt.NDArray[np.float32]) -> None:  # fmt: skip
    """Rows of keys in the box (x0, y0)-(x1, y1), in place."""
    rows = int(rng.integers(4, 7))
    cols = int(rng.integers(12, 16))
    pitch_y = (y1 - y0) / rows
    pitch_x = (x1 - x0) / cols
    gap = max(pitch_x * rng.uniform(0.1, 0.25), 1.0)
    for r in range(rows):
        cy0 = y0 + r * pitch_y
        for c in range(cols):
            cx0 = x0 + c * pitch_x
            shade = key * rng.uniform(0.95, 1.05)
            cv2.rectangle(img, (int(cx0 + gap / 2), int(cy0 + gap / 2)),
                          (int(cx0 + pitch_x - gap / 2), int(cy0 + pitch_y - gap / 2)),
                          tuple(float(v) for v in shade), -1)  # fmt: skip


def clutter_object(
    rng: np.random.Generator, kind: str, width: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """One object of ``kind`` (:data:`CLUTTER_KINDS`) drawn ``width`` px wide.

    Returns:
        ``(image, alpha)``: (h, width, 3) uint8 BGR and (h, width) float32 in 0..1.
    """
    if kind not in _WIDTHS:
        raise ValueError(f"kind: expected one of {CLUTTER_KINDS}, got {kind!r}")
    w = width
    if kind in ("keyboard", "laptop"):
        h = int(w * (rng.uniform(0.3, 0.4) if kind == "keyboard" else rng.uniform(0.6, 0.7)))
        dark = rng.random() < 0.5
        body = rng.uniform(20, 60, 1) if dark else rng.uniform(170, 235, 1)
        img = np.empty((h, w, 3), np.float32)
        img[:] = body * rng.uniform(0.95, 1.05, 3)
        key = (rng.uniform(5, 40, 1) if dark else rng.uniform(200, 250, 1)) * np.ones(3, np.float32)
        if kind == "keyboard":
            m = int(0.03 * w)
            _keys(img, rng, m, m, w - m, h - m, key)
        else:
            _keys(img, rng, int(0.08 * w), int(0.06 * h), int(0.92 * w), int(0.5 * h), key)
            pad_w = int(0.3 * w)  # the touchpad
            cv2.rectangle(img, ((w - pad_w) // 2, int(0.58 * h)), ((w + pad_w) // 2, int(0.92 * h)),
                          tuple(float(v) for v in body * 0.93), -1)  # fmt: skip
        mask = rounded_rect_mask(w, h, max(int(0.02 * w), 2))
        return np.clip(img, 0, 255).astype(np.uint8), mask.astype(np.float32) / 255.0
    if kind == "mouse":
        h = int(w * rng.uniform(1.6, 1.9))
        tone = rng.uniform(20, 60) if rng.random() < 0.5 else rng.uniform(180, 240)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        d = ((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2
        img = np.empty((h, w, 3), np.float32)
        img[:] = (tone * (1.1 - 0.25 * d))[:, :, None]  # domed: lighter in the middle
        img[: int(0.4 * h), w // 2 - max(w // 60, 1) : w // 2 + max(w // 60, 1)] *= 0.7
        mask = np.clip((1.0 - d) * 8.0, 0, 1).astype(np.float32)
        return np.clip(img, 0, 255).astype(np.uint8), mask
    if kind == "cup":
        h = w
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r = np.hypot(xx - w / 2, yy - h / 2) / (w / 2)
        colour = rng.uniform(30, 240, 3).astype(np.float32)
        img = np.empty((h, w, 3), np.float32)
        img[:] = colour
        inside = r < rng.uniform(0.8, 0.9)  # the drink or the cup's inside, darker
        img[inside] = colour * rng.uniform(0.3, 0.6) if rng.random() < 0.5 else (40, 60, 90)
        mask = np.clip((1.0 - r) * w / 4, 0, 1).astype(np.float32)
        return np.clip(img, 0, 255).astype(np.uint8), mask
    h = int(w * rng.uniform(0.45, 0.7))  # envelope
    img = np.full((h, w, 3), rng.uniform(215, 250), np.float32) * rng.uniform(0.97, 1.0, 3)
    flap = (0.5 * w, h * rng.uniform(0.45, 0.6))
    line = tuple(float(v) for v in img[0, 0] * 0.85)
    thick = max(w // 200, 1)
    cv2.line(img, (0, 0), (int(flap[0]), int(flap[1])), line, thick, cv2.LINE_AA)
    cv2.line(img, (w - 1, 0), (int(flap[0]), int(flap[1])), line, thick, cv2.LINE_AA)
    if rng.random() < 0.6:  # an address
        for j in range(3):
            y = int(h * (0.6 + 0.09 * j))
            img[y : y + max(h // 40, 1), int(0.35 * w) : int(w * rng.uniform(0.6, 0.8))] = 80
    return np.clip(img, 0, 255).astype(np.uint8), np.ones((h, w), np.float32)


def draw_sheet(
    frame: npt.NDArray[np.uint8],
    hom: npt.NDArray[np.float64],
    plane_quads: npt.NDArray[np.float32],
    kind: str,
    rng: np.random.Generator,
) -> None:
    """Lay a paper sheet under the cards (in place, before the cards are drawn).

    Args:
        frame: (H, W, 3) uint8 BGR frame, the table already drawn.
        hom: (3, 3) plane -> frame homography (a card is 1 plane unit wide).
        plane_quads: (N, 4, 2) the cards' corners on the plane.
        kind: ``"plain"``, ``"ruled"`` (lines about 8 mm apart) or ``"cells"`` (a thin outline
            round every card, 2-8 mm outside its edge, as a tray or a grid drawn on the sheet).
        rng: random generator.
    """
    if kind not in SHEET_KINDS:
        raise ValueError(f"sheet: expected one of {SHEET_KINDS}, got {kind!r}")
    px = 100  # sheet texture pixels per plane unit
    pts = plane_quads.reshape(-1, 2)
    lo = pts.min(0) - rng.uniform(0.15, 0.6, 2)
    hi = pts.max(0) + rng.uniform(0.15, 0.6, 2)
    sw, sh = (np.ceil((hi - lo) * px)).astype(int)
    paper = rng.uniform(200, 250) * np.array([rng.uniform(0.85, 1.0), rng.uniform(0.95, 1.0), 1.0])
    tex = np.empty((sh, sw, 3), np.float32)
    tex[:] = paper
    ink = tuple(float(v) for v in paper * rng.uniform(0.35, 0.8, 3))
    to_tex = np.array([[px, 0, -lo[0] * px], [0, px, -lo[1] * px], [0, 0, 1]], np.float64)
    if kind == "ruled":
        pale = tuple(float(v) for v in paper * rng.uniform(0.7, 0.92, 3))
        step = rng.uniform(0.12, 0.2) * px
        for y in np.arange(rng.uniform(0, step), sh, step):
            cv2.line(tex, (0, int(y)), (sw - 1, int(y)), pale, 1, cv2.LINE_AA)
    elif kind == "cells":
        grow = 1.0 + rng.uniform(0.07, 0.3)
        for quad in plane_quads:
            centre = quad.mean(0)
            cell = (quad - centre) * grow + centre
            cell_px = cv2.perspectiveTransform(cell.reshape(-1, 1, 2).astype(np.float64), to_tex)
            cv2.polylines(tex, [np.round(cell_px.reshape(-1, 2) * 16).astype(np.int32)], True,
                          ink, int(rng.integers(1, 3)), cv2.LINE_AA, 4)  # fmt: skip
    tex = np.clip(tex, 0, 255).astype(np.uint8)
    fh, fw = frame.shape[:2]
    sheet_to_frame = hom @ np.linalg.inv(to_tex)
    warped = cv2.warpPerspective(tex, sheet_to_frame, (fw, fh), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(np.full((sh, sw), 255, np.uint8), sheet_to_frame, (fw, fh),
                                flags=cv2.INTER_LINEAR)  # fmt: skip
    a = alpha.astype(np.float32)[:, :, None] / 255.0
    frame[...] = np.clip(frame * (1 - a) + warped * a, 0, 255).astype(np.uint8)
