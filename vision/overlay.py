"""Draw a recognised table onto a copy of the photo: outlines, labels, one colour per SET, legend.

Everything scales with the image (line widths, fonts, offsets), so the picture reads the same at
320 px and at 12 MP. Frames are BGR uint8 in and out; the input is never modified.

* Every card: a thin white-on-black outline, a numbered badge (``#3``, matching the text and
  JSON ids) and its label in two lines (``2 red`` / ``striped diamonds``), with the confidence
  and an orange outline when the card is uncertain, a magenta tag when it is a duplicate reading.
* Every SET: its own colour (evenly spaced hues); a card in several SETs gets one nested outline
  per SET, each inset a little further, so all its SETs stay visible.
* A legend in the image corner covering the fewest cards lists the SETs with their colours
  (the first 12 are drawn and listed, then "+ n more (not drawn)"), or says "no SET: deal 3
  more cards" (on fewer than the 9 cards of the smallest table: "no SET", see
  :func:`vision.rules.no_set_verdict`); on a photo without colour it says the SETs are
  guesses.
  With ``legend_beside``, when every corner would hide part of a card (a table filling the
  photo, many SETs), the legend goes on a dark panel added to the right of the photo instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import UNKNOWN_COLOUR
from vision.decode import format_confidence
from vision.rules import SMALLEST_TABLE
from vision.table import Table

__all__ = ["annotation_scale", "draw_table", "set_colours"]

_FONT: Final = cv2.FONT_HERSHEY_SIMPLEX
_UNCERTAIN: Final = (0, 140, 255)  # orange, BGR
_DUPLICATE: Final = (255, 0, 255)  # magenta, BGR
#: Where a card's label goes, tried in turn: shares of the way from the card's top side to its
#: bottom side (its top margin first; the first not covering a label drawn already).
_LABEL_PLACES: Final = (0.14, 0.86, 0.5)
#: Most legend lines drawn before "+ n more".
_LEGEND_LINES: Final = 12
#: The label text sized to a card's width (:func:`draw_table`), and its font scale bounds: never
#: below 0.35 (letters about 8 px high); :func:`annotation_scale` aims at 0.5 (11 px).
_LABEL_REFERENCE: Final = "striped diamonds"
_LABEL_SPAN: Final = 0.85
_SMALLEST_FONT: Final = 0.35
_LEGIBLE_FONT: Final = 0.5
#: Limits of :func:`annotation_scale`: the factor, and the copy's long side (px).
MAX_ANNOTATION_SCALE: Final = 4
MAX_ANNOTATED_SIDE: Final = 2400


#: The SETs' outline colours, BGR, in order. Chosen by farthest-point sampling in CIELAB among
#: saturated hues of lightness L* 30-90 (none near black, none so pale it vanishes on white
#: card paper), starting from red: any two of the 12 differ by CIE76 delta-E 48.6 or more (the
#: first 8: 59.7). Golden-angle hues, used before,
#: came within 24.6 (magenta next to purple in a new user's 12-SET tables).
SET_PALETTE: Final = (
    (0, 0, 255),  # red
    (255, 0, 0),  # blue
    (0, 255, 0),  # green
    (255, 204, 0),  # sky blue
    (152, 63, 190),  # raspberry
    (0, 117, 130),  # olive
    (179, 255, 0),  # spring green
    (255, 127, 0),  # azure
    (255, 0, 255),  # magenta
    (43, 52, 130),  # brown
    (104, 130, 0),  # teal
    (0, 153, 255),  # orange
)


def set_colours(n: int) -> list[tuple[int, int, int]]:
    """``n`` distinct BGR colours: :data:`SET_PALETTE`, then saturated hues spread by the
    golden angle.

    Returns:
        List of ``n`` (B, G, R) int tuples, 0..255.
    """
    out = list(SET_PALETTE[:n])
    for i in range(len(out), n):
        hue = int((i * 0.618033988749895 % 1.0) * 180)
        value = 255 if i % 2 == 0 else 200
        hsv = np.array([[[hue, 255, value]]], np.uint8)
        b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
        out.append((int(b), int(g), int(r)))
    return out


def _inset(quad: npt.NDArray[np.float32], by: float) -> npt.NDArray[np.int32]:
    """Move each corner ``by`` pixels toward the quad's centre (along the diagonal)."""
    centre = quad.mean(axis=0)
    vec = centre - quad
    length = np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-6)
    moved = quad + vec / length * min(by, float(length.min()) * 0.8)
    return np.round(moved).astype(np.int32)


