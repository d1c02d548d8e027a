"""Read count, colour, shape and fill from flat card crops with a small ONNX model.

The model (``models/card_classifier.onnx``, located by :mod:`vision.models`) takes the crops
that :func:`vision.warp.warp_cards` makes: (N, 250, 160, 3) uint8 BGR, portrait, paper
white-balanced to ~235. It returns four heads of three logits each, in the enum order of
:mod:`vision.cards` (count 1,2,3; colour red, green, purple; shape oval, diamond, squiggle;
fill solid, striped, open). The preprocessing (downscale, BGR->RGB, normalisation) is read
from the model's JSON so the runtime and the training script cannot disagree.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, runtime_checkable

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import ATTRIBUTES, Card
from vision.errors import SetVisionError
from vision.warp import BALANCE_VERSION, CROP_HEIGHT, CROP_WIDTH, paper_mask, warp_cards

__all__ = [
    "HEADS",
    "CardClassifier",
    "CardProbabilities",
    "Classifier",
    "SHAPE_SECOND_LOOK",
    "CROP_VERSION",
    "CROP_VERSIONS",
    "crop_single_card",
    "grey_view",
    "normalise_ink_chroma",
    "preprocess",
    "to_cards",
]

#: Output heads in order, each with its three labels in the enum order of vision.cards.
HEADS: Final[tuple[str, ...]] = tuple(name for name, _ in ATTRIBUTES)
_LABELS: Final[dict[str, list[str]]] = {
    name: [str(v.value) for v in kind] for name, kind in ATTRIBUTES
}


def _log_softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Row-wise log-softmax of (N, K) logits, float32."""
    z = logits - logits.max(axis=1, keepdims=True)
    return (z - np.log(np.exp(z).sum(axis=1, keepdims=True))).astype(np.float32)


def _softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


@dataclass(frozen=True)
class CardProbabilities:
    """Per-attribute probabilities for N crops (each row sums to 1).

    Attributes:
        count, colour, shape, fill: (N, 3) float32 probabilities in the enum order of
            :mod:`vision.cards` (e.g. colour columns are red, green, purple).
        logits: (N, 12) float32 raw model outputs, heads concatenated in the same order.
    """

    count: npt.NDArray[np.float32]
    colour: npt.NDArray[np.float32]
    shape: npt.NDArray[np.float32]
    fill: npt.NDArray[np.float32]
    logits: npt.NDArray[np.float32]

    def __post_init__(self) -> None:
        n = len(self.logits)
        if self.logits.shape != (n, 12):
            raise ValueError(f"logits: expected (N, 12), got {self.logits.shape}")
        for name in HEADS:
            got = getattr(self, name)
            if got.shape != (n, 3) or got.dtype != np.float32:
                raise ValueError(f"{name}: expected ({n}, 3) float32, got {got.shape} {got.dtype}")

    def __len__(self) -> int:
        return len(self.logits)

    @classmethod
    def from_logits(cls, logits: npt.NDArray[np.floating]) -> CardProbabilities:
        """Build from (N, 12) logits (heads count, colour, shape, fill; 3 each), any float dtype.

        Raises:
            ValueError: if ``logits`` is not (N, 12).
        """
        logits = np.asarray(logits, dtype=np.float32)
        if logits.ndim != 2 or logits.shape[1] != 12:
            raise ValueError(f"logits: expected (N, 12), got {logits.shape}")
        heads = {name: _softmax(logits[:, 3 * i : 3 * i + 3]) for i, name in enumerate(HEADS)}
        return cls(logits=logits, **heads)

    @classmethod
    def empty(cls) -> CardProbabilities:
        """Probabilities for no crops."""
        return cls.from_logits(np.zeros((0, 12), np.float32))

    def stacked(self) -> npt.NDArray[np.float32]:
        """(N, 4, 3) float32: the four heads stacked in the order count, colour, shape, fill."""
        return np.stack([getattr(self, name) for name in HEADS], axis=1)

    def positions(self) -> npt.NDArray[np.int64]:
        """(N, 4) int64: the most probable value position (0..2) of each attribute."""
        return self.stacked().argmax(axis=2)

    def confidence(self) -> npt.NDArray[np.float32]:
        """(N,) float32: product of the four maximum probabilities: the card's raw confidence
        (``setvision`` reports it calibrated, :func:`vision.decode.decode_table`)."""
        return self.stacked().max(axis=2).prod(axis=1).astype(np.float32)


