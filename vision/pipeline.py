"""The photo pipeline: frame -> cards -> crops -> probabilities -> table-level reading -> SETs.

:func:`recognise` runs every stage on one BGR frame and returns a frozen :class:`Table`;
:func:`process_photo` adds loading from a path or bytes and drawing the annotated copy, which is
what ``setvision photo`` runs per photo. Stage times are measured with ``time.perf_counter``
and reported in milliseconds under the stage names of :data:`STAGES`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from vision.colour import hue_spread, table_colour
from vision.decode import ATTRIBUTE_NAMES, UNCERTAIN_BELOW, decode_table
from vision.rules import find_sets
from vision.table import Table, grid_positions, reading_order
from vision.warp import paper_reference, warp_cards

__all__ = [
    "STAGES",
    "Detector",
    "PhotoResult",
    "Table",
    "process_photo",
    "grid_positions",
    "reading_order",
    "recognise",
]

#: Stage names in ``Table.timings_ms``, in pipeline order.
STAGES: Final = ("load", "detect", "warp", "classify", "colour", "rules", "draw")
#: Agreement between the model's colours and the table's ink groups
#: (:attr:`vision.colour.InkGroups.agreement`) under which the model's colour is not sharpened by
#: its temperature: the inks contradict it (a strong colour cast, clipped highlights), and the
#: temperature, fitted on photos under ordinary light, would turn a 0.81 "red" for a faint
#: purple under a magenta cast into 0.99. Measured with ``scripts/eval_robustness.py --cv``
#: (1,399 cards): as taken no right reading more is flagged; under magenta and green casts,
#: gamma 0.5 and darkening to 20 %, unflagged misreads 12 -> 9 (the three magenta ones; README).
DOUBTFUL_AGREEMENT: Final = 0.8
#: A card whose paper band is clipped (every channel at least :data:`CLIPPED_LEVEL`) over this
#: share of it has its fill confidence not sharpened by the fill temperature (as a doubtful
#: colour above): burnt-out paper may have lost its stripes. Measured with the shipped model on
#: every labelled photo x 1.4 (``eval_robustness.py`` ``bright140``): all 15 fill misreads lie on
#: cards clipped over 0.5 of their band (as do 540 of 1,353 right readings); as taken, 1 card
#: of 1,398.
#:
#: A card whose band has one or two channels clipped (not all three) over this share has its
#: colour confidence not sharpened by the colour temperature: a cast that clips a channel of the
#: paper leaves the crop's white balance short in that channel (the paper's true level is
#: unknown), and faint purple is read green under a green cast, red under a warm one. Measured
#: the same way under the green, magenta and warm casts: all 11 colour misreads lie on such
#: cards; unflagged misreads 5 -> 3 (green) and 1 -> 0 (warm), right readings flagged 9 -> 17,
#: 16 -> 19 and 7 -> 10 of about 1,390 each; x 1.4, 95 -> 99; as taken none more. Paper burnt
#: out in all three channels keeps its balance (counting it too flagged 148 at x 1.4).
CLIPPED_PAPER: Final = 0.5
CLIPPED_LEVEL: Final = 250
_CLIP_CROP: Final = (32, 50)


class _Detections(Protocol):
    @property
    def corners(self) -> npt.NDArray[np.float32]: ...

    @property
    def scores(self) -> npt.NDArray[np.float32]: ...


#: A detector: BGR uint8 frame -> detections with ``corners`` (N, 4, 2) float32 TL, TR, BR, BL
#: portrait and ``scores`` (N,) float32 (:func:`vision.detect.find_cards`).
Detector = Callable[[npt.NDArray[np.uint8]], _Detections]


def _default_detector() -> Detector:
    from vision.detect import find_cards

    return find_cards


#: Chroma (max minus min of B, G, R, in grey levels) that the inkiest 1% of a table's crop
#: pixels must reach for colour to be readable. Measured (the 175 shared table photos with
#: cards, as taken and darkened to 60 % then re-saved as JPEG: 360 tables): 38.8 at the
#: least; a greyscale photo: 0. Copies of those photos turned grey and tinted by one colour
#: (x(0.75, 0.9, 1.0), x(0.6, 0.8, 1.0), the sepia matrix's x(0.94, 1.2, 1.35) and a cyan
#: x(1.1, 1.0, 0.7), BGR, JPEG 90: 699 tables) keep 10 to 55 after each crop's white balance
#: (clipped highlights, JPEG): 63 % of them are under 20.
COLOURLESS_CHROMA = 20

#: With one or two cards, the chroma that the inkiest 0.3 % of their pixels must reach (the
#: percentile, and the chroma). Measured on single cards (the shared chips, every 6th verified
#: one, 2,592, each whole chip read as one card): the inkiest 1 % is under 20 on 67 of them
#: (faint open outlines, read colourless until 2026-12), the inkiest 0.3 % 13 at the least; the
#: same chips turned grey (JPEG 90): 0. A tinted photo of one or two cards is not told apart
#: (the one-hue rule below needs 3 cards).
FEW_CARDS_PERCENTILE = 99.7
FEW_CARDS_CHROMA = 8

#: Under this chroma (as :data:`COLOURLESS_CHROMA`), a table of 3 or more cards whose inks all
#: lie within :data:`ONE_HUE_DEGREES` of one hue is taken for a monochrome photo tinted by one
#: colour (sepia, a filter). Measured as above: a real table of one ink colour (all purple)
#: reaches 66 at the least, and no real table of the 360 is under both limits; with them,
#: 77 % of the tinted copies are found (the rest keep too little colour to tell the hue), and
#: about 60 % of colour copies through the sepia matrix (156 tables: its clipped highlights
#: leave each card's crop a different tint after its white balance; the same share with the
#: spread of hue axes, angles modulo 180 degrees, instead of hues).
TINT_CHROMA = 48
ONE_HUE_DEGREES = 45.0
#: A tinted photo tints the cards' paper too: the one-hue rule above needs the paper as
#: photographed (before each crop's white balance; :func:`paper_ab`) at least this chroma
#: (CIELAB, OpenCV 8-bit units) and its hue within :data:`TINT_HUE_AGREEMENT` of the inks'.
#: Measured: tomwhite's all-purple table, pclewis test1, gractang IMG_0544-46 and a close-up of
#: 4 faint purple cards as taken 3.0 to 7.1 (the close-up was taken for a tinted photo before: a
#: new user's trial); sepia copies of gractang IMG_0544-46, which the one-hue rule finds, 13.3
#: to 14.4, hue 109 degrees against inks at 72 to 94; the same copies of tomwhite and pclewis 25
#: to 27.
PAPER_TINT_CHROMA = 8.0
TINT_HUE_AGREEMENT = 60.0


def paper_ab(
    frame: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """(N, 2) float32 CIELAB (a*, b*) of each card's paper as photographed: the paper level that
    :func:`vision.warp.white_balance` balances on (:func:`vision.warp.paper_reference`), taken
    from a 40 x 62 warp without the balance (OpenCV 8-bit Lab, 0 for neutral).

    Args:
        frame: (H, W, 3) uint8 BGR photo.
        corners: (N, 4, 2) float32 card corners in ``frame`` pixels, TL, TR, BR, BL.
    """
    if len(corners) == 0:
        return np.zeros((0, 2), np.float32)
    raw = warp_cards(frame, corners, size=(40, 62), balance=False)
    paper = np.clip(np.round(paper_reference(raw)), 0, 255).astype(np.uint8)[:, None]
    lab = cv2.cvtColor(paper, cv2.COLOR_BGR2Lab)[:, 0].astype(np.float32)
    return lab[:, 1:] - 128.0


def colourless(
    crops: npt.NDArray[np.uint8],
    paper: npt.NDArray[np.float32] | Callable[[], npt.NDArray[np.float32]] | None = None,
) -> bool:
    """True if the (N, h, w, 3) uint8 BGR crops (white-balanced, as
    :func:`vision.warp.warp_cards` makes them) carry no usable colour: a greyscale photo, or a
    monochrome one tinted by a single colour (see :data:`TINT_CHROMA`). One or two cards are
    colourless when their inkiest 0.3 % is greyer than :data:`FEW_CARDS_CHROMA`.

    Args:
        crops: the cards' crops.
        paper: (N, 2) their paper's (a*, b*) as photographed (:func:`paper_ab`), or a function
            giving it (called only where the inks alone say "one tint"); when given, a photo is
            taken for a tinted one only if its paper is tinted along the inks' hue
            (:data:`PAPER_TINT_CHROMA`): a close-up of a few faint cards of one colour is not.
    """
    if len(crops) == 0:
        return False
    sample = np.ascontiguousarray(crops[:, ::4, ::4])
    b, g, r = sample[..., 0], sample[..., 1], sample[..., 2]  # whole-array ops, not per-pixel rows
    chroma = np.maximum(np.maximum(b, g), r).astype(np.int16) - np.minimum(np.minimum(b, g), r)
    if len(crops) < 3:  # a card's thin outline can be under 1 % of its pixels
        return float(np.percentile(chroma, FEW_CARDS_PERCENTILE)) < FEW_CARDS_CHROMA
    inkiest = float(np.percentile(chroma, 99))
    if inkiest < COLOURLESS_CHROMA:
        return True
    if inkiest >= TINT_CHROMA or len(crops) < 3:
        return False
    hues = _ink_hues(sample)
    if len(hues) < 3:
        return False
    mean, spread = hue_spread(hues)
    if spread >= ONE_HUE_DEGREES:
        return False
    if callable(paper):
        paper = paper()
    if paper is not None and len(paper):
        a, b = np.median(np.asarray(paper, np.float64), axis=0)
        if np.hypot(a, b) < PAPER_TINT_CHROMA:
            return False  # the paper as photographed is near neutral: no tint over the photo
        gap = np.degrees(np.abs(np.angle(np.exp(1j * (np.arctan2(b, a) - mean)))))
        if gap > TINT_HUE_AGREEMENT:
            return False  # a light's colour on the paper, another hue than the inks'
    return True


def _ink_hues(sample: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """Hue angle (radians, CIE Lab a*-b* plane) of each crop's coloured pixels (chroma >= 6),
    for the crops with enough of them (5 pixels, a mean chroma of 2)."""
    n, h, w = sample.shape[:3]
    lab = cv2.cvtColor(sample.reshape(n * h, w, 3), cv2.COLOR_BGR2Lab)
    ab = lab.reshape(n, h * w, 3)[..., 1:].astype(np.float32) - 128.0
    hues = []
    for pixels in ab:
        coloured = pixels[np.hypot(pixels[:, 0], pixels[:, 1]) >= 6.0]
        if len(coloured) < 5:
            continue
        a, b_ = coloured.mean(axis=0)
        if np.hypot(a, b_) >= 2.0:
            hues.append(np.arctan2(b_, a))
    return np.array(hues, dtype=np.float64)


def recognise(
    frame: npt.NDArray[np.uint8],
    classifier: Any,
    *,
    detector: Detector | None = None,
    mixed_decks: bool = False,
    uncertain_below: float = UNCERTAIN_BELOW,
    table_level_colour: bool = True,
) -> Table:
    """Find, read and solve every card on one frame.

    Args:
        frame: (H, W, 3) uint8 BGR image. Not modified.
        classifier: a :class:`vision.classify.Classifier` (``predict(crops)`` -> probabilities
            with ``count``, ``colour``, ``shape``, ``fill`` (N, 3) float32 arrays).
        detector: frame -> detections; default :func:`vision.detect.find_cards`.
        mixed_decks: several decks are mixed, so a card may appear twice (no uniqueness).
        uncertain_below: confidence under which a card is flagged uncertain.
        table_level_colour: fuse the model's colour with ink clustering across the table.

    Returns:
        The :class:`Table`, timings for detect, warp, classify, colour and rules.

    Raises:
        ValueError: if ``frame`` is not (H, W, 3) uint8.
    """
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"frame: expected (H, W, 3) uint8 BGR, got {frame.shape} {frame.dtype}")
    height, width = frame.shape[:2]
    timings: dict[str, float] = {}
    detect = detector or _default_detector()

    t = time.perf_counter()
    found = detect(frame)
    corners = np.asarray(found.corners, np.float32).reshape(-1, 4, 2)
    scores = np.asarray(getattr(found, "scores", np.ones(len(corners))), np.float32)
    partial = np.asarray(getattr(found, "partial", np.zeros(len(corners))), bool)
    order = reading_order(corners)
    corners, scores, partial = corners[order], scores[order], partial[order]
    timings["detect"] = _ms(t)
    if len(corners) == 0:
        for stage in ("warp", "classify", "colour", "rules"):
            timings[stage] = 0.0
        from vision.detect.whole_frame import paper_framed

        # looked at in a copy every few pixels (the test runs at 160 x 250 px): a full-size
        # area average cost 50-200 ms on a large photo
        step = max(1, min(frame.shape[:2]) // 500)
        t = time.perf_counter()
        paper = paper_framed(frame, np.ascontiguousarray(frame[::step, ::step]))
        timings["detect"] += _ms(t)
        return Table.empty(width, height, timings, paper_edges=paper)

    t = time.perf_counter()
    crops = warp_cards(frame, corners)
    timings["warp"] = _ms(t)

    t = time.perf_counter()
    probs = classifier.predict(crops)
    model = np.stack([np.asarray(getattr(probs, n), np.float32) for n in ATTRIBUTE_NAMES], 1)
    timings["classify"] = _ms(t)

    t = time.perf_counter()
    fused = model.copy()
    greyscale = colourless(crops, lambda: paper_ab(frame, corners))
    ink_evidence = None
    temperatures = getattr(classifier, "temperatures", None)
    if greyscale:
        # A greyscale photo (or one with the colour washed out entirely): no ink colour can be
        # read, so every colour is equally likely and each card is reported uncertain.
        fused[:, 1] = 1.0 / 3.0
    elif table_level_colour:
        fused[:, 1], groups, _ = table_colour(crops, model[:, 1])
        if (
            temperatures is not None
            and len(groups.colours)
            and (groups.agreement < DOUBTFUL_AGREEMENT)
        ):
            temperatures = (temperatures[0], 1.0, *temperatures[2:])
        # What the inks added (log-likelihood ratio, fused over model): kept out of the
        # temperature scaling, which was fitted on the model's probabilities alone.
        ink_evidence = np.log(np.clip(fused[:, 1], 1e-6, 1.0)) - np.log(
            np.clip(model[:, 1], 1e-6, 1.0)
        )
    every, some = clipped_paper(frame, corners)
    if temperatures is not None:
        # A fill read on burnt-out paper (its stripes may be clipped away) is not sharpened,
        # nor a colour read on paper with a channel clipped (its white balance falls short).
        colour_t = np.where(some >= CLIPPED_PAPER, 1.0, temperatures[1])
        fill_t = np.where(every >= CLIPPED_PAPER, 1.0, temperatures[3])
        temperatures = (temperatures[0], colour_t, temperatures[2], fill_t)
    decoded = decode_table(
        tuple(fused[:, a] for a in range(4)),
        mixed_decks=mixed_decks,
        uncertain_below=uncertain_below,
        temperatures=temperatures,
        evidence=(None, ink_evidence, None, None),
    )
    timings["colour"] = _ms(t)

    duplicates = decoded.duplicates
    if greyscale:  # colour unknown: cards read alike may be the three colours of one card
        duplicates = colourless_repeats(fused)

    t = time.perf_counter()
    sets = tuple(find_sets(decoded.cards))
    timings["rules"] = _ms(t)

    return Table(
        width=width,
        height=height,
        cards=decoded.cards,
        corners=corners,
        scores=scores,
        partial=partial,
        confidences=decoded.confidences,
        probabilities=fused,
        model_probabilities=model,
        uncertain=decoded.uncertain,
        duplicates=duplicates,
        sets=sets,
        timings_ms=timings,
        mixed_decks=mixed_decks,
        colourless=greyscale,
        burnt_out=every >= CLIPPED_PAPER,
    )


def colourless_repeats(probabilities: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """(N,) bool: cards read alike on a photo with no colour to read. A deck holds each count,
    shape and fill three times, once per colour (the rules), so a card is a repeat only when
    more than three cards share its best count, shape and fill. ``probabilities``: (N, 4, 3)
    float32, heads count, colour, shape, fill."""
    if len(probabilities) == 0:
        return np.zeros(0, dtype=bool)
    best = probabilities.argmax(axis=2)[:, [0, 2, 3]]
    key = best @ np.array([9, 3, 1])
    return np.bincount(key, minlength=27)[key] > 3


def clipped_paper(
    frame: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32]
) -> tuple[np.ndarray, np.ndarray]:
    """Shares of each card's border band (its plain paper) that the camera clipped: (N,) float
    with every channel at :data:`CLIPPED_LEVEL` or more (burnt out), and (N,) float with one or
    two channels there, not all three (a colour cast clipping a channel); in ``frame`` (H, W,
    3) uint8 BGR, read from a small unbalanced warp of each quad ``corners`` (N, 4, 2) float32
    (TL, TR, BR, BL)."""
    raw = warp_cards(frame, corners, size=_CLIP_CROP, balance=False)
    w, h = _CLIP_CROP
    band = np.ones((h, w), bool)
    band[h // 10 : h - h // 10, w // 8 : w - w // 8] = False
    paper = raw[:, band]  # (N, P, 3)
    every = paper.min(axis=2) >= CLIPPED_LEVEL
    some = paper.max(axis=2) >= CLIPPED_LEVEL
    return every.mean(axis=1), (some & ~every).mean(axis=1)


@dataclass(frozen=True)
class PhotoResult:
    """One processed photo: the table and, if drawn, the annotated copy.

    Attributes:
        table: the recognised table (timings include ``load`` and, if drawn, ``draw``).
        annotated: (H, W, 3) uint8 BGR annotated copy, or None when not drawn.
        annotated_scale: how many times the decoded frame's size the copy is drawn
            (:func:`vision.overlay.annotation_scale`: 2 to 4 when the cards are too small for
            their labels, else 1).
    """

    table: Table
    annotated: npt.NDArray[np.uint8] | None
    annotated_scale: int = 1


def process_photo(
    source: str | Path | bytes,
    classifier: Any,
    *,
    draw: bool = True,
    max_pixels: int | None = None,
    reduce: bool = True,
    **options: Any,
) -> PhotoResult:
    """Load a photo, recognise its table and (optionally) draw the annotated copy.

    A JPEG of 3,200 px or more on its long side is decoded at 1/2 (or less) of its size while
    its long side stays at least :data:`REDUCED_LONG_SIDE` px (libjpeg's DCT scaling: a 12 MP
    photo decodes in about half the time; measured on the 116 annotated photos upscaled to 12
    MP: 1001 cards found against 997 at full size, 346 of 346 cards read the same). Corners,
    width and height are reported in the photo's own pixels all the same; the annotated copy
    is drawn on the decoded frame, so it is that much smaller. A photo whose cards are too
    small for their labels gets its copy drawn 2 to 4 times larger
    (:func:`vision.overlay.annotation_scale`; ``annotated_scale``).

    Args:
        source: a path, or the encoded bytes of an image (JPEG, PNG, ...).
        classifier: see :func:`recognise`.
        draw: also draw the annotated copy (:func:`vision.overlay.draw_table`, on the loaded
            frame itself: it is not returned otherwise).
        max_pixels: refuse photos larger than this (default :data:`vision.io.MAX_PIXELS`).
        reduce: decode large JPEGs reduced (above); False decodes every photo at full size.
        **options: passed to :func:`recognise` (``detector``, ``mixed_decks``, ...).

    Returns:
        The :class:`PhotoResult`.

    Raises:
        SetVisionError, FileNotFoundError, ValueError: an unreadable photo
            (:func:`vision.io.load_image`).
    """
    from vision.io import MAX_PIXELS, load_image

    t = time.perf_counter()
    frame = load_image(
        source,
        max_pixels=max_pixels or MAX_PIXELS,
        min_long_side=REDUCED_LONG_SIDE if reduce else None,
    )
    load_ms = _ms(t)
    table = seen = recognise(frame, classifier, **options)
    factor = _reduction(source, frame) if reduce else 1
    if factor > 1:
        table = _enlarged(table, factor)
    timings = {"load": load_ms, **table.timings_ms}
    annotated = None
    scale = 1
    if draw:
        from vision.overlay import annotation_scale, draw_table

        t = time.perf_counter()
        scale = annotation_scale(frame.shape, seen.corners)
        if scale > 1:  # cards too small for their labels: draw on the photo enlarged
            frame = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
            seen = _enlarged(seen, scale)
        # The frame is ours: no copy. A photo's legend may go beside it rather than over cards.
        annotated = draw_table(frame, seen, copy=False, legend_beside=True)
        timings["draw"] = _ms(t)
    return PhotoResult(replace(table, timings_ms=timings), annotated, scale)


def _enlarged(table: Table, factor: int) -> Table:
    """``table`` in the pixels of an image ``factor`` times its size, where its pixel x covers
    pixels ``factor * x .. factor * x + factor - 1``."""
    return replace(
        table,
        corners=(table.corners * factor + 0.5 * (factor - 1)).astype(np.float32),
        width=table.width * factor,
        height=table.height * factor,
    )


#: Smallest long side (px) of a JPEG decoded reduced by :func:`process_photo`.
REDUCED_LONG_SIDE: Final = 1600


def _reduction(source: str | Path | bytes, frame: npt.NDArray[np.uint8]) -> int:
    """The factor (1, 2, 4 or 8) by which ``frame`` was decoded smaller than the photo, from
    the size its header declares (1 when that cannot be read)."""
    from vision.io import image_size

    try:
        if isinstance(source, bytes | bytearray | memoryview):
            head = bytes(source[: 1 << 18])
        else:
            with open(source, "rb") as handle:
                head = handle.read(1 << 18)
        size = image_size(head)
    except (OSError, ValueError):
        return 1
    if size is None:
        return 1
    ratio = max(size) / max(frame.shape[:2])
    return int(min((2, 4, 8), key=lambda f: abs(f - ratio))) if ratio > 1.5 else 1


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
