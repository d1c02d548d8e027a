"""Candidate scores: shape (aspect ratio, corners, fill) and a tiny upright warp of each quad
probed for a bright neutral paper border and ink (symbols) inside."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.detect.geometry import (
    NEXT,
    aspect_score,
    corner_score,
    cropped_aspect_score,
    ramp,
    rect_ratio,
)
from vision.detect.masks import KERNEL7
from vision.detect.select import dedupe
from vision.warp import hist_median

__all__ = [
    "MIN_SCORE",
    "dim_patches",
    "ink_across",
    "ink_centres",
    "ink_offset",
    "ink_shift",
    "probe_scores",
    "score_candidates",
    "shape_scores",
    "tilted_scores",
    "white_surround",
]


#: Detections scoring below this are dropped.
MIN_SCORE: Final = 0.5

#: A candidate refused for its shape under the image-centred camera is scored again under the
#: cameras of a crop or a steep view (:func:`tilted_scores`): its shape score is scaled by
#: ``TILT_WEIGHT`` (a card that fits the image-centred camera ranks first); its outline, sides
#: averaged, is at most ``TILT_MAX_RATIO`` times as long as wide (a strip of print is longer);
#: and its top side, the far one on a table photographed from the front, is under
#: ``TILT_TOP_SHARE`` of its bottom side. Measured (2026-12-01): close-ups cut from the
#: reviewed photos (``scripts/eval_closeups.py``) 95.7 -> 98.0% of the whole cards found; 26
#: labelled photos warped as by a camera tilted 18 to 39 degrees, 250 -> 277 of 293 cards found
#: and 7 -> 1 false; the 122 reviewed photos as taken unchanged; the 1,500 negative chips gained
#: one detection with no card (a sign's white letters). Without the top-side rule, a printed word
#: on a box gained one too; with the rescued quads probed for "two cards side by side" as
#: well, dark blobs were split into three false cards.
TILT_WEIGHT: Final = 0.8
TILT_MAX_RATIO: Final = 2.4
TILT_TOP_SHARE: Final = 0.97


_PROBE_W, _PROBE_H = 40, 62


#: Glare in a quad's border band: at least this share of the band clipped (darkest channel at
#: least :data:`_GLARE_LEVEL`) ...
_GLARE_SHARE: Final = 0.1
_GLARE_LEVEL: Final = 250


#: ... and at least this share of it darker than this fraction of the band's median level
#: (the paper outside the glare): see :func:`_glare_paper`.
_UNLIT_SHARE: Final = 0.1
_UNLIT_LEVEL: Final = 0.7


#: Saturation above the paper's of a symbol pixel (SET symbols are red, green or purple), for
#: locating the symbols apart from grey shadow edges and marks.
_SYMBOL_CHROMA: Final = 0.08


#: Saturation of a pixel, with the paper's colour as white, above which it is ink. Measured on
#: pclewis shadow photos: a hand's shadow on warm-lit paper reaches ~0.3 there (0.38 to 0.42
#: without the paper as white); printed red, green and purple 0.65 to 0.8.
_INK_TINT: Final = 0.36
#: Ink absorbs: a printed pixel is darker than the paper in at least one channel (each channel
#: over the paper's under this). A pixel at least as bright as the paper in every channel is
#: paper under more or other light (a second, bluish lamp lighting part of a card; glare),
#: however differently tinted.
_INK_ABSORBS: Final = 0.9


#: A stroke (an outline, a stripe) is ink where it is darker than the paper closed over it by
#: :data:`_STROKE_STEP` at least; inside the symbols' area, when a card's content is judged, on
#: clean paper by :data:`_NOISE_STEPS` times the paper's own noise (1.4826 x the median
#: absolute deviation of that ratio over the border band) too, but never by under
#: :data:`_STROKE_STEP_CLEAN`: faint outlines on a washed-out photo (shadows lifted, gamma 0.5:
#: jtclark2 AllShades) are 6 to 10 % darker than their paper there, whose noise is under 1 %.
#: The border band keeps the strict step (a hand's soft shadow edge there is no symbol).
_STROKE_STEP: Final = 0.14
_STROKE_STEP_CLEAN: Final = 0.07
_NOISE_STEPS: Final = 10.0


#: A card's paper under this share of the scene's median card paper level (darkest channel) is
#: dim: measured on the annotated photos, true cards on a surface as bright as themselves reach
#: 0.68 at least (cards in a hand's shadow go down to 0.39, but on a darker table).
_DIM_SHARE: Final = 0.6


def _probe_masks() -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:_PROBE_H, 0:_PROBE_W]
    fx, fy = xx / (_PROBE_W - 1), yy / (_PROBE_H - 1)
    inner = (fx > 0.13) & (fx < 0.87) & (fy > 0.1) & (fy < 0.9)
    band = ~inner & (fx > 0.04) & (fx < 0.96) & (fy > 0.03) & (fy < 0.97)
    return inner, band


_INNER, _BAND = _probe_masks()


_BAND_INDEX: Final = np.flatnonzero(_BAND)  # flat pixel indices of the band in a probe


_PROBE_TARGET: Final = np.array(
    [[0, 0], [_PROBE_W - 1, 0], [_PROBE_W - 1, _PROBE_H - 1], [0, _PROBE_H - 1]], np.float32
)


def score_candidates(
    small: np.ndarray,
    cands: list[tuple],
    focal: float,
    centre: np.ndarray,
    min_score: float = MIN_SCORE,
) -> tuple:
    """Score candidates: (quads, fill, cut, outlines, scores, upright, paper level),
    near-duplicates removed, best first. Only candidates whose shape alone scores at least
    ``min_score`` are probed (the probe can only lower a score); those whose shape fits only a
    camera off the image's centre (:func:`tilted_scores`) are probed too, as single cards
    (never "upright": two cards side by side)."""
    quads = np.array([c[0] for c in cands], dtype=np.float64)
    fill = np.array([c[1] for c in cands])
    cut = np.array([c[2] for c in cands], dtype=bool)
    pre = shape_scores(small.shape[:2], quads, fill, cut, focal, centre)
    order = dedupe(quads, pre)
    quads, fill, cut, pre = quads[order], fill[order], cut[order], pre[order]
    outlines = [cands[i][3] for i in order]
    good = pre >= min_score
    scores = np.zeros(len(quads))
    upright = np.zeros(len(quads), dtype=bool)
    level = np.zeros(len(quads))
    paper, content, upright[good], level[good] = probe_scores(
        small, quads[good], focal=focal, centre=centre
    )
    scores[good] = pre[good] * paper * content
    tilted = tilted_scores(small.shape[:2], quads, fill, cut, pre, min_score)
    more = tilted >= min_score
    if more.any():
        paper, content, _, level[more] = probe_scores(
            small, quads[more], focal=focal, centre=centre
        )
        scores[more] = tilted[more] * paper * content
    return quads, fill, cut, outlines, scores, upright, level


def tilted_scores(
    size: tuple[int, int],
    quads: np.ndarray,
    fill: np.ndarray,
    cut: np.ndarray,
    pre: np.ndarray,
    min_score: float = MIN_SCORE,
) -> np.ndarray:
    """(N,) shape scores, in [0, :data:`TILT_WEIGHT`], of the candidates :func:`shape_scores`
    refused (``pre`` under ``min_score``) that a camera off the image's centre makes card-shaped
    (:func:`vision.detect.geometry.cropped_aspect_score`); 0 for the others.

    A close-up cut from a photo of a table taken at 45 degrees, or the near row of a steep
    shot, shows cards 2 to 2.3 times as long as wide, or nearly square, to the image-centred
    camera, while their outlines keep the perspective that another camera undoes. Only whole
    candidates at most :data:`TILT_MAX_RATIO` long (sides averaged) whose top side is under
    :data:`TILT_TOP_SHARE` of their bottom side (far side up, as a table is photographed)
    are tried. ``size`` (h, w) of the working image; the other arrays as in
    :func:`shape_scores`.
    """
    out = np.zeros(len(quads))
    if len(quads) == 0:
        return out
    ratio = rect_ratio(quads, None, np.zeros(2))
    ratio = np.maximum(ratio, 1.0 / np.maximum(ratio, 1e-9))
    tried = (pre < min_score) & ~cut & (ratio <= TILT_MAX_RATIO)
    by_y = np.take_along_axis(quads, np.argsort(quads[..., 1], axis=1)[..., None], axis=1)
    top = np.linalg.norm(by_y[:, 0] - by_y[:, 1], axis=1)
    bottom = np.linalg.norm(by_y[:, 2] - by_y[:, 3], axis=1)
    tried &= top < TILT_TOP_SHARE * bottom
    if tried.any():
        out[tried] = (
            TILT_WEIGHT
            * cropped_aspect_score(quads[tried], size)
            * ramp(fill[tried], 0.8, 0.92)
            * corner_score(quads[tried])
        )
    return out


def shape_scores(
    size: tuple[int, int],
    quads: np.ndarray,
    fill: np.ndarray,
    cut: np.ndarray,
    focal: float,
    centre: np.ndarray,
) -> np.ndarray:
    """(N,) how card-like each candidate region's outline is, in [0, 1]: the quad's aspect
    ratio (perspective undone), the region's fill of it and its corners. ``size`` (h, w) of the
    working image; ``quads`` (N, 4, 2), ``fill`` (N,) and ``cut`` (N,) bool as
    :func:`vision.detect.candidates.find_candidates` gives them."""
    # A region clipped by the frame edge counts only if it still has a card's shape (the card
    # is cut by a few pixels at most); it is reported as partial.
    aspect = aspect_score(quads, focal, centre)
    if cut.any():
        aspect[cut] = aspect_score(quads[cut], focal, centre, strict=True)
    pre = aspect * ramp(fill, 0.8, 0.92) * corner_score(quads)
    # A card cut by the frame is cut by a few pixels along one or two edges; a region running
    # out of three or four of them is the surface (a white sill seen in a close-up: omega697
    # card_2_purple_solid_diamond), whatever its shape.
    h, w = size
    x, y = quads[..., 0], quads[..., 1]
    sides = (
        (x.min(axis=1) <= 2).astype(int)
        + (y.min(axis=1) <= 2)
        + (x.max(axis=1) >= w - 3)
        + (y.max(axis=1) >= h - 3)
    )
    return np.where(cut & (sides >= 3), 0.0, pre)


def probe_scores(
    small: np.ndarray,
    quads: np.ndarray,
    *,
    focal: float | None = None,
    centre: np.ndarray | None = None,
    faint: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Paper and content scores (N,) in [0, 1] from a tiny upright warp of each quad.

    With ``focal`` (px) and ``centre`` (principal point), a quad's long side is judged with
    the perspective undone where that is clear (a card far up a tilted table can look square
    or even wider than tall; warped the wrong way round, its stacked symbols stand upright as
    in two cards side by side).

    Paper: the border band's median colour is bright and near neutral. Content: some ink inside
    (symbols), little ink in the border band. Ink is a pixel darker than the paper around it,
    more colourful than the paper, or very dark (where glare clips part of the band, than the
    band's unlit paper too: :func:`_glare_paper`). Also returns (N,) bool "upright" (the ink
    stands along the quad's long side, as in two cards side by side) and (N,) the paper's
    grey level (its darkest channel), for a comparison with the other cards of the scene.
    With ``faint``, fainter strokes inside count as ink on clean paper (see
    :data:`_STROKE_STEP_CLEAN`): only for quads the scene's other cards vouch for.
    """
    n = len(quads)
    if n == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0)
    ratio = _probe_ratio(quads, focal, centre)
    quads, ink, lo, sat, _ = _probe_ink(small, quads, ratio, chroma=False, faint=faint)
    paper = ramp(lo, 25, 60) * ramp(-sat, -0.6, -0.4)
    band_ink = ink[:, _BAND].mean(axis=1)
    inner_ink = ink[:, _INNER].mean(axis=1)
    content = ramp(inner_ink, 0.003, 0.012) * ramp(-inner_ink, -0.9, -0.75)
    content = content * ramp(-band_ink, -0.3, -0.12)
    # Only a quad shaped like two cards side by side (long/short ~1.28 head-on) needs this.
    pairish = np.maximum(ratio, 1e-9)
    pairish = np.maximum(pairish, 1.0 / pairish) < 1.45
    crosswise = np.ones(n)
    for i in np.flatnonzero(pairish & (content > 0)):
        crosswise[i] = _crosswise_share(ink[i] & _INNER)
    # SET symbols lie across the card (wider than tall in an upright card): a quad whose ink
    # stands upright is two cards side by side, or a card seen sideways within something.
    upright = crosswise < 0.4
    content = content * np.where(upright, 0.3, 1.0)
    return paper, content, upright, lo