@runtime_checkable
class Classifier(Protocol):
    """Anything that turns (N, 250, 160, 3) uint8 BGR crops into :class:`CardProbabilities`."""

    def predict(self, crops: npt.NDArray[np.uint8]) -> CardProbabilities: ...


def to_cards(probs: CardProbabilities) -> list[tuple[Card, float]]:
    """The most probable card for each crop with its confidence (see ``confidence()``)."""
    conf = probs.confidence()
    return [
        (Card.from_positions(tuple(int(p) for p in row)), float(c))
        for row, c in zip(probs.positions(), conf, strict=True)
    ]


#: Interior margin (fraction of each side) left out when measuring a crop's ink chroma: the
#: paper band and the card's edge.
_INK_MARGIN: Final = 0.1


def normalise_ink_chroma(
    small: npt.NDArray[np.uint8], target: float, max_gain: float
) -> npt.NDArray[np.uint8]:
    """Raise faint ink chroma to a common level, each crop on its own.

    A thin outline seen by a low-resolution or chroma-subsampled camera keeps its lightness but
    loses most of its chroma: kaggle-set-cards' red open outlines measure chroma ~18 (CIELAB,
    against the paper) where other cameras give ~50, the range of faint purples (measured with
    :func:`vision.colour.symbol_colours` on the shared crops). Scaling each crop's a*, b*
    deviation from its paper so that its strongest ink reaches ``target`` leaves the hue, which
    tells red from purple, and removes the chroma level, which does not. Vivid inks are left
    alone (the gain is never below 1).

    Args:
        small: (N, h, w, 3) uint8 BGR crops at the model's input size, white-balanced.
        target: chroma (CIELAB a*b* units) the 99th percentile of the interior's ink chroma is
            raised to.
        max_gain: the largest factor applied (keeps a blank or grey crop's noise from growing).

    Returns:
        New (N, h, w, 3) uint8 BGR array.

    Raises:
        ValueError: if ``small`` is not (N, h, w, 3) uint8.
    """
    if small.ndim != 4 or small.shape[3] != 3 or small.dtype != np.uint8:
        raise ValueError(f"small: expected (N, h, w, 3) uint8 BGR, got {small.shape} {small.dtype}")
    n, h, w = small.shape[:3]
    if n == 0:
        return small.copy()
    # 8-bit CIELAB (OpenCV: a* + 128, b* + 128, 1 unit steps), 3x cheaper than float. Every
    # step below works on the 256 levels of a* and b* through per-crop tables: the same
    # float32 arithmetic per level as per pixel, so the same result, at a fraction of the cost.
    lab = cv2.cvtColor(np.ascontiguousarray(small).reshape(n * h, w, 3), cv2.COLOR_BGR2LAB)
    lab = lab.reshape(n, h * w, 3)
    paper = lab[:, _paper_every_third(h, w), 1:]
    ref = np.median(paper, axis=1).astype(np.float32)  # (N, 2) paper a*, b* (+128)
    levels = np.arange(256, dtype=np.float32)
    dev = levels[None, None, :] - ref[:, :, None]  # (N, 2, 256) deviation of each level
    square = (dev * dev).reshape(n * 2, 256)  # exact: (half-)integers squared
    inner = lab.reshape(n, h, w, 3)[:, _inner_rows(h), _inner_cols(w), 1:].reshape(n, -1, 2)
    offset = (np.arange(n, dtype=np.intp) * 512)[:, None]
    sq = np.take(square, inner[:, :, 0] + offset) + np.take(square, inner[:, :, 1] + offset + 256)
    k = int(0.99 * (sq.shape[1] - 1))
    level = np.sqrt(np.partition(sq, k, axis=1)[:, k])
    gain = np.clip(target / np.maximum(level, 1e-3), 1.0, max_gain).astype(np.float32)
    todo = np.flatnonzero(gain > 1.0)
    out = np.array(small, copy=True)
    if len(todo) == 0:
        return out
    tables = np.empty((len(todo), 1, 256, 3), np.uint8)
    tables[:, 0, :, 0] = np.arange(256, dtype=np.uint8)  # L* unchanged
    scaled = dev[todo] * gain[todo, None, None] + ref[todo, :, None]
    tables[:, 0, :, 1:] = np.clip(scaled + 0.5, 0, 255).astype(np.uint8).transpose(0, 2, 1)
    raised = np.empty((len(todo), h, w, 3), np.uint8)
    for j, i in enumerate(todo):
        cv2.LUT(lab[i].reshape(h, w, 3), tables[j], dst=raised[j])
    out[todo] = cv2.cvtColor(raised.reshape(-1, w, 3), cv2.COLOR_LAB2BGR).reshape(-1, h, w, 3)
    return out


