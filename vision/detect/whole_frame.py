"""A photo that may be one card cropped to its edges, so no outline of it shows: the frame has a
card's proportions and a band of photographed paper along its edges (:func:`paper_framed`).

When no card is found in a photo, the pipeline asks this (:func:`vision.pipeline.recognise`,
``Table.paper_edges``) to say the hint that the photo may be one card cropped to its edges
(:mod:`vision.photo_warnings`). The older contour detector also took such a frame for the card
when it showed one card's symbols; that went with it (#33).

* a card's proportions (57 x 89 mm: 1.56; :data:`FRAME_ASPECT` allows for a loose crop);
* a photographed paper border: the band along the frame's edges is light, even and grainy
  (:data:`PAPER_LEVEL`, :data:`PAPER_UNEVEN`, :data:`PAPER_GRAIN`: a drawing or a screenshot
  is flat).

Measured on the shared chips and negatives: the project README, under ``setvision photo``
("A photo cropped to one card").
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["paper_framed"]

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


def paper_framed(frame: npt.NDArray[np.uint8], shrunk: npt.NDArray[np.uint8] | None = None) -> bool:
    """Whether the frame has a card's proportions (:data:`FRAME_ASPECT`) and a band along its
    edges that is photographed paper (light, even and grainy: :data:`PAPER_LEVEL`,
    :data:`PAPER_UNEVEN`, :data:`PAPER_GRAIN`): a photo that may be one card cropped to its
    edges.

    Args:
        frame: (H, W, 3) uint8 BGR image.
        shrunk: the frame shrunk (any factor), looked at instead of the frame to save time: the
            test runs at 160 x 250 px.
    """
    work = _portrait_work(frame, shrunk)
    return work is not None and _paper_border(work)


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


def _paper_border(work: npt.NDArray[np.uint8]) -> bool:
    """Whether the band along the portrait image's edges is paper: light (its median grey, the
    per-pixel minimum of B, G, R, at least :data:`PAPER_LEVEL` of the image's 98th percentile),
    even (at most :data:`PAPER_UNEVEN` of it off its median by more than a quarter) and grainy
    (:data:`PAPER_GRAIN`). A colour cast tints paper, so its hue is not asked."""
    grey = work.min(axis=2).astype(np.float32)
    band = np.zeros(grey.shape, bool)
    m = max(2, round(_BAND * _WORK[0]))
    band[:m], band[-m:], band[:, :m], band[:, -m:] = True, True, True, True
    light = float(np.percentile(grey, 98))
    level = float(np.median(grey[band]))
    if light <= 40 or level < PAPER_LEVEL * light:
        return False
    if float((np.abs(grey[band] - level) > 0.25 * level).mean()) > PAPER_UNEVEN:
        return False
    return float(np.std(cv2.Laplacian(grey, cv2.CV_32F)[band])) >= PAPER_GRAIN