def _probe_ratio(quads: np.ndarray, focal: float | None, centre: np.ndarray | None) -> np.ndarray:
    """(N,) width/height of each quad for the probe's orientation: opposite sides averaged,
    or the perspective-corrected ratio where that is at least 1.25 away from square."""
    ratio = rect_ratio(quads, None, np.zeros(2))
    if focal is None or centre is None or len(quads) == 0:
        return ratio
    corrected = rect_ratio(quads, focal, centre)
    sure = np.abs(np.log(np.maximum(corrected, 1e-9))) > np.log(1.25)
    return np.where(sure, corrected, ratio)


def _probe_ink(
    small: np.ndarray,
    quads: np.ndarray,
    ratio: np.ndarray | None = None,
    *,
    chroma: bool = True,
    faint: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each quad (N >= 1) warped upright (short side first, by ``ratio``, width/height, when
    given) to a tiny probe: the quads in that order, (N, H, W) bool ink, (N,) the paper's
    darkest channel, (N,) its saturation and (N, H, W) float64 each pixel's saturation above
    the paper's (empty, shape (0,), unless ``chroma``). With ``faint``, strokes inside the
    symbols' area (``_INNER``) are judged against the paper's noise (:data:`_NOISE_STEPS`)."""
    n = len(quads)
    if ratio is None:
        ratio = rect_ratio(quads, None, np.zeros(2))
    wide = ratio > 1.0
    quads = np.where(wide[:, None, None], quads[:, NEXT], quads)  # short edge first
    probes = np.empty((n, _PROBE_H, _PROBE_W, 3), np.uint8)
    for i, quad in enumerate(quads.astype(np.float32)):
        hom = cv2.getPerspectiveTransform(quad, _PROBE_TARGET)
        cv2.warpPerspective(small, hom, (_PROBE_W, _PROBE_H), probes[i], flags=cv2.INTER_LINEAR)
    # Channel planes (3, N, H, W), contiguous: NumPy's strided and mixed-type paths cost several
    # times as much on these small arrays.
    planes = np.ascontiguousarray(probes.transpose(3, 0, 1, 2))
    blue, green, red = planes
    lum8 = np.minimum(np.minimum(blue, green), red)
    # A closing fills thin dark strokes (outlines, stripes) but keeps the step of a shadow
    # edge, so ``rel`` below is low on strokes only; solid symbols are caught by colour.
    local = _close_each(lum8)
    band = planes.reshape(3 * n, -1)[:, _BAND_INDEX]
    ref = hist_median(_row_histograms(band)).reshape(3, n).T  # (n, 3), as np.median
    lo, hi = ref.min(axis=1), ref.max(axis=1)
    sat = (hi - lo) / np.maximum(hi, 1.0)
    lum = lum8.astype(np.float32)
    rel = lum / np.maximum(local.astype(np.float32), 1.0)
    # Colour judged against the paper's own (each channel over the paper's): a shadow on the
    # paper keeps roughly the paper's tint, however warm the light; a printed symbol does not.
    paper = np.maximum(ref, 1.0).T[:, :, None, None]  # (3, n, 1, 1) float64
    b, g, r = blue / paper[0], green / paper[1], red / paper[2]
    b_top, b_low = np.maximum(np.maximum(b, g), r), np.minimum(np.minimum(b, g), r)
    tinted = (b_top - b_low) / np.maximum(b_top, 1e-3)
    paper_ink = ((tinted > _INK_TINT) & (b_low < _INK_ABSORBS)) | (lum < 0.45 * lo[:, None, None])
    _glare_paper(planes, band, lo, paper_ink)
    ink = (rel < 1.0 - _STROKE_STEP) | paper_ink
    if faint:
        # Inside the symbols' area, a fainter stroke on clean paper is ink too.
        band_rel = rel.reshape(n, -1)[:, _BAND_INDEX]
        centred = np.abs(band_rel - np.median(band_rel, axis=1)[:, None])
        noise = 1.4826 * np.median(centred, axis=1)
        step = np.clip(_NOISE_STEPS * noise, _STROKE_STEP_CLEAN, _STROKE_STEP)
        ink |= (rel < (1.0 - step)[:, None, None]) & _INNER
    if not chroma:
        return quads, ink, lo, sat, np.zeros(0)
    top = np.maximum(np.maximum(blue, green), red).astype(np.float32)
    saturation = (top - lum) / np.maximum(top, 1.0)
    return quads, ink, lo, sat, saturation - sat[:, None, None]


def _glare_paper(
    planes: np.ndarray, band: np.ndarray, lo: np.ndarray, paper_ink: np.ndarray
) -> None:
    """Where glare clips part of a quad's border band, also accept the unlit paper as paper:
    ``paper_ink`` (N, H, W) bool, ink against the band's median colour, is cleared in place
    where a pixel is no ink against the colour of the band's unlit part either.

    Glare (a lamp's reflection on glossy card stock) adds white light: the band's median is
    then the glare's white, and the rest of the card's paper, lit only by the room's light,
    is both darker and more tinted (warm) than it, so it would count as ink. Only a band with
    at least :data:`_GLARE_SHARE` of its pixels clipped (darkest channel at least
    :data:`_GLARE_LEVEL`) and at least :data:`_UNLIT_SHARE` clearly darker than the glare
    (under :data:`_UNLIT_LEVEL` of its median level) is judged so.
    """
    n = len(lo)
    band_lum = band.reshape(3, n, -1).min(axis=0)  # (n, P) the band's darkest channel
    glared = np.flatnonzero((band_lum >= _GLARE_LEVEL).mean(axis=1) >= _GLARE_SHARE)
    for i in glared:
        unlit = band_lum[i] < _UNLIT_LEVEL * lo[i]
        if unlit.mean() < _UNLIT_SHARE:
            continue
        ref = np.median(band.reshape(3, n, -1)[:, i, unlit], axis=1)  # (3,) B, G, R
        paper = np.maximum(ref, 1.0)[:, None, None]
        b, g, r = planes[:, i] / paper
        top, low = np.maximum(np.maximum(b, g), r), np.minimum(np.minimum(b, g), r)
        tinted = (top - low) / np.maximum(top, 1e-3)
        lum = planes[:, i].min(axis=0)
        paper_ink[i] &= (tinted > _INK_TINT) | (lum < 0.45 * ref.min())


def _close_each(images: np.ndarray) -> np.ndarray:
    """Each (H, W) uint8 image of a stack (N, H, W) closed by a 7 x 7 square, as one
    ``cv2.morphologyEx(image, cv2.MORPH_CLOSE, KERNEL7)`` per image does, in one call pair.

    The images are stacked with 3-row gaps: zeros for the dilation (as the dilation's own border
    value), then 255 for the erosion (the erosion's), so no image reaches another.
    """
    n, h, w = images.shape
    gap = KERNEL7.shape[0] // 2
    stack = np.zeros((n, h + gap, w), np.uint8)
    stack[:, :h] = images
    grown = cv2.dilate(stack.reshape(-1, w), KERNEL7).reshape(n, h + gap, w)
    grown[:, h:] = 255
    return cv2.erode(grown.reshape(-1, w), KERNEL7).reshape(n, h + gap, w)[:, :h]


def _row_histograms(values: np.ndarray) -> np.ndarray:
    """(M, 256) int64 histogram of each row of a (M, P) uint8 array."""
    m = len(values)
    offset = (np.arange(m) * 256)[:, None]
    return np.bincount((values + offset).ravel(), minlength=m * 256).reshape(m, 256)


def ink_centres(small: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 2) the centre of the ink's bounding box inside each quad (its inner area), in
    working pixels, and (N,) bool: the quad holds some ink."""
    centres = quads.mean(axis=1) if len(quads) else np.zeros((0, 2))
    has = np.zeros(len(quads), dtype=bool)
    if len(quads) == 0:
        return centres, has
    upright, ink, _, _, chroma = _probe_ink(small, quads)
    ink &= _INNER | _BAND  # ink reaching into the border band moves the box off centre
    ink &= chroma > _SYMBOL_CHROMA  # not a shadow edge along a side
    # The ink's bounding box in each probe: first and last rows and columns holding ink.
    rows, cols = ink.any(axis=2), ink.any(axis=1)  # (N, H), (N, W)
    y0, y1 = rows.argmax(axis=1), _PROBE_H - 1 - rows[:, ::-1].argmax(axis=1)
    x0, x1 = cols.argmax(axis=1), _PROBE_W - 1 - cols[:, ::-1].argmax(axis=1)
    for i in np.flatnonzero(np.count_nonzero(ink, axis=(1, 2)) >= 8):
        point = np.array([[[(x0[i] + x1[i]) / 2, (y0[i] + y1[i]) / 2]]], np.float32)
        back = cv2.getPerspectiveTransform(_PROBE_TARGET, upright[i].astype(np.float32))
        centres[i] = cv2.perspectiveTransform(point, back)[0, 0]
        has[i] = True
    return centres, has


def ink_offset(small: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far the ink (symbols) inside each quad sits from its centre, and how coloured it is.

    Returns:
        (N,) the larger of the offsets of the ink's bounding box centre across and along the
        card, as a fraction of the card's side (1.0 without ink): SET symbols are printed
        centred, so a quad shifted off a card has its ink off centre; and (N,) the ink's median
        saturation above the paper's (SET symbols are red, green or purple; stains, wood
        grain and stone veins are mostly grey).
    """
    out, colour = np.ones(len(quads)), np.zeros(len(quads))
    if len(quads) == 0:
        return out, colour
    _, ink, _, _, chroma = _probe_ink(small, quads)
    ink &= _INNER | _BAND  # ink reaching into the border band moves the box off centre
    for i in range(len(quads)):
        ys, xs = np.nonzero(ink[i] & (chroma[i] > _SYMBOL_CHROMA))
        if len(xs) < 8:
            continue
        colour[i] = float(np.median(chroma[i][ink[i]]))
        cx = (np.percentile(xs, 2) + np.percentile(xs, 98)) / 2 / (_PROBE_W - 1)
        cy = (np.percentile(ys, 2) + np.percentile(ys, 98)) / 2 / (_PROBE_H - 1)
        out[i] = max(abs(cx - 0.5), abs(cy - 0.5))
    return out, colour


def ink_shift(small: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """:func:`ink_offset`'s offset alone, for many quads at once: (N,) the larger offset of the
    coloured ink's extent (its 2nd to 98th percentile, interpolated as ``np.percentile`` does,
    from the probe's column and row counts) from the card's centre across and along it, as a
    fraction of the side; 1.0 with under 8 ink pixels. The same figure as
    :func:`ink_offset`'s (to rounding) at a fraction of its cost (no per-quad percentiles)."""
    out = np.ones(len(quads))
    if len(quads) == 0:
        return out
    _, ink, _, _, chroma = _probe_ink(small, quads)
    ink &= (_INNER | _BAND) & (chroma > _SYMBOL_CHROMA)
    total = ink.sum(axis=(1, 2))[:, None]
    shifts = []
    for counts, size in ((ink.sum(axis=1), _PROBE_W), (ink.sum(axis=2), _PROBE_H)):
        cum = np.cumsum(counts, axis=1)  # (N, size)
        ends = []
        for share in (0.02, 0.98):
            rank = share * (total - 1)  # (N, 1) fractional rank of the percentile
            below = np.floor(rank)
            first = (cum > below).argmax(axis=1)  # the order statistics either side of it
            second = (cum > below + 1).argmax(axis=1)
            frac = (rank - below)[:, 0]
            ends.append(first + frac * (second - first))
        shifts.append(np.abs((ends[0] + ends[1]) / 2 / (size - 1) - 0.5))
    return np.where(total[:, 0] >= 8, np.maximum(*shifts), out)


def ink_across(small: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N,) share of each quad's symbol ink lying in blobs wider than tall when the quad is
    warped upright with its edge 0-1 on top (1 without ink).

    SET symbols lie across the card: high (near 1) when edge 0-1 is a short edge of the card,
    low when it is a long one. For a card seen so steeply that its outline alone cannot say
    which sides are the long ones (a near-square quad).
    """
    if len(quads) == 0:
        return np.zeros(0)
    _, ink, _, _, _ = _probe_ink(small, quads, np.full(len(quads), 0.5), chroma=False)
    return np.array([_crosswise_share(one & _INNER) for one in ink])


def _crosswise_share(ink: np.ndarray) -> float:
    """Share of the ink (in blobs of >= 8 px) lying in blobs wider than tall; 1 without ink."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    stats = stats[1:]
    stats = stats[stats[:, cv2.CC_STAT_AREA] >= 8]
    total = stats[:, cv2.CC_STAT_AREA].sum()
    if total == 0:
        return 1.0
    tall = stats[:, cv2.CC_STAT_HEIGHT] >= 1.3 * stats[:, cv2.CC_STAT_WIDTH]
    return float(1.0 - stats[tall, cv2.CC_STAT_AREA].sum() / total)


def white_surround(small: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N,) bool: the surface just outside each quad is as bright as the paper just inside it
    (the quad may be a white frame around a card, not the card itself)."""
    if len(quads) == 0:
        return np.zeros(0, dtype=bool)
    centres = quads.mean(axis=1, keepdims=True)
    t = np.linspace(0.1, 0.9, 8)
    a, b = quads, quads[:, NEXT]
    edge = a[:, :, None, :] + t[None, None, :, None] * (b - a)[:, :, None, :]  # (N,4,8,2)
    edge = edge.reshape(len(quads), -1, 2)
    outside = centres + 1.1 * (edge - centres)
    inside = centres + 0.92 * (edge - centres)
    pts = np.stack([outside, inside], axis=1).astype(np.float32)  # (N, 2, 32, 2)
    flat = pts.reshape(-1, 32, 2)
    vals = cv2.remap(small, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR)  # (2N, 32, 3)
    lum = np.minimum(np.minimum(vals[..., 0], vals[..., 1]), vals[..., 2])
    # Medians of the 32 darkest channels outside and inside (float32, as np.median of them).
    level = hist_median(_row_histograms(lum)).astype(np.float32).reshape(len(quads), 2)
    return level[:, 0] >= 0.85 * level[:, 1]


def dim_patches(small: np.ndarray, quads: np.ndarray, level: np.ndarray) -> np.ndarray:
    """(N,) bool: each found card is a patch of a surface darker than the scene's cards.

    Paper is the brightest surface around a card: a quad whose "paper" is far darker than the
    scene's other cards (under :data:`_DIM_SHARE` of their median level), whose surroundings
    are as bright as it (:func:`white_surround`: no edge of its own, a patch of a uniform
    floor or cloth) and which holds nothing coloured like a symbol (grain, streaks) is not a
    card. A card in a shadow on a white desk keeps its coloured symbols.

    Args:
        small: the working image, BGR uint8 (H, W, 3).
        quads: (N, 4, 2) clockwise quads of the found cards (working pixels).
        level: (N,) their paper's grey level (darkest channel, from :func:`probe_scores`).
    """
    out = np.zeros(len(quads), dtype=bool)
    if len(quads) < 2:
        return out
    dim = np.flatnonzero(level < _DIM_SHARE * float(np.median(level)))
    if len(dim) == 0:
        return out
    dim = dim[white_surround(small, quads[dim])]
    if len(dim):
        offset, _ = ink_offset(small, quads[dim])
        out[dim[offset >= 1.0]] = True  # no coloured ink at all
    return out