class _Label(NamedTuple):
    """A label's text lines and the box they need: ``width`` and ``height`` px, ``line_h`` px
    per line, and each line's ``cv2.getTextSize`` ((w, h), baseline)."""

    lines: list[str]
    width: int
    height: int
    line_h: int
    sizes: list[tuple[tuple[int, int], int]]


def _label(lines: list[str], scale: float, thick: int) -> _Label:
    """Measure ``lines`` once, for :func:`_box_at` and :func:`_text_box`."""
    sizes = [cv2.getTextSize(line, _FONT, scale, thick) for line in lines]
    line_h = max(s[0][1] + s[1] for s in sizes) + max(2, int(4 * scale))
    box_w = max(s[0][0] for s in sizes) + int(10 * scale) + 2
    return _Label(lines, box_w, line_h * len(lines) + int(6 * scale), line_h, sizes)


def _box_at(
    label: _Label, centre: tuple[float, float], shape: tuple[int, ...]
) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) px of ``label``'s box centred on ``centre``, kept inside an image of
    ``shape``."""
    box_w, box_h = label.width, label.height
    h, w = shape[:2]
    x0 = int(np.clip(centre[0] - box_w / 2, 0, max(w - box_w, 0)))
    y0 = int(np.clip(centre[1] - box_h / 2, 0, max(h - box_h, 0)))
    return x0, y0, x0 + box_w, y0 + box_h


def _overlap(a: tuple[int, int, int, int], boxes: list[tuple[int, int, int, int]]) -> int:
    """Area (px^2) of box ``a`` covered by ``boxes`` (summed; boxes as (x0, y0, x1, y1))."""
    total = 0
    for b in boxes:
        across = max(0, min(a[2], b[2]) - max(a[0], b[0]))
        total += across * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    return total


def _text_box(
    image: npt.NDArray[np.uint8],
    label: _Label,
    box: tuple[int, int, int, int],
    scale: float,
    thick: int,
    colour: tuple[int, int, int] = (0, 0, 0),
    background: tuple[int, int, int] = (255, 255, 255),
) -> None:
    """Draw ``label`` centred in ``box`` (x0, y0, x1, y1 px, from :func:`_box_at`) on a pale
    tint of the image."""
    x0, y0, x1, y1 = box
    roi = image[y0:y1, x0:x1]
    tint = np.full_like(roi, 0)
    tint[:] = background
    cv2.addWeighted(roi, 0.25, tint, 0.75, 0.0, dst=roi)
    for k, (line, ((tw, th), _)) in enumerate(zip(label.lines, label.sizes, strict=True)):
        x = x0 + (x1 - x0 - tw) // 2
        y = y0 + int(3 * scale) + label.line_h * k + th + max(1, int(2 * scale))
        cv2.putText(image, line, (x, y), _FONT, scale, colour, thick, cv2.LINE_AA)


def _card_width(corners: npt.NDArray[np.float32]) -> float:
    """Median length (px) of the cards' top sides (corners TL, TR, BR, BL: their width)."""
    return float(np.median(np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)))


def _reference_width() -> int:
    (width, _), _ = cv2.getTextSize(_LABEL_REFERENCE, _FONT, 1.0, 1)
    return width


