"""Table-level decoding: per-attribute probabilities to cards, knowing a deck has each card once.

A standard deck holds each of the 81 cards exactly once, so two cards on one table read as the
same card means at least one of them is misread. :func:`decode_table` picks, for all cards at
once, the distinct identities that maximise the summed log-probabilities: an exact assignment
(Hungarian, cards x 81 identities, cost ``-log p(identity)`` where a card's probability of an
identity is the product of its four attribute probabilities). With ``mixed_decks=True`` each card
is read on its own (two decks mixed: repeats are legal) and repeats are only flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from vision.cards import ATTRIBUTES, Card
from vision.settings import UNCERTAIN_BELOW

__all__ = [
    "ATTRIBUTE_NAMES",
    "Decoded",
    "UNCERTAIN_BELOW",
    "decode_table",
    "format_confidence",
    "identity_log_probs",
    "tempered_log_probs",
]

#: Attribute names in the order of the probability arrays (count, colour, shape, fill).
ATTRIBUTE_NAMES: Final = tuple(name for name, _ in ATTRIBUTES)
_EPS: Final = 1e-6


@dataclass(frozen=True, slots=True)
class Decoded:
    """The decoded identity of each card on a table.

    Attributes:
        cards: N cards, in detection order.
        confidences: (N,) float32 in 0..1: the probability of the chosen identity, i.e. the
            product of its four attribute probabilities, each head re-softmaxed at its
            temperature when ``decode_table`` is given temperatures (calibrated; see there).
        uncertain: (N,) bool, confidence below the threshold.
        duplicates: (N,) bool, the card's own best reading was also another card's best reading
            (resolved by the assignment unless decks are mixed).
        changed: (N,) bool, the assignment gave the card another identity than its own best.
    """

    cards: tuple[Card, ...]
    confidences: npt.NDArray[np.float32]
    uncertain: npt.NDArray[np.bool_]
    duplicates: npt.NDArray[np.bool_]
    changed: npt.NDArray[np.bool_]

    def __post_init__(self) -> None:
        n = len(self.cards)
        for name in ("confidences", "uncertain", "duplicates", "changed"):
            got = getattr(self, name).shape
            if got != (n,):
                raise ValueError(f"{name}: expected ({n},), got {got}")


def identity_log_probs(probs: tuple[npt.NDArray[np.float32], ...]) -> npt.NDArray[np.float64]:
    """Log-probability of each of the 81 identities for each card.

    Args:
        probs: four (N, 3) float32 arrays (count, colour, shape, fill), each row a distribution
            over the attribute's values in enum order.

    Returns:
        (N, 81) float64, column ``i`` is ``Card.from_index(i)`` (index ``27c + 9k + 3s + f``).

    Raises:
        ValueError: if there are not four (N, 3) arrays of one N.
    """
    if len(probs) != 4:
        raise ValueError(f"expected 4 attribute probability arrays, got {len(probs)}")
    logs = []
    n = None
    for name, p in zip(ATTRIBUTE_NAMES, probs):
        arr = np.asarray(p, np.float64)
        if arr.ndim != 2 or arr.shape[1] != 3 or (n is not None and arr.shape[0] != n):
            raise ValueError(f"{name} probabilities: expected ({n or 'N'}, 3), got {arr.shape}")
        n = arr.shape[0]
        logs.append(np.log(np.clip(arr, _EPS, 1.0)))
    c, k, s, f = logs
    total = (
        c[:, :, None, None, None]
        + k[:, None, :, None, None]
        + s[:, None, None, :, None]
        + f[:, None, None, None, :]
    )
    return total.reshape(len(c), 81)


def format_confidence(confidence: float) -> str:
    """A confidence (0..1) as a person reads it: whole percent, or one decimal from 99%
    ("99.7%"), never "100%": a calibrated 0.998 is one misread in 500, not certainty. Nor
    "0%": under 1% is "<1%" (a reading that unlikely is still the decoder's best guess).

    Rounded down, so a reading flagged below a threshold never shows the threshold or more
    (0.8981 under 0.9 is "89%", not "90%"), and 98.6% is not shown as "99%"."""
    percent = 100.0 * float(confidence)
    if percent < 1.0:
        return "<1%"
    if percent < 99.0:
        return f"{math.floor(percent + 1e-9):.0f}%"
    return f"{min(math.floor(10.0 * percent + 1e-9) / 10.0, 99.9):.1f}%"


def tempered_log_probs(probs: npt.ArrayLike, temperature: float) -> npt.NDArray[np.float64]:
    """(..., 3) log of ``softmax(log p / T)`` over the last axis: one head's probabilities at
    temperature ``T`` (the same as dividing its logits by T; temperature scaling, Guo et al.,
    "On Calibration of Modern Neural Networks", ICML 2017). Computed in log space.

    Raises:
        ValueError: if ``temperature`` is not a positive number.
    """
    if not temperature > 0:  # also NaN
        raise ValueError(f"temperature: expected a positive number, got {temperature}")
    return _log_softmax(np.log(np.clip(np.asarray(probs, np.float64), _EPS, 1.0)) / temperature)


def _log_softmax(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Log of the softmax over the last axis, computed stably."""
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _calibrated(
    probs: tuple[npt.NDArray[np.float32], ...],
    chosen: npt.NDArray[np.int64],
    temperatures: tuple[float, ...],
    evidence: tuple[npt.NDArray[np.floating] | None, ...] | None = None,
) -> npt.NDArray[np.float32]:
    """(N,) product over the heads of ``softmax(log p / T)`` at each card's chosen value; for a
    head with ``evidence`` e (log-likelihoods already multiplied into ``p``), of
    ``softmax(log(p / exp(e)) / T + e)``: the model's part is tempered, the evidence is not."""
    if len(temperatures) != 4 or min(float(np.min(t)) for t in temperatures) <= 0:
        raise ValueError(f"temperatures: expected four positive numbers, got {temperatures}")
    values = np.stack([chosen // 27, chosen // 9 % 3, chosen // 3 % 3, chosen % 3], axis=1)
    log_conf = np.zeros(len(chosen))
    for h, (p, t) in enumerate(zip(probs, temperatures, strict=True)):
        t = np.asarray(t, np.float64)
        t = t[:, None] if t.ndim == 1 else t  # one per card: (N, 1) over the three values
        e = 0.0 if evidence is None or evidence[h] is None else np.asarray(evidence[h], np.float64)
        z = _log_softmax((np.log(np.clip(np.asarray(p, np.float64), _EPS, 1.0)) - e) / t + e)
        log_conf += z[np.arange(len(chosen)), values[:, h]]
    return np.exp(log_conf).astype(np.float32)


def decode_table(
    probs: tuple[npt.NDArray[np.float32], ...],
    *,
    mixed_decks: bool = False,
    uncertain_below: float = UNCERTAIN_BELOW,
    temperatures: tuple[float, ...] | None = None,
    evidence: tuple[npt.NDArray[np.floating] | None, ...] | None = None,
) -> Decoded:
    """Choose each card's identity for the whole table at once.

    Args:
        probs: four (N, 3) float32 attribute probability arrays (count, colour, shape, fill).
        mixed_decks: two or more decks are mixed, so a card may legitimately appear twice: read
            each card on its own and only flag repeats.
        uncertain_below: confidence under which a card is flagged uncertain (0..1).
        temperatures: (4,) temperature per head for the confidence, each a float or an (N,)
            array (one per card): each head's probabilities re-softmaxed as
            ``softmax(log p / T)`` before the product (temperature scaling, Guo et al. 2017;
            fitted by ``scripts/eval_classifier.py``, read from the model JSON by
            :class:`vision.classify.CardClassifier`). None: the raw product. The choice of
            identities does not depend on them.
        evidence: per head, None or (N, 3) log-likelihoods of evidence other than the model
            already multiplied into ``probs`` (the table's ink clustering for colour,
            :func:`vision.colour.fuse_colour`). The temperatures were fitted on the model's own
            probabilities, so only the model's part is tempered: tempering the fused
            probabilities sharpened the ink evidence too (a purple outline in a hand's shadow,
            pclewis shadow4 at JPEG 50: model 0.54 red / 0.41 purple, fused 0.78 red, reported
            at 0.986).

    Returns:
        The decoded table. With one deck and more than 81 cards (impossible for one deck) the
        cards beyond the first 81 distinct readings fall back to their own best reading.

    Raises:
        ValueError: if ``probs`` is not four (N, 3) arrays of one N, or ``temperatures`` not
            four positive numbers (or (N,) arrays of them).
    """
    scores = identity_log_probs(probs)
    n = len(scores)
    best = scores.argmax(axis=1) if n else np.zeros(0, np.int64)
    counts = np.bincount(best, minlength=81)
    duplicates = counts[best] > 1
    chosen = best.copy()
    if not mixed_decks and n and duplicates.any():
        # Imported here: scipy.optimize takes ~1 s to import and is only needed on a conflict.
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(-scores[: min(n, 81)])
        chosen[rows] = cols
    if temperatures is None:
        conf = np.exp(scores[np.arange(n), chosen]).astype(np.float32)
    else:
        conf = _calibrated(probs, chosen, temperatures, evidence)
    return Decoded(
        cards=tuple(Card.from_index(int(i)) for i in chosen),
        confidences=conf,
        uncertain=conf < uncertain_below,
        duplicates=duplicates,
        changed=chosen != best,
    )