@functools.lru_cache(maxsize=8)
def _paper_every_third(height: int, width: int) -> npt.NDArray[np.intp]:
    """Flat indices of every third pixel of the paper band (plenty for its median)."""
    return np.flatnonzero(paper_mask(height, width).ravel())[::3]


def _inner_rows(height: int) -> slice:
    margin = round(_INK_MARGIN * height)
    return slice(margin, height - margin)


def _inner_cols(width: int) -> slice:
    margin = round(_INK_MARGIN * width)
    return slice(margin, width - margin)


def preprocess(
    crops: npt.NDArray[np.uint8],
    input_size: tuple[int, int],
    mean: tuple[float, float, float],
    std: tuple[float, float, float],
    rgb: bool = True,
    ink_chroma: tuple[float, float] | None = None,
) -> npt.NDArray[np.float32]:
    """Crops to the model's input tensor.

    Args:
        crops: (N, H, W, 3) uint8 BGR crops (normally 250 x 160).
        input_size: model input (height, width) in pixels; crops are shrunk with INTER_AREA.
        mean, std: per-channel normalisation on the 0..1 scale, in the model's channel order.
        rgb: convert BGR to RGB (the model's channel order).
        ink_chroma: ``(target, max_gain)`` of :func:`normalise_ink_chroma`, applied after the
            shrink, for models trained with it (their JSON's ``ink_chroma``); ``None``: none.

    Returns:
        (N, 3, height, width) float32, contiguous.

    Raises:
        ValueError: if ``crops`` is not (N, H, W, 3) uint8.
    """
    if crops.ndim != 4 or crops.shape[3] != 3 or crops.dtype != np.uint8:
        raise ValueError(f"crops: expected (N, H, W, 3) uint8 BGR, got {crops.shape} {crops.dtype}")
    height, width = input_size
    n, h, w = crops.shape[:3]
    if (h, w) == (height, width) or n == 0:
        small = crops if n else np.empty((0, height, width, 3), np.uint8)
    elif h == 2 * height and w == 2 * width:
        # One call for the whole batch (the normal 250 x 160 -> 125 x 80): an exact 2x area
        # shrink averages 2x2 blocks, which never straddle two stacked crops.
        tall = np.ascontiguousarray(crops).reshape(n * h, w, 3)
        small = cv2.resize(tall, (width, n * height), interpolation=cv2.INTER_AREA)
        small = small.reshape(n, height, width, 3)
    else:
        small = np.empty((n, height, width, 3), np.uint8)
        for i, crop in enumerate(crops):
            cv2.resize(crop, (width, height), dst=small[i], interpolation=cv2.INTER_AREA)
    if ink_chroma is not None and n:
        small = normalise_ink_chroma(small, *ink_chroma)
    scale = 1.0 / (255.0 * np.asarray(std, np.float32))
    offset = -np.asarray(mean, np.float32) / np.asarray(std, np.float32)
    # Per channel a 256-entry table of ``v * scale + offset`` (float32, the same arithmetic as
    # converting every pixel), gathered straight into the (N, 3, h, w) tensor.
    table = np.arange(256, dtype=np.float32)[None, :] * scale[:, None] + offset[:, None]
    order = (2, 1, 0) if rgb else (0, 1, 2)
    out = np.empty((n, 3, height, width), np.float32)
    for c, source in enumerate(order):
        np.take(table[c], small[..., source], out=out[:, c])
    return out