def annotation_scale(shape: tuple[int, ...], corners: npt.NDArray[np.float32]) -> int:
    """How many times the photo's size to draw its annotated copy so that the labels fit the
    cards: 1 unless the cards are so small that a label at the smallest font (0.35) would be
    wider than its card (a card under about 93 px across); then the integer factor that brings
    the labels to font 0.5 (cards about 133 px across), at most :data:`MAX_ANNOTATION_SCALE`,
    and never past :data:`MAX_ANNOTATED_SIDE` px on the long side. A 320 px photo of 12 cards
    gets 3; a 640 x 480 one, 2.

    Args:
        shape: the photo's (H, W, ...) shape.
        corners: (N, 4, 2) float32 card corners in its pixels, TL, TR, BR, BL.

    Returns:
        The factor, an int from 1 to :data:`MAX_ANNOTATION_SCALE`: photo pixel (x, y) covers
        copy pixels ``k*x .. k*x + k - 1`` (and ``k*y ..``).
    """
    corners = np.asarray(corners, np.float32)
    if len(corners) == 0:
        return 1
    card_w = max(_card_width(corners), 1.0)
    reference = _reference_width()
    if _LABEL_SPAN * card_w / reference >= _SMALLEST_FONT:
        return 1
    wanted = int(np.ceil(_LEGIBLE_FONT * reference / (_LABEL_SPAN * card_w)))
    room = int(MAX_ANNOTATED_SIDE // max(shape[:2]))
    return max(1, min(wanted, MAX_ANNOTATION_SCALE, room))


def draw_table(
    frame: npt.NDArray[np.uint8],
    table: Table,
    *,
    copy: bool = True,
    legend_beside: bool = False,
    numbers: Sequence[int] | None = None,
    no_set_advice: bool = True,
) -> npt.NDArray[np.uint8]:
    """An annotated copy of ``frame`` showing the table's cards, labels, SETs and a legend.

    Args:
        frame: (H, W, 3) uint8 BGR photo the table was recognised on. Not modified (unless
            ``copy=False``).
        table: the :class:`vision.table.Table` for that photo.
        copy: draw on a copy (default). ``False`` draws on ``frame`` itself, for a caller that
            owns the frame and no longer needs it (saves a 36 MB copy at 12 MP).
        legend_beside: when the legend would hide part of a card in every corner, put it on a
            dark panel to the right of the photo (the image grows); default: always inside,
            the size never changes (video frames).

    Returns:
        (H, W, 3) uint8 BGR image: a new one, or ``frame`` when ``copy=False``; with
        ``legend_beside`` it may be (max(H, legend height), W + legend width, 3), the photo at
        its top left, pixel (x, y) still the photo's pixel (x, y).

    Raises:
        ValueError: if ``frame`` is not (H, W, 3) uint8.
    """
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"frame: expected (H, W, 3) uint8 BGR, got {frame.shape} {frame.dtype}")
    out = frame.copy() if copy else frame
    h, w = out.shape[:2]
    unit = max(h, w) / 1000.0  # 1 unit = 1 px on a 1000 px photo
    n = len(table.cards)
    corners = np.asarray(table.corners, np.float32)
    card_w = _card_width(corners) if n else 100.0 * unit
    line = max(1, round(min(2.5 * unit, card_w / 40)))
    shown = table.sets[:_LEGEND_LINES]  # the SETs drawn are the SETs listed in the legend
    tags = list(numbers) if numbers is not None else list(range(1, n + 1))
    palette = set_colours(len(shown))

    # Card outlines: black under white so they read on any background.
    for quad in corners:
        pts = np.round(quad).astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 0, 0), line + 2, cv2.LINE_AA)
        cv2.polylines(out, [pts], True, (255, 255, 255), max(1, line), cv2.LINE_AA)

    # SET outlines: the k-th SET of a card is inset by k widths.
    set_line = max(2, round(min(4 * unit, card_w / 25)))
    depth = np.zeros(n, int)
    for colour, triple in zip(palette, shown):
        for i in triple:
            inset = set_line * (0.5 + 1.3 * depth[i]) + line
            pts = _inset(corners[i], inset)
            cv2.polylines(out, [pts], True, colour, set_line, cv2.LINE_AA)
            depth[i] += 1

    # Labels: font sized so "striped diamonds" spans ~85% of a card. Never below 0.35 (about 8
    # px letters, still legible): small cards get labels wider than themselves rather than
    # unreadable ones (a photo's copy is drawn larger instead: annotation_scale).
    scale = float(
        np.clip(
            _LABEL_SPAN * card_w / _reference_width(),
            _SMALLEST_FONT,
            max(1.0 * unit + 0.3, _SMALLEST_FONT),
        )
    )
    thick = max(1, round(scale * 1.6))
    placed: list[tuple[int, int, int, int]] = []
    for i, card in enumerate(table.cards):
        quad = corners[i]
        noun = card.shape.value + ("s" if card.count.value > 1 else "")
        colour_word = UNKNOWN_COLOUR if table.colourless else card.colour.value
        lines = [f"#{tags[i]}  {card.count.value} {colour_word}", f"{card.fill.value} {noun}"]
        colour = (0, 0, 0)
        if table.uncertain[i]:
            lines.append(f"? {format_confidence(float(table.confidences[i]))}")
            colour = (0, 90, 200)
            cv2.polylines(out, [np.round(quad).astype(np.int32)], True, _UNCERTAIN, line + 1)
        if table.duplicates[i]:
            lines.append("duplicate")
            colour = (160, 0, 160)
        # In the card's top margin (corners are TL, TR, BR, BL in portrait), not over its
        # middle, where it hid the symbol of a one-symbol card; lower down the card (its
        # bottom margin, then its middle) where that would cover a label drawn already (cards
        # in a pile, or seen edge-on by a low camera).
        top, bottom = quad[:2].mean(axis=0), quad[2:].mean(axis=0)
        label = _label(lines, scale, thick)
        boxes = [
            _box_at(label, (float(a[0]), float(a[1])), out.shape)
            for a in (top + f * (bottom - top) for f in _LABEL_PLACES)
        ]
        box = min(boxes, key=lambda b: _overlap(b, placed))  # the first of the least covered
        placed.append(box)
        _text_box(out, label, box, scale, thick, colour)

    return _legend(out, table, palette, unit, beside=legend_beside, tags=tags,
                   advice=no_set_advice)  # fmt: skip


