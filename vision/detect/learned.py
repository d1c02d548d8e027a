"""A learned card finder: a small segmentation network (ONNX, onnxruntime) labels each pixel of a
shrunk frame as table, card or card border; each connected piece of card is one card (pieces
of cards joined without a border are parted first), and its quad, pushed out by the border's
known width and then set on the ridge of the border probability along each side, is the card.

Why a border class: cards that touch or overlap merge into one blob in a plain card / not-card
mask; a band of fixed width along every card's outline (painted over the cards beneath, later
cards on top) separates them, as the boundary class of U-Net (Ronneberger et al. 2015) and of
nucleus segmenters does. An edge is a local feature, so the band is placed to a pixel; a first
version marked a core shrunk to 70% of the card instead, an invisible line the network placed
20-60% off in area after 800 steps.

The network and its training live in ``scripts/train_detector.py``; the contract both sides
share (the labels a frame's cards make, the input size, the border width) is here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "BORDER",
    "BORDER_WIDTH",
    "CARD",
    "CardSegmenter",
    "LearnedQuads",
    "card_labels",
    "quads_from_probs",
]

#: Label values: 0 table (anything not a card), 1 card, 2 card border.
CARD: Final = 1
BORDER: Final = 2
#: The border band's width in output pixels, centred on the card's outline: half of it lies
#: inside the card, so a card's piece of :data:`CARD` is the card less this / 2 a side.
BORDER_WIDTH: Final = 3
#: The network's input: the frame shrunk (never enlarged) to this long side, padded to a
#: multiple of :data:`INPUT_MULTIPLE`; its output is at half that resolution.
INPUT_LONG_SIDE: Final = 512
INPUT_MULTIPLE: Final = 32
OUTPUT_STRIDE: Final = 2
#: Pieces of card under this many output pixels are specks, not cards (a card 8 x 12 px at
#: the output's scale, 16 px wide in a 512 px frame, leaves a piece of 5 x 9 px).
MIN_PIECE_PIXELS: Final = 30
#: A pixel is card only where the border probability is under this: a faint seam between
#: cards (a tray, touching cards) still parts them. Chosen on the leave-source-out folds of
#: the annotated photos: 1.0 (off) 87.0% of cards found at IoU 0.85, 0.3 87.8%, 0.15 88.9%.
BORDER_BELOW: Final = 0.15
#: A piece filling less of its convex hull than this is cards joined where the network drew no
#: border between them (a corner over another card, a seam lost to blur): it is parted by a
#: watershed of its distance to the piece's edge, from the cores where that distance exceeds
#: :data:`SEED_DEPTH` of its largest. A lone card's piece fills its hull but for the rounded
#: corners and a pixel of fit.
MIN_SOLIDITY: Final = 0.85
SEED_DEPTH: Final = 0.5
#: Each part of a split piece holds at least this share of it (else the piece stays whole: a
#: card notched by a finger or a symbol is not two cards).
MIN_PART_SHARE: Final = 0.2
#: Each side of a card is set on the ridge of the border probability (:func:`sides_on_ridge`):
#: profiles per side, their reach either way (output px), the least peak that is a ridge, and
#: the share of profiles that must find one.
RIDGE_SAMPLES: Final = 12
RIDGE_REACH: Final = 3
RIDGE_LEAST: Final = 0.3
RIDGE_QUORUM: Final = 0.5


def card_labels(
    quads: npt.ArrayLike, shape: tuple[int, int], scale: float = 1.0
) -> npt.NDArray[np.uint8]:
    """The label image the network is trained to give: cards in the order given, later ones on
    top (each paints its quad as card, then its outline as border).

    Args:
        quads: (N, 4, 2) corners in pixels of the image the labels are for, before ``scale``.
        shape: (H, W) of the label image.
        scale: multiply the corners by this first (0.5 for labels at half resolution).

    Returns:
        (H, W) uint8 of 0 (table), :data:`CARD`, :data:`BORDER`.
    """
    labels = np.zeros(shape, np.uint8)
    # Pixel (x, y) is the point (x, y): a pixel's centre (OpenCV's convention, kept by scaling
    # about the half-pixel corner of the image).
    quads = (np.asarray(quads, np.float64).reshape(-1, 4, 2) + 0.5) * scale - 0.5
    shift = 4  # cv2.fillPoly's fixed point: sub-pixel corners
    for quad in quads:
        pts = np.round(quad * (1 << shift)).astype(np.int32)
        cv2.fillPoly(labels, [pts], CARD, lineType=cv2.LINE_8, shift=shift)
        cv2.polylines(labels, [pts], True, BORDER, BORDER_WIDTH, cv2.LINE_8, shift=shift)
    return labels


@dataclass(frozen=True)
class LearnedQuads:
    """Cards the network found in one frame.

    Attributes:
        corners: (N, 4, 2) float32 frame pixels (x, y), in the order the quad fit gives
            (:func:`vision.detect.learned_find.find_cards_learned` puts them in portrait order).
        scores: (N,) float32 in [0, 1]: the mean card probability over the card's piece.
    """

    corners: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]


def quads_from_probs(
    probs: npt.NDArray[np.float32],
    to_frame: float,
    *,
    threshold: float = 0.5,
    border_below: float = BORDER_BELOW,
) -> LearnedQuads:
    """Cards from the network's per-pixel probabilities.

    Args:
        probs: (3, h, w) float32 softmax probabilities (table, card, border) at the output's
            resolution.
        to_frame: frame pixels per output pixel.
        threshold: a pixel is card when its card probability exceeds this...
        border_below: ...and its border probability is under this (a faint seam between
            cards on a tray still parts them).

    Returns:
        :class:`LearnedQuads` in frame pixels.
    """
    core = ((probs[CARD] > threshold) & (probs[BORDER] < border_below)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(core, connectivity=4)
    quads: list[npt.NDArray[np.float64]] = []
    scores: list[float] = []
    for i in range(1, n):
        x, y, w, h, area = stats[i]
        if area < MIN_PIECE_PIXELS:
            continue
        for mask in split_piece((labels[y : y + h, x : x + w] == i).astype(np.uint8)):
            fit = _piece_quad(mask)
            if fit is None:
                continue
            fit = sides_on_ridge(fit + [x, y], probs[BORDER])
            quads.append((fit + 0.5) * to_frame - 0.5)
            scores.append(float(probs[CARD][y : y + h, x : x + w][mask > 0].mean()))
    if not quads:
        return LearnedQuads(np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32))
    return LearnedQuads(
        np.asarray(quads, np.float32), np.clip(np.asarray(scores, np.float32), 0.0, 1.0)
    )


def split_piece(mask: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.uint8]]:
    """A piece of card (uint8 0/1 mask) as the cards it holds: itself when it fills its convex
    hull (:data:`MIN_SOLIDITY`), else the parts a watershed of its distance transform gives
    from its separate deep cores (:data:`SEED_DEPTH`), if each holds :data:`MIN_PART_SHARE` of
    it."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    hull_area = cv2.contourArea(cv2.convexHull(np.vstack(contours)))
    if hull_area <= 0 or mask.sum() >= MIN_SOLIDITY * hull_area:
        return [mask]
    padded = cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    dist = cv2.distanceTransform(padded, cv2.DIST_L2, 3)
    seeds = (dist > SEED_DEPTH * dist.max()).astype(np.uint8)
    k, markers = cv2.connectedComponents(seeds, connectivity=8)
    if k <= 2:  # one core: one card (or a shape no split explains)
        return [mask]
    markers[padded == 0] = k  # the outside, its own basin
    relief = cv2.cvtColor((255 * (1 - dist / dist.max())).astype(np.uint8), cv2.COLOR_GRAY2BGR)
    cv2.watershed(relief, markers)
    markers = markers[1:-1, 1:-1]
    parts = [((markers == j) & (mask > 0)).astype(np.uint8) for j in range(1, k)]
    if min(int(p.sum()) for p in parts) < max(MIN_PART_SHARE * mask.sum(), MIN_PIECE_PIXELS):
        return [mask]
    return parts


