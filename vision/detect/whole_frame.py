"""A photo that is one card: cropped to the card, so no outline of it shows.

A card photographed from close up and cropped to its edges (a phone's crop tool, a scan, the
chips of the shared crop datasets) has no side for the contour search to find: the frame's
edges are the card's. When little else is found (at most three things, each under half the
frame: a symbol's outline, a shadow's edge), the frame itself is taken for a card if it looks
like one of SET's, seen square on:

* a card's proportions (57 x 89 mm: 1.56; :data:`FRAME_ASPECT` allows for a loose crop);
* a photographed paper border: the band along the frame's edges is light, even and grainy
  (:data:`PAPER_LEVEL`, :data:`PAPER_UNEVEN`, :data:`PAPER_GRAIN`: a drawing or a screenshot
  is flat); the frame is white-balanced on it;
* SET's symbols, and nothing else: 1 to 3 ink blobs of one size and one ink, stacked at the
  printed pitch (:data:`SYMBOL_PITCH`), each about 0.68 of the card's width long
  (:data:`SYMBOL_WIDTH`), lying across the card, centred on it (:data:`SYMBOL_CENTRE`) and
  ending inside the frame.

Measured on the shared chips and negatives: the project README, under ``setvision photo``
("A photo cropped to one card").
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.colour import hue_spread
from vision.detect.geometry import order_corners
from vision.detect.ink_cards import find_symbols, group_symbols

__all__ = ["FRAME_SCORE", "card_filling_frame", "paper_framed"]

#: Long side over short side of a frame that may be one card (a card is 1.56; the shared
#: chips are 1.56 to 1.72 at the 2nd and 98th percentiles; kaggle's loose crops up to 1.89).
#: Camera photos (4:3, 16:9) and phone and tablet screens (4:3, 16:9 and longer) fall outside:
#: a new user's screenshots of coloured buttons were read as cards at 1.33 and 1.78.
FRAME_ASPECT: Final = (1.42, 1.77)
#: The frame is searched as a portrait image of this size (px, width x height).
_WORK: Final = (160, 250)
#: Share of the short side that the border band along the frame's edges spans.
_BAND: Final = 0.08
#: The band's median grey (the per-pixel minimum of B, G, R) is at least this share of the
#: frame's 98th percentile grey: paper, the lightest thing on a card.
PAPER_LEVEL: Final = 0.7
#: At most this share of the band may be off its median grey by more than a quarter.
PAPER_UNEVEN: Final = 0.2
#: The band's grain: the standard deviation of its Laplacian (grey levels, at the working
#: size) is at least this. Photographed paper has grain and sensor noise (the shared chips:
#: 1.0 at the least, 1.45 at the 2nd percentile); a drawing or a screenshot is flat (0).
PAPER_GRAIN: Final = 0.8
#: A symbol's long side over the card's width (0.62-0.73 across deck editions, see
#: :mod:`vision.detect.ink_cards`), with room for a loose crop.
SYMBOL_WIDTH: Final = (0.55, 0.9)
#: Centre-to-centre distance of stacked symbols over the card's height (0.29 on the shared
#: chips, 0.21 to 0.34 in all).
SYMBOL_PITCH: Final = (0.2, 0.36)
#: The symbols of one card share one ink: their hues (CIELAB) lie within this many degrees of
#: their mean (10 at the 98th percentile of the shared chips).
SYMBOL_HUE_DEG: Final = 40.0
#: Largest offset of the symbols' centre from the frame's, as shares of its width and height
#: (one symbol of two missed puts it 0.15 of the height off).
SYMBOL_CENTRE: Final = (0.15, 0.2)
#: Symbols lie across a portrait card: their long axis within this many degrees of level.
_SYMBOL_TILT_DEG: Final = 35.0
#: A symbol's ends keep at least this share of the width from the frame's sides (3 px of the
#: working copy: one touching a side was cut by it; a card's symbols end about 0.16 of its
#: width from its sides).
_SYMBOL_MARGIN: Final = 0.02
#: Two blobs spanning at most this share of the larger's length across are one symbol.
_SAME_SYMBOL: Final = 0.75
#: Score of a frame taken for a card (the contour search's own scores are not comparable).
FRAME_SCORE: Final = 0.6


def card_filling_frame(
    frame: npt.NDArray[np.uint8], shrunk: npt.NDArray[np.uint8] | None = None
) -> npt.NDArray[np.float32] | None:
    """The frame's corners, when the frame is itself one SET card (see the module docstring).

    Args:
        frame: (H, W, 3) uint8 BGR image.
        shrunk: the frame shrunk (any factor; the detector's working image), looked at instead
            of the frame to save time: the test runs at 160 x 250 px.

    Returns:
        (4, 2) float32 corners (x, y) in frame pixels ordered TL, TR, BR, BL of the card in
        portrait orientation (:class:`vision.detect.CardDetections`), or None.
    """
    h, w = frame.shape[:2]
    work = _portrait_work(frame, shrunk)
    balanced = None if work is None else _paper_border(work)
    if balanced is None or not _one_card_of_symbols(balanced):
        return None
    quad = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    return order_corners(quad[None])[0].astype(np.float32)


def paper_framed(frame: npt.NDArray[np.uint8], shrunk: npt.NDArray[np.uint8] | None = None) -> bool:
    """Whether the frame has a card's proportions (:data:`FRAME_ASPECT`) and a band along its
    edges that is photographed paper (light, even and grainy: :data:`PAPER_LEVEL`,
    :data:`PAPER_UNEVEN`, :data:`PAPER_GRAIN`): a photo that may be one card cropped to its
    edges, whether or not its symbols could be made out. Arguments as
    :func:`card_filling_frame`."""
    work = _portrait_work(frame, shrunk)
    return work is not None and _paper_border(work) is not None


def _portrait_work(
    frame: npt.NDArray[np.uint8], shrunk: npt.NDArray[np.uint8] | None
) -> npt.NDArray[np.uint8] | None:
    """The frame (or ``shrunk``) turned portrait at :data:`_WORK` px, or None when the frame
    has not a card's proportions."""
    h, w = frame.shape[:2]
    if min(h, w) < 16 or not FRAME_ASPECT[0] <= max(h, w) / min(h, w) <= FRAME_ASPECT[1]:
        return None
    look = frame if shrunk is None else shrunk
    portrait = look if h >= w else cv2.rotate(look, cv2.ROTATE_90_CLOCKWISE)
    return cv2.resize(portrait, _WORK, interpolation=cv2.INTER_AREA)


def _paper_border(work: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8] | None:
    """The portrait image white-balanced on the band along its edges, when that band is paper:
    light (its median grey, the per-pixel minimum of B, G, R, at least :data:`PAPER_LEVEL` of
    the image's 98th percentile) and even (at most :data:`PAPER_UNEVEN` of it off its median
    by more than a quarter); else None. A colour cast tints paper, so its hue is not asked."""
    grey = work.min(axis=2).astype(np.float32)
    band = np.zeros(grey.shape, bool)
    m = max(2, round(_BAND * _WORK[0]))
    band[:m], band[-m:], band[:, :m], band[:, -m:] = True, True, True, True
    light = float(np.percentile(grey, 98))
    level = float(np.median(grey[band]))
    if light <= 40 or level < PAPER_LEVEL * light:
        return None
    if float((np.abs(grey[band] - level) > 0.25 * level).mean()) > PAPER_UNEVEN:
        return None
    if float(np.std(cv2.Laplacian(grey, cv2.CV_32F)[band])) < PAPER_GRAIN:
        return None
    paper = np.median(work[band].astype(np.float32), axis=0)
    gains = float(paper.max()) / np.maximum(paper, 1.0)
    return np.clip(work.astype(np.float32) * gains, 0, 255).astype(np.uint8)


def _one_card_of_symbols(work: npt.NDArray[np.uint8]) -> bool:
    """Whether a portrait image shows SET symbols as one card prints them: 1 to 3 ink blobs of
    a symbol's size (:data:`SYMBOL_WIDTH`) in one stack at the printed pitch
    (:data:`SYMBOL_PITCH`), level, centred and of one ink."""
    width, height = _WORK
    found = [
        s
        for s in find_symbols(work, SYMBOL_WIDTH[0] * width, np.zeros((0, 4, 2)))
        if s[1] <= SYMBOL_WIDTH[1] * width
    ]
    # One per symbol: a faint outline's two halves, or a striped symbol's stripes, can be blobs
    # of their own. Two blobs are one symbol when together they are no taller than
    # _SAME_SYMBOL of its length (a symbol is about twice as long as tall; stacked symbols
    # are 0.69 of their length apart, so two of them span over 1.1 lengths).
    symbols: list[tuple] = []
    for s in sorted(found, key=lambda s: -s[1]):
        if all(
            np.linalg.norm(s[0] - t[0]) + 0.5 * (s[3] + t[3]) > _SAME_SYMBOL * t[1] for t in symbols
        ):
            symbols.append(s)
    if not 1 <= len(symbols) <= 3 or len(group_symbols(symbols)) != 1:
        return False
    level = np.cos(np.radians(_SYMBOL_TILT_DEG))
    if not all(abs(float(s[2][0])) >= level for s in symbols):
        return False
    ends = [s[0][0] + side * 0.5 * s[1] * abs(float(s[2][0])) for s in symbols for side in (-1, 1)]
    if min(ends) < _SYMBOL_MARGIN * width or max(ends) > (1 - _SYMBOL_MARGIN) * width:
        return False  # a symbol runs off the frame: a card cut by it, or no card
    centre = np.mean([s[0] for s in symbols], axis=0)
    off = np.abs(centre - np.array([width / 2, height / 2])) / np.array([width, height])
    if not (off <= np.array(SYMBOL_CENTRE)).all():
        return False
    ys = sorted(float(s[0][1]) for s in symbols)
    if not all(SYMBOL_PITCH[0] <= (b - a) / height <= SYMBOL_PITCH[1] for a, b in zip(ys, ys[1:])):
        return False
    return _one_ink(work, symbols)


def _one_ink(work: npt.NDArray[np.uint8], symbols: list[tuple]) -> bool:
    """Whether the symbols' inks share one hue (:data:`SYMBOL_HUE_DEG`): per symbol, the mean
    a*, b* (CIELAB) of the 30 % of pixels of its box furthest from the paper; a symbol whose
    ink has no hue (chroma under 4) is not asked."""
    if len(symbols) < 2:
        return True
    lab = cv2.cvtColor(work, cv2.COLOR_BGR2Lab).astype(np.float32)
    height, width = lab.shape[:2]
    paper = np.median(lab[[0, -1]].reshape(-1, 3), axis=0)
    hues = []
    for (cx, cy), length, _, short in symbols:
        x0, x1 = int(max(0, cx - length / 2)), int(min(width, cx + length / 2 + 1))
        y0, y1 = int(max(0, cy - short / 2)), int(min(height, cy + short / 2 + 1))
        box = lab[y0:y1, x0:x1].reshape(-1, 3)
        off = np.linalg.norm(box - paper, axis=1)
        ink = box[off >= np.percentile(off, 70)]
        a, b = float(ink[:, 1].mean()) - 128.0, float(ink[:, 2].mean()) - 128.0
        if np.hypot(a, b) >= 4.0:
            hues.append(np.arctan2(b, a))
    if len(hues) < 2:
        return True
    return hue_spread(hues)[1] <= SYMBOL_HUE_DEG