def _legend(
    out: npt.NDArray[np.uint8],
    table: Table,
    palette: list[tuple[int, int, int]],
    unit: float,
    *,
    beside: bool,
    tags: list[int],
    advice: bool = True,
) -> npt.NDArray[np.uint8]:
    scale = max(0.35, 0.6 * unit)
    thick = max(1, round(1.5 * unit))
    n = len(table.cards)
    if n == 0:
        lines = [("no cards found", (255, 255, 255))]
    elif not table.sets:
        deal = ": deal 3 more cards" if advice and n >= SMALLEST_TABLE else ""  # vision.rules
        lines = [(f"{_cards(n)}, no SET{deal}", (255, 255, 255))]
    else:
        s = len(table.sets)
        lines = [(f"{_cards(n)}, {s} SET{'s' if s != 1 else ''}", (255, 255, 255))]
        for k, (triple, colour) in enumerate(zip(table.sets, palette)):  # the SETs drawn
            ids = " ".join(f"#{tags[i]}" for i in triple)
            lines.append((f"SET {k + 1}: {ids}", colour))
        if s > len(palette):
            lines.append((f"+ {s - len(palette)} more (not drawn)", (255, 255, 255)))
    uncertain = int(np.sum(table.uncertain))
    if uncertain:
        lines.append((f"{uncertain} uncertain", _UNCERTAIN))
    if n and table.colourless:  # as the text report says: no colour read, SETs are guesses
        lines.append(("no colour in the photo: SETs are guesses", _UNCERTAIN))
    sizes = [cv2.getTextSize(text, _FONT, scale, thick) for text, _ in lines]
    line_h = max(sz[0][1] + sz[1] for sz in sizes) + max(3, int(6 * unit))
    pad = max(4, int(10 * unit))
    swatch = line_h - max(3, int(6 * unit))
    box_w = max(sz[0][0] for sz in sizes) + 3 * pad + swatch
    box_h = line_h * len(lines) + 2 * pad
    h, w = out.shape[:2]
    (x0, y0), hidden = _legend_corner(
        np.asarray(table.corners, np.float32), w, h, min(box_w, w), min(box_h, h)
    )
    if beside and hidden:
        canvas = np.full((max(h, box_h), w + box_w, 3), 32, np.uint8)
        canvas[:h, :w] = out
        out, x0, y0 = canvas, w, 0
    else:
        box_w, box_h = min(box_w, w), min(box_h, h)
        roi = out[y0 : y0 + box_h, x0 : x0 + box_w]
        cv2.convertScaleAbs(roi, dst=roi, alpha=0.3)
    for k, (text, colour) in enumerate(lines):
        y = y0 + pad + line_h * k
        x = x0 + pad
        if text.startswith("SET "):
            cv2.rectangle(out, (x, y + 2), (x + swatch, y + swatch), colour, -1)
            colour = (255, 255, 255)
        cv2.putText(
            out, text, (x + swatch + pad, y + sizes[k][0][1] + 2), _FONT, scale, colour, thick,
            cv2.LINE_AA,
        )  # fmt: skip
    return out


def _cards(n: int) -> str:
    return f"{n} card{'s' if n != 1 else ''}"


def _legend_corner(
    corners: npt.NDArray[np.float32], w: int, h: int, box_w: int, box_h: int
) -> tuple[tuple[int, int], bool]:
    """Top-left of the image corner where a legend box covers the least card area, and whether
    it still covers part of a card (more than 5% of the box: a sliver over a card's corner hides
    nothing). Measured on the 182 shared table photos: the best corner covers at most 0.5% of
    the box in 115, 0.5-5% in 7 and 5-66% in 60."""
    options = [(0, 0), (w - box_w, 0), (0, h - box_h), (w - box_w, h - box_h)]
    if len(corners) == 0:
        return options[0], False
    f = min(1.0, 400.0 / max(h, w))  # judge on a small mask: cheap at 12 MP
    mask = np.zeros((max(1, round(h * f)), max(1, round(w * f))), np.uint8)
    cv2.fillPoly(mask, [np.round(q * f).astype(np.int32) for q in corners], 1)
    covered = [
        int(
            mask[round(y * f) : round((y + box_h) * f), round(x * f) : round((x + box_w) * f)].sum()
        )
        for x, y in options
    ]
    best = int(np.argmin(covered))
    box_area = max(1.0, box_w * box_h * f * f)
    return options[best], covered[best] > 0.05 * box_area