def _piece_quad(mask: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64] | None:
    """The card quad of one piece, in the piece mask's pixels: a four-sided fit of its convex
    hull pushed out to the card's outline; None where no quad fits."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    if len(hull) < 4:
        return None
    fitted = cv2.approxPolyN(hull, 4, epsilon_percentage=-1.0, ensure_convex=True)
    quad = fitted.reshape(-1, 2).astype(np.float64)
    if len(quad) != 4:
        return None
    # The hull runs through the centres of the piece's outer pixels, half a pixel inside its
    # outline, which lies half a border inside the card's.
    return _offset_sides(quad, 0.5 + BORDER_WIDTH / 2)


def sides_on_ridge(
    quad: npt.NDArray[np.float64], border: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """``quad`` (4, 2, output px) with each side moved onto the ridge of the border probability
    near it: the card's outline, wherever the network drew the band and however wide.

    Along each side, :data:`RIDGE_SAMPLES` profiles across it (the middle 70%, clear of the
    rounded corners) reach :data:`RIDGE_REACH` px either way; a profile whose peak is
    P(border) of at least :data:`RIDGE_LEAST`, inside the profile, has its ridge at the centre
    of its upper half round the peak (the middle of a flat band, sub-pixel on a soft one). A
    side with :data:`RIDGE_QUORUM` of its profiles on a ridge gets the least-squares line
    through them; the corners are where the sides meet. A side without a ridge stays; ``quad``
    is kept whole where two sides are parallel or a corner would move over
    2 x :data:`RIDGE_REACH`.
    """
    pts = np.asarray(quad, np.float64)
    d0, d1 = pts[1] - pts[0], pts[2] - pts[1]
    sign = 1.0 if d0[0] * d1[1] - d0[1] * d1[0] >= 0 else -1.0  # outward = sign * (dy, -dx)
    offsets = np.linspace(-RIDGE_REACH, RIDGE_REACH, 4 * RIDGE_REACH + 1)
    lines = []
    for i in range(4):
        a, b = pts[i], pts[(i + 1) % 4]
        along = b - a
        length = float(np.hypot(*along))
        if length < 1e-6:
            return pts
        normal = sign * np.array([along[1], -along[0]]) / length
        t = np.linspace(0.15, 0.85, RIDGE_SAMPLES)
        base = a + t[:, None] * along  # (S, 2)
        grid = base[:, None, :] + offsets[None, :, None] * normal  # (S, K, 2)
        gx, gy = grid[..., 0].astype(np.float32), grid[..., 1].astype(np.float32)
        prof = cv2.remap(border, gx, gy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=0.0)  # fmt: skip
        top = prof.max(axis=1, keepdims=True)
        k = prof.argmax(axis=1)
        ok = (top[:, 0] >= RIDGE_LEAST) & (k > 0) & (k < len(offsets) - 1)
        if ok.sum() < RIDGE_QUORUM * RIDGE_SAMPLES:
            lines.append((a, along))
            continue
        weight = np.clip(prof - 0.5 * top, 0.0, None)
        run = np.zeros_like(weight, dtype=bool)
        run[np.arange(len(k)), k] = True
        for _ in range(len(offsets)):  # grow each row's run while the weight stays positive
            grown = run | np.roll(run, 1, axis=1) | np.roll(run, -1, axis=1)
            grown &= weight > 0
            if (grown == run).all():
                break
            run = grown
        weight = np.where(run, weight, 0.0)
        at = (weight * offsets).sum(axis=1) / np.maximum(weight.sum(axis=1), 1e-9)
        rows = np.flatnonzero(ok)
        peaks = base[rows] + at[rows, None] * normal
        centre = peaks.mean(axis=0)
        _, _, vt = np.linalg.svd(peaks - centre)
        direction = vt[0] if vt[0] @ along >= 0 else -vt[0]
        lines.append((centre, direction))
    out = _corners(np.array([p for p, _ in lines]), np.array([d for _, d in lines]))
    if out is None or np.abs(out - pts).max() > 2 * RIDGE_REACH:
        return pts
    return out


def _corners(
    points: npt.NDArray[np.float64], directions: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64] | None:
    """(4, 2) corners of the quad whose side i is the line through ``points[i]`` along
    ``directions[i]``: corner i is where side i - 1 meets side i; None if two neighbouring
    sides are parallel."""
    out = np.empty((4, 2))
    for i in range(4):
        p, r = points[i - 1], directions[i - 1]
        q, s = points[i], directions[i]
        denom = r[0] * s[1] - r[1] * s[0]
        if abs(denom) < 1e-9:
            return None
        out[i] = p + ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / denom * r
    return out


def _offset_sides(quad: npt.NDArray[np.float64], by: float) -> npt.NDArray[np.float64] | None:
    """The convex quad with each side moved ``by`` pixels outwards (its corners where the
    moved sides meet); None if two neighbouring sides are parallel."""
    d0, d1 = quad[1] - quad[0], quad[2] - quad[1]
    if d0[0] * d1[1] - d0[1] * d1[0] < 0:  # clockwise on screen (y down) from here on
        quad = quad[::-1]
    starts, ends = quad, np.roll(quad, -1, axis=0)
    direction = ends - starts
    normal = np.stack([direction[:, 1], -direction[:, 0]], axis=1)  # outward
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-9)
    return _corners(starts + by * normal, direction)


def network_input(
    frame: npt.NDArray[np.uint8], long_side: int = INPUT_LONG_SIDE
) -> tuple[npt.NDArray[np.float32], float]:
    """The frame as the network takes it.

    Args:
        frame: (H, W, 3) uint8 BGR.
        long_side: shrink to this long side (never enlarged).

    Returns:
        ((1, 3, h, w) float32 RGB in [0, 1], padded with zeros to multiples of
        :data:`INPUT_MULTIPLE`; the input pixels per frame pixel).
    """
    h, w = frame.shape[:2]
    scale = min(1.0, long_side / max(h, w))
    small = frame
    if scale < 1.0:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        # An integer-factor area shrink first (OpenCV's fast path), then the rest: the same
        # box filtering as one INTER_AREA resize, 9 instead of 14 ms at 1080p, 27 instead of
        # 66 ms at 12 MP (one thread).
        k = int(1.0 / scale)
        if k > 1:
            small = cv2.resize(
                frame, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA
            )
        small = cv2.resize(small, size, interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    ph = -(-sh // INPUT_MULTIPLE) * INPUT_MULTIPLE
    pw = -(-sw // INPUT_MULTIPLE) * INPUT_MULTIPLE
    x = np.zeros((1, 3, ph, pw), np.float32)
    x[0, :, :sh, :sw] = small[:, :, ::-1].transpose(2, 0, 1) / np.float32(255.0)
    return x, sw / w


class CardSegmenter:
    """The ONNX card segmenter (``models/card_detector.onnx`` and its JSON), run with
    onnxruntime on the CPU, one thread unless told otherwise.

    Args:
        path: the ``.onnx`` file (its ``.json`` beside it).
        threads: onnxruntime intra-op threads.

    Raises:
        FileNotFoundError: if the model or its JSON is missing.
        ValueError: if the JSON's checksum does not match the model.
    """

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        import hashlib

        import onnxruntime as ort

        path = Path(path)
        meta_path = path.with_suffix(".json")
        if not path.is_file() or not meta_path.is_file():
            raise FileNotFoundError(f"{path}: card detector model or its .json is missing")
        self.meta: dict[str, Any] = json.loads(meta_path.read_text())
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if self.meta.get("sha256") not in (None, digest):
            raise ValueError(f"{path}: checksum does not match {meta_path.name}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.long_side = int(self.meta.get("input_long_side", INPUT_LONG_SIDE))
        self.threshold = float(self.meta.get("card_threshold", 0.5))
        self.border_below = float(self.meta.get("border_below", BORDER_BELOW))

    def probabilities(self, frame: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float32], float]:
        """(3, h, w) softmax probabilities of the frame, and frame pixels per output pixel."""
        x, scale = network_input(frame, self.long_side)
        (logits,) = self._session.run(None, {"image": x})
        logits = logits[0]
        stride = x.shape[2] // logits.shape[1]
        sh = -(-round(frame.shape[0] * scale) // stride)
        sw = -(-round(frame.shape[1] * scale) // stride)
        logits = logits[:, :sh, :sw]
        e = np.exp(logits - logits.max(axis=0, keepdims=True))
        return (e / e.sum(axis=0, keepdims=True)).astype(np.float32), stride / scale

    def find(self, frame: npt.NDArray[np.uint8]) -> LearnedQuads:
        """The cards in a (H, W, 3) uint8 BGR frame, in frame pixels."""
        probs, to_frame = self.probabilities(frame)
        return quads_from_probs(
            probs, to_frame, threshold=self.threshold, border_below=self.border_below
        )