#: A crop whose shape head gives no value at least this probability (raw) is read a second
#: time in grey (:func:`grey_view`) for its shape: 0.4 to 4 % of the crops of the sources left
#: out in cross-validation.
SHAPE_SECOND_LOOK: Final = 0.9


def grey_view(crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """(N, H, W, 3) uint8 BGR crops with their colour taken out: each pixel's three channels
    set to their mean (rounded down). A symbol's shape carries no colour; a low-resolution
    colour camera's moire on striped symbols (kaggle's webcam: yellow and purple bands across
    striped ovals, read as squiggles) is all colour."""
    grey = np.asarray(crops, np.uint16).sum(axis=-1, keepdims=True) // 3
    return np.repeat(grey.astype(np.uint8), 3, axis=-1)


class CardClassifier:
    """The ONNX card classifier: one onnxruntime session, created once.

    The shape of a crop the model is unsure of (shape probability under
    :data:`SHAPE_SECOND_LOOK`) is read from the crop and from its :func:`grey_view` together:
    the shape head's output becomes the mean of the two views' log-probabilities (their
    normalised geometric mean). On the crop sources left out in cross-validation this read 4 of
    kaggle's 5 striped ovals with colour moire right (cards wrong 13 -> 9 of 1,898) and 2 more
    of omega697's 162 blurred chips wrong, at coin-toss probabilities both ways (models/README.md,
    "Shape read in grey too").

    Args:
        path: the ``.onnx`` file; ``None`` finds it with :func:`vision.models.model_path`
            (``$SETVISION_MODEL``, then the packaged model). Its checksum is verified.
        threads: onnxruntime intra-op threads (1 is fastest per core for batches of ~15 cards).
        grey_shape: read unsure shapes in grey too (False: one view, the model alone).

    Raises:
        SetVisionError: if the model or its JSON is missing, corrupt or fails to load.
    """

    def __init__(
        self, path: str | Path | None = None, *, threads: int = 1, grey_shape: bool = True
    ) -> None:
        self.grey_shape = grey_shape
        # onnxruntime's official builds keep a device id under ~/.cache/Microsoft and send usage
        # telemetry unless told not to (before the import); a user's own setting wins.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime as ort

        from vision.models import load_model_info

        self.info = load_model_info(path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(self.info.onnx_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own exception types
            raise SetVisionError(
                f"could not load the card classifier {self.info.onnx_path}: {error}"
            ) from error
        self._input = self._session.get_inputs()[0].name
        try:
            self._read_meta(self.info.meta, self._session.get_inputs()[0].shape)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            # A hand-edited or foreign JSON: say which file and field, never a traceback.
            field = f"field {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
            raise SetVisionError(
                f"{self.info.json_path}: not a valid card classifier description ({field})"
            ) from error

    def _read_meta(self, meta: dict, input_shape: list) -> None:
        """Take the input size, normalisation, ink chroma and calibration from the model JSON.

        Raises:
            SetVisionError: for a label order or an input size that does not match.
            KeyError, TypeError, ValueError, AttributeError: for a missing or malformed field.
        """
        if meta.get("labels") != _LABELS:
            raise SetVisionError(
                f"{self.info.json_path}: label order {meta.get('labels')} does not match "
                f"vision.cards {_LABELS}; the model was made for another version"
            )
        heads = meta.get("heads", list(HEADS))
        if not isinstance(heads, list) or heads != list(HEADS):
            raise SetVisionError(
                f"{self.info.json_path}: heads {heads} do not match vision.cards "
                f"{list(HEADS)}; the model was made for another version"
            )
        self._size = (int(meta["input_height"]), int(meta["input_width"]))
        fixed = tuple(input_shape[2:4]) if len(input_shape) == 4 else ()
        if all(isinstance(d, int) for d in fixed) and len(fixed) == 2 and fixed != self._size:
            raise SetVisionError(
                f"{self.info.json_path}: input size {self._size[0]}x{self._size[1]} does not "
                f"match the model's {fixed[0]}x{fixed[1]}"
            )
        self._mean = tuple(float(x) for x in meta["mean"])
        self._std = tuple(float(x) for x in meta["std"])
        if len(self._mean) != 3 or len(self._std) != 3 or min(self._std) <= 0:
            raise ValueError("mean and std: expected three numbers each, std positive")
        self._rgb = meta["channel_order"] == "RGB"
        calibration = meta.get("calibration")
        #: (4,) temperature per head (count, colour, shape, fill) for the reported confidence
        #: (:func:`vision.decode.decode_table`), fitted by ``scripts/eval_classifier.py`` on
        #: cross-validation readings; None for a model without them (raw confidence).
        self.temperatures: tuple[float, ...] | None = None
        if calibration is not None:
            if not isinstance(calibration, dict):
                raise ValueError("calibration: expected an object with 'temperatures'")
            temps = tuple(float(t) for t in calibration.get("temperatures", ()))
            if len(temps) != 4 or not all(0.0 < t < 100.0 for t in temps):
                raise SetVisionError(
                    f"{self.info.json_path}: calibration temperatures {temps} are not four "
                    "positive numbers"
                )
            self.temperatures = temps
        chroma = meta.get("ink_chroma")
        if chroma is not None and not isinstance(chroma, dict):
            raise ValueError("ink_chroma: expected an object with 'target' and 'max_gain'")
        self._ink_chroma = (
            None if chroma is None else (float(chroma["target"]), float(chroma["max_gain"]))
        )

    def input_tensor(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """The model's input for ``crops`` as this model's JSON describes it (size, channel
        order, normalisation, ink chroma): (N, 3, H, W) float32. What :meth:`predict` feeds
        onnxruntime; crops as in :meth:`predict`."""
        return preprocess(
            crops,
            self._size,
            self._mean,
            self._std,
            self._rgb,
            self._ink_chroma,  # type: ignore[arg-type]
        )

    def predict(self, crops: npt.NDArray[np.uint8]) -> CardProbabilities:
        """Probabilities for each crop.

        Args:
            crops: (N, 250, 160, 3) uint8 BGR crops from :func:`vision.warp.warp_cards`.

        Returns:
            :class:`CardProbabilities` with N rows.

        Raises:
            ValueError: if ``crops`` is not (N, 250, 160, 3) uint8.
        """
        return CardProbabilities.from_logits(self.logits(crops))

    def logits(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """The model's output for each crop: (N, 12) float32 logits, heads count, colour,
        shape, fill, three values each in the enum order of :mod:`vision.cards` (what
        :meth:`predict` turns into probabilities; averaged over models by
        ``scripts/compare_models.py``). With ``grey_shape``, an unsure crop's three shape logits
        are the mean of its two views' shape log-probabilities (see the class).

        Raises:
            ValueError: if ``crops`` is not (N, 250, 160, 3) uint8.
        """
        crops = np.asarray(crops)
        if crops.ndim != 4 or crops.shape[1:] != (CROP_HEIGHT, CROP_WIDTH, 3):
            raise ValueError(
                f"crops: expected (N, {CROP_HEIGHT}, {CROP_WIDTH}, 3) uint8 BGR, got {crops.shape}"
            )
        if crops.dtype != np.uint8:
            raise ValueError(f"crops: expected uint8, got {crops.dtype}")
        if len(crops) == 0:
            return np.zeros((0, 12), np.float32)
        logits = self._run(crops)
        if self.grey_shape:
            shape = _log_softmax(logits[:, 6:9])
            unsure = np.flatnonzero(np.exp(shape.max(axis=1)) < SHAPE_SECOND_LOOK)
            if len(unsure):
                grey = _log_softmax(self._run(grey_view(crops[unsure]))[:, 6:9])
                logits[unsure, 6:9] = (shape[unsure] + grey) / 2
        return logits

    def _run(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """(N, 12) float32 logits of the model for checked crops, one view."""
        (logits,) = self._session.run(None, {self._input: self.input_tensor(crops)})
        return np.array(logits, np.float32)


def _order_portrait(box: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Order four corners TL, TR, BR, BL (clockwise in image coordinates) with TL->TR short."""
    centre = box.mean(axis=0)
    angles = np.arctan2(box[:, 1] - centre[1], box[:, 0] - centre[0])
    box = box[np.argsort(angles)]  # clockwise on screen (y down)
    start = int(np.argmin(box.sum(axis=1)))
    box = np.roll(box, -start, axis=0)
    if np.linalg.norm(box[0] - box[1]) > np.linalg.norm(box[1] - box[2]):
        box = np.roll(box, -1, axis=0)  # landscape: make the short side the top edge
    return box.astype(np.float32)


#: Versions of :func:`crop_single_card`. 1: the largest bright region's minimum-area rectangle
#: whenever it covers 30 % to ``min_fill`` of the image (the shipped model's training crops; on
#: tomwhite's whole-card photos it cut 166 of 13,488 cards at a shadow's edge, through their
#: symbols). 2: the region's four corners, warped in perspective, only where they bound a card
#: (:func:`_card_in_chip`); otherwise the whole image. Measured: models/README.md, "Cards
#: cut out of chips".
CROP_VERSIONS: Final[tuple[int, ...]] = (1, 2)
CROP_VERSION: Final[int] = 2

#: Gates of :func:`_card_in_chip` (measured on the 747 shared chips version 1 cut, 572 of them
#: omega697's cards with table round them): the region fills its four-corner outline at least
#: this much, its long sides (averaged) are this many times its short sides, its paper is this
#: many grey levels brighter than what lies outside it, and no ink crosses its edges.
_CHIP_FILL: Final = 0.94
_CHIP_ASPECT: Final = (1.15, 2.3)
_CHIP_CONTRAST: Final = 20.0


def _four_corners(contour: npt.NDArray[np.int32]) -> npt.NDArray[np.float32] | None:
    """(4, 2) float32 corners of a contour's convex hull simplified to four vertices (the
    tolerance grows from 1 % to 12 % of its perimeter), or None when it never has four."""
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for eps in np.arange(0.01, 0.12, 0.005):
        poly = cv2.approxPolyDP(hull, float(eps) * perimeter, True)
        if len(poly) <= 4:
            return poly.reshape(4, 2).astype(np.float32) if len(poly) == 4 else None
    return None


def _ink_on_edges(image: npt.NDArray[np.uint8], quad: npt.NDArray[np.float32]) -> bool:
    """Whether symbol ink lies on the band just inside a quad's sides (0.90 to 0.96 of the way
    from its centre): darker than 0.75 of the paper's median grey, or more than 35 levels more
    saturated (max - min channel) than it. A card's symbols keep off its edges; a shadow's edge
    on a card runs through them."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    sat = (image.max(axis=2) - image.min(axis=2)).astype(np.float32)
    centre = quad.mean(axis=0)
    t = np.linspace(0.08, 0.92, 40, dtype=np.float32)
    nxt = np.roll(quad, -1, axis=0)
    edge = (quad[:, None] + t[None, :, None] * (nxt - quad)[:, None]).reshape(-1, 2) - centre

    def sample(plane: npt.NDArray[np.float32], scale: float) -> npt.NDArray[np.float32]:
        pts = (centre + scale * edge).astype(np.float32)
        return cv2.remap(plane, pts[None, :, 0], pts[None, :, 1], cv2.INTER_LINEAR)[0]

    paper, paper_sat = np.median(sample(grey, 0.8)), np.median(sample(sat, 0.8))
    return any(
        bool(((sample(grey, k) < 0.75 * paper) | (sample(sat, k) > paper_sat + 35)).any())
        for k in (0.9, 0.93, 0.96)
    )


def _card_in_chip(
    image: npt.NDArray[np.uint8], grey: npt.NDArray[np.uint8], min_fill: float
) -> npt.NDArray[np.float32] | None:
    """(4, 2) float32 corners of the card in a chip that shows table round it, or None when
    the image is the card (version 2 of :func:`crop_single_card`)."""
    h, w = grey.shape
    blurred = cv2.GaussianBlur(grey, (5, 5), 0)
    _, mask = cv2.threshold(blurred, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    region = max(contours, key=cv2.contourArea)
    corners = _four_corners(region)
    if corners is None:
        return None
    area = cv2.contourArea(corners)
    if not 0.3 * h * w <= area < min_fill * h * w:
        return None
    if cv2.contourArea(region) < _CHIP_FILL * area:
        return None
    quad = _order_portrait(corners)
    sides = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
    aspect = (sides[1] + sides[3]) / max(1.0, float(sides[0] + sides[2]))
    if not _CHIP_ASPECT[0] <= aspect <= _CHIP_ASPECT[1]:
        return None
    inside = np.zeros((h, w), np.uint8)
    cv2.fillPoly(inside, [np.round(corners).astype(np.int32)], 1)
    if (inside == 0).sum() < 0.02 * h * w:
        return None
    contrast = float(blurred[inside > 0].mean()) - float(blurred[inside == 0].mean())
    if contrast < _CHIP_CONTRAST or _ink_on_edges(image, quad):
        return None
    return quad


def crop_single_card(
    image: npt.NDArray[np.uint8],
    *,
    min_fill: float = 0.92,
    balance_version: int = BALANCE_VERSION,
    version: int = CROP_VERSION,
) -> npt.NDArray[np.uint8]:
    """Turn an image of one card (a chip, maybe with table showing around it) into a crop.

    The card is the largest bright region (Otsu threshold on grey). Version 2 (the default)
    warps its four corners in perspective when it covers 30 % to ``min_fill`` of the image,
    fills them like a card, has a card's proportions, is brighter than what lies round it and
    no ink crosses its edges; otherwise the whole image is the card. Version 1 warps the
    region's minimum-area rectangle whenever it covers 30 % to ``min_fill`` of the image (see
    :data:`CROP_VERSIONS`). Landscape cards are turned to portrait. This is how the training
    and evaluation scripts bring the shared single-card datasets into the classifier's input
    space; photos at run time go through :func:`vision.detect.find_cards` instead.

    Args:
        image: (H, W, 3) uint8 BGR image showing one card.
        min_fill: below this fraction of the image, the card is cut out of its background.
        balance_version: the white balance (:data:`vision.warp.BALANCE_SETTINGS`; the
            default is the run time's).
        version: one of :data:`CROP_VERSIONS`.

    Returns:
        (250, 160, 3) uint8 BGR crop, white-balanced by :func:`vision.warp.white_balance`.

    Raises:
        ValueError: if ``image`` is not (H, W, 3) uint8, or ``balance_version`` or ``version``
            is unknown.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image: expected (H, W, 3) uint8 BGR, got {image.shape} {image.dtype}")
    if version not in CROP_VERSIONS:
        raise ValueError(f"version: expected one of {CROP_VERSIONS}, got {version}")
    h, w = image.shape[:2]
    full = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if version == 2:
        card = _card_in_chip(image, grey, min_fill)
        quad = _order_portrait(full) if card is None else card
        return warp_cards(image, quad[None], balance_version=balance_version)[0]
    _, mask = cv2.threshold(
        cv2.GaussianBlur(grey, (5, 5), 0), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU
    )
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    quad = full
    if contours:
        biggest = max(contours, key=cv2.contourArea)
        rect = cv2.minAreaRect(biggest)
        rw, rh = rect[1]
        if 0.3 * h * w < rw * rh < min_fill * h * w:
            quad = cv2.boxPoints(rect).astype(np.float32)
    return warp_cards(image, _order_portrait(quad)[None], balance_version=balance_version)[0]
