"""What a user is told about a photo besides its cards: warnings about the file (an animation,
a GIF's 256 colours, heavy JPEG compression) and about the reading (cards too small to be found
reliably, burnt-out paper, a photo that may be one card cropped to its edges).

Library code, so that every command that reads photos or frames says the same things
(``setvision photo`` prints them on stderr, one line each).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any, Final

__all__ = [
    "LOW_JPEG_QUALITY",
    "OVEREXPOSED_SHARE",
    "SMALL_CARD_PX",
    "exposure_warning",
    "file_warnings",
    "reading_warnings",
    "size_warning",
]

#: Short side (px) of a card in the photo under which cards are near the detector's smallest
#: (the learned finder's least piece, ``vision.detect.learned.MIN_PIECE_PIXELS``, is a card of
#: about 16 x 24 px in a photo of 512 px or less; the contour detector's about 18 x 28) and some
#: may be missed: a new user's 200 x 112 px copy of a 12-card table read 11 cards without a word.
SMALL_CARD_PX: Final = 28
#: JPEG quality (libjpeg's scale, :func:`vision.io.jpeg_quality`) under which a photo is said
#: to be heavily compressed. A new user's trial: koff IMG03 saved at 15 read a card's count
#: wrong at 97.7% and at 10 at 99.9% (its quad on the cell beside it), a tomwhite card at 10
#: read purple for green at 97.5%; at 20 and over the readings held. Phones save at 85 to 97;
#: the shared table photos measure 75 to 97.
LOW_JPEG_QUALITY: Final = 30
#: Share of a photo's cards (2 at least) with burnt-out paper (``burnt_out``, see
#: :class:`vision.table.Table`) from which the photo is said to be overexposed. A new user's
#: copy of a table with every pixel x 1.8 read 4 striped cards open, 3 at 91-93%; as taken, 1
#: card of the 1,398 labelled ones is burnt out.
OVEREXPOSED_SHARE: Final = 0.25
#: Long side (px) of a photo in which no card was found under which its size is said (a 160 x 90
#: copy of a 12-card table: none found; close-ups of 2 cards at 365 x 235 px can be missed for
#: other reasons, so the size is not blamed there).
SMALL_PHOTO_PX: Final = 300
#: Short side (px) of a photo in which no card was found under which its size is said too
#: (a 20000 x 50 strip: a card in it would be under 50 px long).
THIN_PHOTO_PX: Final = 75
#: Long side (px) under which a photo with no card found, a card's proportions and paper along
#: its edges (:func:`vision.detect.whole_frame.paper_framed`; a new user's trial had the hint
#: on every 3:2 photo of no card, a bridge and a desk among them) is said to be, maybe, one
#: card cropped to its edges that was not made out (trial 7: "cards under about 18 x 28 px
#: are not found" blamed the size of a 144 x 224 px card).
CARD_CROP_PX: Final = 2000


def exposure_warning(result: dict[str, Any]) -> str | None:
    """A warning when :data:`OVEREXPOSED_SHARE` or more of the photo's cards (2 at least) have
    burnt-out paper, else None. ``result``: the ``--json`` object of a photo."""
    cards = result.get("cards", [])
    burnt = sum(1 for card in cards if card.get("burnt_out"))
    if burnt < 2 or burnt < OVEREXPOSED_SHARE * len(cards):
        return None
    return (
        f"overexposed: the paper of {burnt} of {len(cards)} cards is burnt out, where stripes "
        "can vanish (a striped card may read open, even at a high confidence); a darker photo "
        "reads better"
    )


def size_warning(result: dict[str, Any]) -> str | None:
    """A warning when the photo is too small for its cards to be found reliably, or (no card
    found, ``paper_edges``) may be one card cropped to its edges that was not made out; else
    None.

    Args:
        result: a photo's reading (the ``--json`` object: ``width``, ``height``, ``cards`` with
            their ``corners`` in the photo's pixels, ``paper_edges``).
    """
    width, height = int(result.get("width", 0)), int(result.get("height", 0))
    cards = result.get("cards", [])
    if not cards:
        if result.get("paper_edges") and max(width, height) < CARD_CROP_PX:
            return (
                f"no card found: if this {width} x {height} px photo is one card cropped to its "
                "edges, its symbols could not be made out (faint, blurred, or a neighbour in "
                "view); a photo with some table round the card is read more often"
            )
        if 0 < max(width, height) < SMALL_PHOTO_PX or 0 < min(width, height) < THIN_PHOTO_PX:
            return (
                f"the photo is only {width} x {height} px: cards under about 18 x 28 px are not "
                "found; use a larger photo if its cards are that small"
            )
        return None
    short = statistics.median(
        min(math.dist(q[i], q[(i + 1) % 4]) for i in range(4))
        for q in (card["corners"] for card in cards)
    )
    if short < SMALL_CARD_PX:
        return (
            f"its cards are only about {short:.0f} px across: at this size some may be missed or "
            "misread; use a larger photo or come closer"
        )
    return None


def file_warnings(photo: str | Path) -> list[str]:
    """Warnings about the file itself, each naming it: an animation or multi-page image (only
    its first frame is read), a GIF or palette PNG (at most 256 colours), a JPEG saved under
    :data:`LOW_JPEG_QUALITY`."""
    from vision.io import frame_count, is_gif, is_palette_png, jpeg_quality

    out = []
    if (frames := frame_count(photo)) > 1:
        out.append(f"{photo} holds {frames} frames (an animation or a multi-page image); only "
                   "the first was read")  # fmt: skip
    gif = is_gif(photo)
    if gif or is_palette_png(photo):
        kind = "a GIF" if gif else "a palette PNG"
        out.append(f"{photo} is {kind} (at most 256 colours): cards may be missed or misread; "
                   "a JPEG or a full-colour PNG of the table keeps its colours")  # fmt: skip
    if (quality := jpeg_quality(photo)) is not None and quality < LOW_JPEG_QUALITY:
        out.append(f"{photo} is a heavily compressed JPEG (quality about {quality}): cards may "
                   "be missed or misread, even at a high confidence; a less compressed copy "
                   "reads better")  # fmt: skip
    return out


def reading_warnings(name: str, result: dict[str, Any]) -> list[str]:
    """Warnings about a photo's reading (``result``: its ``--json`` object), each starting with
    ``name``: :func:`size_warning` and :func:`exposure_warning`."""
    found = (size_warning(result), exposure_warning(result))
    return [f"{name}: {w}" for w in found if w is not None]
