"""Colour decided at table level: symbol ink measured against the paper, clustered across cards.

Card-by-card colour fails in exactly the ways users complain about (``../shared/PRIOR_ART.md``):
red read as purple under warm light, purple and green merged in dim light, purple printed dark
blue. What stays true on every table is that all cards of one colour share one ink, and that the
three inks differ in hue. So:

1. :func:`symbol_colours` segments each white-balanced crop's symbol pixels against its own paper
   (CIELAB distance from the paper reference) and summarises the ink as the mean a*, b* of its
   most saturated pixels, relative to the paper (so a residual cast cancels).
2. :func:`cluster_inks` groups the cards by ink hue (average-linkage agglomeration on hue
   angle), with the number of groups bounded by geometry: cards whose inks are more than
   ``split_deg`` apart are never merged, groups less than ``merge_deg`` apart always are, and at
   most three groups exist. Each group gets one colour by an exact assignment of groups to
   distinct colours maximising the summed model log-probabilities (which also picks the number
   of groups inside the geometric bounds). How far the model agrees with the grouping sets how
   much the table trusts its inks: light that makes hues meaningless turns the evidence off.
3. :func:`fuse_colour` weighs each card's model probabilities with its hue's distance to each
   group's centre (uncertain for faint inks, capped so a sure model keeps its reading).

A card on its own has no table to group with: :func:`card_colour` weighs its model
probabilities with where its ink hue lies among the hues the three inks have on paper
(:data:`INK_HUE_DEG`). A webcam's faint red outline can look purple to the model while its ink,
measured against the paper, is plainly red.

Measured with ``scripts/evaluate_colour.py`` (held-out real crops grouped into tables under a
shared light); see the README for the figures.

All of it works for a single card (one group: the model's own colour, weighed with its hue,
sharpened).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.warp import paper_mask

__all__ = [
    "InkGroups",
    "SymbolColours",
    "card_colour",
    "cluster_inks",
    "fuse_colour",
    "hue_spread",
    "ink_hue_evidence",
    "symbol_colours",
    "table_colour",
]

#: Chroma (CIELAB a*b* distance from the paper) above which a pixel counts as ink. Lowered per
#: card down to :data:`FAINT_CHROMA` when its paper is clean (faint, blurred open/striped
#: symbols in phone-video frames reach only 6-10).
INK_CHROMA: Final = 12.0
FAINT_CHROMA: Final = 5.0
#: Darkening (paper L* minus pixel L*) above which a pixel counts as ink even without chroma.
INK_DARKNESS: Final = 25.0
#: Minimum chroma of a card's ink summary for its hue to be trusted (and at least the
#: paper's own 95th-percentile chroma).
MIN_CHROMA: Final = 4.0
#: Fraction of the most saturated ink pixels summarised per card.
TOP_FRACTION: Final = 0.3
#: Minimum number of ink pixels (at the analysis size) for a valid reading.
MIN_PIXELS: Final = 12
#: Smallest hue spread assumed for an ink group (degrees): printing and light vary a little.
MIN_SPREAD_DEG: Final = 25.0
#: Chroma noise (CIELAB units) behind the hue: a card's hue is uncertain by about
#: ``atan(HUE_NOISE / chroma)``, so faint inks count less.
HUE_NOISE: Final = 20.0
#: Hue distance (degrees) at which a colour absent from the table is judged.
ABSENT_DEG: Final = 50.0
#: The ink evidence never outweighs the model by more than this (natural log, 55:1).
MAX_EVIDENCE: Final = 4.0
#: Model-grouping agreement (see :class:`InkGroups`) from which the ink evidence starts to count,
#: and from which it counts fully.
TRUST_FROM: Final = 0.75
TRUST_FULL: Final = 0.95
#: Ink hue of each colour (enum order red, green, purple), degrees: the circular mean of
#: :func:`symbol_colours` hue over tomwhite's 13,456 verified crops (white-balanced, against the
#: paper; measured 2026-12-01). Other sources' medians: kaggle-set-cards 40, 148, -75; the table
#: photos' cards 30, 154, -47.
INK_HUE_DEG: Final = (27.0, 151.0, -46.0)
#: Width (degrees, Gaussian sigma) of each ink's hue in :func:`card_colour`, and the likelihood
#: floor every colour keeps (a hue far from all three inks says nothing; the largest evidence
#: is ``log((1 + floor) / floor)`` = 1.8 nats, so a model sure at 86% keeps its reading). Chosen
#: on a plateau: sigma 15-25 and floor 0.1-0.3 give the same cards on every left-out source.
INK_HUE_SIGMA: Final = 20.0
INK_HUE_FLOOR: Final = 0.2
#: Crops are analysed at this fraction of their size (the ink colour needs no detail).
ANALYSIS_SCALE: Final = 0.5
#: Border of the crop ignored when looking for ink (fraction of each side): rounded corners,
#: background and detector error live there.
_BORDER: Final = 0.08


@dataclass(frozen=True, slots=True)
class SymbolColours:
    """Ink colour of each card's symbols, relative to the card's own paper.

    Attributes:
        ab: (N, 2) float32, mean CIELAB (a*, b*) of the most saturated ink pixels minus the
            paper's (a*, b*). CIELAB units (0..~128 chroma), from OpenCV's 8-bit conversion.
        lightness: (N,) float32, mean L* (0..100) of those pixels.
        chroma: (N,) float32, ``hypot(a*, b*)`` of ``ab``.
        hue_deg: (N,) float32, ``atan2(b*, a*)`` in degrees, -180..180 (red ~ 30, purple ~ -40,
            green ~ 160 under neutral light after white balance; measured on the shared crops).
        ink_fraction: (N,) float32, fraction of the interior segmented as ink (0..1).
        valid: (N,) bool, enough saturated ink for the hue to mean something.
    """

    ab: npt.NDArray[np.float32]
    lightness: npt.NDArray[np.float32]
    chroma: npt.NDArray[np.float32]
    hue_deg: npt.NDArray[np.float32]
    ink_fraction: npt.NDArray[np.float32]
    valid: npt.NDArray[np.bool_]

    def __post_init__(self) -> None:
        n = len(self.ab)
        if self.ab.shape != (n, 2):
            raise ValueError(f"ab: expected (N, 2), got {self.ab.shape}")
        for name in ("lightness", "chroma", "hue_deg", "ink_fraction", "valid"):
            got = getattr(self, name).shape
            if got != (n,):
                raise ValueError(f"{name}: expected ({n},), got {got}")

    def __len__(self) -> int:
        return len(self.ab)

    def take(self, index: npt.ArrayLike) -> SymbolColours:
        """The readings of the cards at ``index`` (int array or slice), in that order."""
        return SymbolColours(
            self.ab[index],
            self.lightness[index],
            self.chroma[index],
            self.hue_deg[index],
            self.ink_fraction[index],
            self.valid[index],
        )


def _lab_table() -> npt.NDArray[np.float32]:
    """(1, 256, 3) float32 lookup from OpenCV's 8-bit Lab to L* (0..100), a*, b*: the same
    float32 arithmetic as converting each pixel (``(v - offset) * scale``), 5x cheaper."""
    levels = np.arange(256, dtype=np.float32)
    lightness = (levels - np.float32(0.0)) * np.float32(100.0 / 255.0)
    chroma = levels - np.float32(128.0)
    return np.stack([lightness, chroma, chroma], axis=1)[None]


_LAB_TABLE: Final = _lab_table()


def symbol_colours(crops: npt.NDArray[np.uint8]) -> SymbolColours:
    """Measure each card's symbol ink colour against its own paper.

    The crops are analysed at :data:`ANALYSIS_SCALE` of their size (the ink colour needs no
    detail, and it is 4x cheaper).

    Args:
        crops: (N, H, W, 3) uint8 BGR card crops, white-balanced (:func:`vision.warp.warp_cards`).

    Returns:
        One :class:`SymbolColours` row per crop.

    Raises:
        ValueError: if ``crops`` is not (N, H, W, 3) uint8.
    """
    if crops.ndim != 4 or crops.shape[3] != 3 or crops.dtype != np.uint8:
        raise ValueError(f"crops: expected (N, H, W, 3) uint8 BGR, got {crops.shape} {crops.dtype}")
    n, h, w = crops.shape[:3]
    ab = np.zeros((n, 2), np.float32)
    light = np.zeros(n, np.float32)
    frac = np.zeros(n, np.float32)
    valid = np.zeros(n, bool)
    if n == 0:
        return _colours(ab, light, frac, valid)
    hh, ww = max(round(h * ANALYSIS_SCALE), 8), max(round(w * ANALYSIS_SCALE), 8)
    if h == 2 * hh and w == 2 * ww:  # one call for the whole batch: 2x2 blocks never straddle
        tall = crops.reshape(n * h, w, 3)
        small = cv2.resize(tall, (ww, n * hh), interpolation=cv2.INTER_AREA)
    else:
        small = np.concatenate(
            [cv2.resize(c, (ww, hh), interpolation=cv2.INTER_AREA) for c in crops]
        )
    # 8-bit CIELAB (OpenCV: L*255/100, a*+128, b*+128) is a table lookup, far cheaper than float.
    lab8 = cv2.cvtColor(small.reshape(n * hh, ww, 3), cv2.COLOR_BGR2LAB)
    lab = cv2.LUT(lab8, _LAB_TABLE).reshape(n, hh, ww, 3)  # float32 L* 0..100, a*, b*
    # Paper reference: median L*a*b* of the brighter half of the paper band, per card.
    paper = lab[:, paper_mask(hh, ww)]  # (N, P, 3)
    half = paper.shape[1] // 2
    brighter = np.argpartition(paper[:, :, 0], half, axis=1)[:, half:]
    ref = np.median(np.take_along_axis(paper, brighter[:, :, None], axis=1), axis=1)  # (N, 3)
    by, bx = round(_BORDER * hh), round(_BORDER * ww)
    inner = lab[:, by : hh - by, bx : ww - bx].reshape(n, -1, 3)
    d_ab = inner[:, :, 1:] - ref[:, None, 1:]
    chroma = np.hypot(d_ab[:, :, 0], d_ab[:, :, 1])
    # Paper noise: 95th percentile chroma of the paper band around its reference.
    noise = np.percentile(
        np.hypot(*(paper[:, :, 1:] - ref[:, None, 1:]).transpose(2, 0, 1)), 95, axis=1
    )
    threshold = np.clip(2.0 * noise, FAINT_CHROMA, INK_CHROMA)  # (N,)
    ink = (chroma > threshold[:, None]) | (ref[:, None, 0] - inner[:, :, 0] > INK_DARKNESS)
    frac = ink.mean(axis=1).astype(np.float32)
    # The most saturated TOP_FRACTION of each card's ink pixels (vectorised over cards): the
    # cut is the k-th largest ink chroma, k = TOP_FRACTION of the card's ink pixel count.
    count = ink.sum(axis=1)
    ranked = -np.sort(-np.where(ink, chroma, -1.0), axis=1)  # descending, non-ink last
    k = np.clip(np.maximum(count * TOP_FRACTION, MIN_PIXELS // 2).astype(int), 1, ink.shape[1])
    cut = ranked[np.arange(n), k - 1]
    top = ink & (chroma >= cut[:, None])
    weight = top.sum(axis=1).clip(min=1)
    ab = (np.einsum("np,npc->nc", top.astype(np.float32), d_ab) / weight[:, None]).astype(
        np.float32
    )
    light = ((top * inner[:, :, 0]).sum(axis=1) / weight).astype(np.float32)
    enough = count >= MIN_PIXELS
    ab[~enough] = 0.0
    light[~enough] = 0.0
    valid = enough & (np.hypot(ab[:, 0], ab[:, 1]) >= np.maximum(MIN_CHROMA, noise))
    return _colours(ab, light, frac, valid)


def _colours(
    ab: npt.NDArray[np.float32],
    light: npt.NDArray[np.float32],
    frac: npt.NDArray[np.float32],
    valid: npt.NDArray[np.bool_],
) -> SymbolColours:
    chroma = np.hypot(ab[:, 0], ab[:, 1]).astype(np.float32)
    hue = np.degrees(np.arctan2(ab[:, 1], ab[:, 0])).astype(np.float32)
    return SymbolColours(ab, light, chroma, hue, frac, valid)


@dataclass(frozen=True, slots=True)
class InkGroups:
    """Cards grouped by ink, each group's colour, and how far the table trusts the grouping.

    Attributes:
        labels: (N,) int64 group of each card, -1 for cards without a valid ink reading.
        colours: (G,) int64 colour position (enum order red, green, purple) of each group.
        centres_deg: (G,) float64 chroma-weighted circular mean hue of each group, degrees.
        spreads_deg: (G,) float64 circular spread of each group's hues (at least
            :data:`MIN_SPREAD_DEG`), degrees.
        agreement: mean model probability of each grouped card's group colour (0..1): how far
            the model agrees with the grouping on this table.
        weight: 0..1, how much the ink evidence counts in :func:`fuse_colour` (0 when the
            model and the inks disagree, e.g. light so coloured that the hues mean nothing).
    """

    labels: npt.NDArray[np.int64]
    colours: npt.NDArray[np.int64]
    centres_deg: npt.NDArray[np.float64]
    spreads_deg: npt.NDArray[np.float64]
    agreement: float
    weight: float


def _hue_distance(hue_deg: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    diff = np.abs(hue_deg[:, None].astype(np.float64) - hue_deg[None, :])
    return np.minimum(diff, 360.0 - diff)


def _average_linkage(
    dist: npt.NDArray[np.float64],
) -> list[tuple[float, npt.NDArray[np.int64]]]:
    """Average-linkage agglomeration of a small distance matrix.

    Returns the partitions along the merge tree: ``(merge distance that created it, labels)``,
    from N singletons (distance 0) down to one group. A few lines of numpy instead of
    scikit-learn's ``AgglomerativeClustering``: the tables are tiny (N <= 81) and importing
    ``sklearn.cluster`` costs ~2.7 s per process on the project's machines (measured with
    ``python -X importtime``), a hundred times the whole pipeline's budget for one photo.
    """
    n = len(dist)
    groups: list[list[int]] = [[i] for i in range(n)]
    d = dist.astype(np.float64).copy()
    np.fill_diagonal(d, np.inf)
    out = [(0.0, _labels(groups, n))]
    while len(groups) > 1:
        flat = int(np.argmin(d))
        a, b = divmod(flat, len(groups))
        a, b = min(a, b), max(a, b)
        height = float(d[a, b])
        na, nb = len(groups[a]), len(groups[b])
        merged = (d[a] * na + d[b] * nb) / (na + nb)
        d[a, :] = merged
        d[:, a] = merged
        d[a, a] = np.inf
        d = np.delete(np.delete(d, b, axis=0), b, axis=1)
        groups[a] = groups[a] + groups[b]
        del groups[b]
        out.append((height, _labels(groups, n)))
    return out


def _labels(groups: list[list[int]], n: int) -> npt.NDArray[np.int64]:
    labels = np.empty(n, np.int64)
    for g, members in enumerate(groups):
        labels[members] = g
    return labels


def _best_assignment(cost: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.int64]]:
    """Distinct colours for k <= 3 groups minimising the summed cost (all k-permutations)."""
    from itertools import permutations

    k = len(cost)
    best = (np.inf, np.zeros(k, np.int64))
    for perm in permutations(range(cost.shape[1]), k):
        total = float(cost[np.arange(k), perm].sum())
        if total < best[0] - 1e-12:
            best = (total, np.array(perm, np.int64))
    return best


def cluster_inks(
    colours: SymbolColours,
    colour_probs: npt.NDArray[np.float32],
    *,
    merge_deg: float = 20.0,
    split_deg: float = 50.0,
) -> InkGroups:
    """Group cards by ink hue and give each group one colour.

    The number of groups k is bounded by geometry: at least the number of average-linkage groups
    whose hues are more than ``split_deg`` apart (those cannot be one ink), at most the number
    of groups more than ``merge_deg`` apart, and at most 3. Inside those bounds, k and the
    colour of each group are chosen together to maximise the summed model log-probabilities
    under the constraint that different groups get different colours (exact: every assignment
    of the k <= 3 groups to colours is tried).

    Args:
        colours: ink readings of N cards (:func:`symbol_colours`).
        colour_probs: (N, 3) float32 model probabilities, colour enum order (red, green, purple).
        merge_deg: hue distance (degrees) under which two groups are one ink.
        split_deg: hue distance (degrees) over which two groups are different inks. The shared
            crops put red-purple 60-90 degrees apart, red-green and purple-green over 120.

    Returns:
        The groups; cards without a valid reading get label -1.
    """
    probs = np.asarray(colour_probs, np.float64)
    n = len(colours)
    if probs.shape != (n, 3):
        raise ValueError(f"colour_probs: expected ({n}, 3), got {probs.shape}")
    labels = np.full(n, -1, np.int64)
    idx = np.flatnonzero(colours.valid)
    if len(idx) == 0:
        none = np.zeros(0, np.float64)
        return InkGroups(labels, np.zeros(0, np.int64), none, none, 0.0, 0.0)
    log_p = np.log(np.clip(probs[idx], 1e-6, 1.0))
    tree = _average_linkage(_hue_distance(colours.hue_deg[idx]))
    # Partition with k groups (the tree holds one per k) and the merge heights between them.
    by_k = {len(np.unique(labels_)): (height, labels_) for height, labels_ in tree}
    heights = [h for h, _ in tree]  # ascending
    # k_min: groups still apart at split_deg; k_max: groups still apart at merge_deg.
    k_min = min(sum(1 for h in heights[1:] if h > split_deg) + 1, 3)
    k_max = max(min(sum(1 for h in heights[1:] if h > merge_deg) + 1, 3), k_min)
    best: tuple[float, npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None
    for k in range(k_min, k_max + 1):
        _, raw = by_k[k]
        _, groups = np.unique(raw, return_inverse=True)
        # cost[g, c] = -sum of log p(c) over the group's cards.
        cost = np.stack([-log_p[groups == g].sum(axis=0) for g in range(k)])
        total, assigned = _best_assignment(cost)
        score = -total
        if best is None or score > best[0] + 1e-9:
            best = (score, groups.astype(np.int64), assigned)
    assert best is not None
    _, groups, assigned = best
    labels[idx] = groups
    hue = np.radians(colours.hue_deg[idx].astype(np.float64))
    weight = colours.chroma[idx].astype(np.float64)
    centres, spreads = [], []
    for g in range(len(assigned)):
        member = groups == g
        z = np.sum(weight[member] * np.exp(1j * hue[member])) / max(weight[member].sum(), 1e-9)
        centres.append(np.degrees(np.angle(z)))
        # Circular standard deviation from the mean resultant length.
        r = min(abs(z), 1.0)
        spreads.append(max(np.degrees(np.sqrt(max(-2.0 * np.log(max(r, 1e-9)), 0.0))), 0.0))
    spreads_arr = np.maximum(np.array(spreads), MIN_SPREAD_DEG)
    agreement = float(np.mean(probs[idx, assigned[groups]]))
    trust = float(np.clip((agreement - TRUST_FROM) / (TRUST_FULL - TRUST_FROM), 0.0, 1.0))
    return InkGroups(labels, assigned, np.array(centres), spreads_arr, agreement, trust)


def fuse_colour(
    colour_probs: npt.NDArray[np.float32], groups: InkGroups, inks: SymbolColours
) -> npt.NDArray[np.float32]:
    """Combine each card's model colour probabilities with its ink hue's evidence.

    For a card with a valid ink reading, the evidence for colour ``c`` is a Cauchy likelihood of
    the hue distance ``d`` from the centre of the group that has colour ``c``:
    ``log L(c) = -log(1 + d^2 / sigma^2)``, ``sigma^2 = spread^2 + atan(HUE_NOISE / chroma)^2``
    (a faint ink is uncertain; heavy tails, so a card whose ink fits no group well, as some
    photos' casts make it, says little). A colour no group has is judged at :data:`ABSENT_DEG`. The
    evidence is capped at :data:`MAX_EVIDENCE` nats and scaled by the table's trust
    (``groups.weight``), then ``p'(c) ∝ p(c) L(c)^weight``. A card between two inks stays with
    the model; a card the model is unsure of goes to its ink. Cards without ink are unchanged.

    Args:
        colour_probs: (N, 3) float32 model probabilities, enum order (red, green, purple).
        groups: from :func:`cluster_inks` on the same cards.
        inks: from :func:`symbol_colours` on the same cards.

    Returns:
        (N, 3) float32 fused probabilities, rows summing to 1.

    Raises:
        ValueError: if ``colour_probs`` is not (N, 3) for the N cards of ``groups`` and ``inks``.
    """
    probs = np.asarray(colour_probs, np.float64).copy()
    n = len(inks)
    if probs.shape != (n, 3) or len(groups.labels) != n:
        raise ValueError(
            f"colour_probs {probs.shape}, {len(groups.labels)} grouped and {n} ink readings: "
            "expected (N, 3) and N of each"
        )
    if groups.weight <= 0.0 or len(groups.colours) == 0:
        return probs.astype(np.float32)
    by_colour = {int(c): g for g, c in enumerate(groups.colours)}
    for i in np.flatnonzero(groups.labels >= 0):
        noise = np.degrees(np.arctan2(HUE_NOISE, max(float(inks.chroma[i]), 1e-6)))
        log_l = np.empty(3)
        for c in range(3):
            if c in by_colour:
                g = by_colour[c]
                diff = abs(float(inks.hue_deg[i]) - groups.centres_deg[g]) % 360.0
                d = min(diff, 360.0 - diff)
                sigma2 = groups.spreads_deg[g] ** 2 + noise**2
            else:
                d, sigma2 = ABSENT_DEG, MIN_SPREAD_DEG**2 + noise**2
            log_l[c] = -np.log1p(d * d / sigma2)  # Cauchy: an ink far from every group is weak
        log_l = np.maximum(log_l - log_l.max(), -MAX_EVIDENCE)
        row = probs[i] * np.exp(groups.weight * log_l)
        probs[i] = row / max(row.sum(), 1e-12)
    return probs.astype(np.float32)


def ink_hue_evidence(inks: SymbolColours) -> npt.NDArray[np.float64]:
    """Each card's evidence for each colour from its ink hue alone.

    ``log(exp(-d^2 / (2 sigma^2)) + floor)`` for the hue distance ``d`` to each colour's
    :data:`INK_HUE_DEG`, shifted so that the best colour scores 0 (:data:`INK_HUE_SIGMA`,
    :data:`INK_HUE_FLOOR`). A hue between two inks, or far from all three, gives little; a card
    without a valid ink reading gives none.

    Args:
        inks: ink readings of N cards (:func:`symbol_colours`).

    Returns:
        (N, 3) float64 log-likelihoods, enum order (red, green, purple), each row's maximum 0.
    """
    diff = np.abs(inks.hue_deg[:, None].astype(np.float64) - np.array(INK_HUE_DEG)) % 360.0
    d = np.minimum(diff, 360.0 - diff)
    log_l = np.log(np.exp(-(d * d) / (2.0 * INK_HUE_SIGMA**2)) + INK_HUE_FLOOR)
    log_l -= log_l.max(axis=1, keepdims=True)
    log_l[~inks.valid] = 0.0
    return log_l


def card_colour(
    colour_probs: npt.NDArray[np.float32], inks: SymbolColours
) -> npt.NDArray[np.float32]:
    """A lone card's model colour probabilities weighed with its own ink hue
    (:func:`ink_hue_evidence`): ``p'(c) ∝ p(c) L(c)``, when it is the only card with a valid
    ink reading; otherwise the probabilities unchanged.

    On a table, the inks are grouped against each other (:func:`cluster_inks`), which holds
    under light the white balance cannot undo; a lone card has nothing to group with. Its hue
    against :data:`INK_HUE_DEG` is what is left, and light that moves every hue (a camera's
    colour matrix under tungsten, a webcam's cast) can make it mislead, so it is used only
    there. Measured:

    * each crop of a source the cross-validation model never saw, read alone (cards whose
      colour is wrong, model alone -> weighed; ``scripts/eval_classifier.py``, "card alone"):
      kaggle-set-cards 5 -> 1 of 1,898 (the one left is a green card labelled red), omega697
      verified 0 -> 0, the table photos' cards 2 -> 2 of 1,043 (tomwhite, whose crops set
      :data:`INK_HUE_DEG`, 10 -> 8 of 13,488);
    * weighing every card of a table too changed no reading of the 1,399 cards of the
      labelled photos (``scripts/evaluate.py --cv``), but cost omega697's crops dealt into
      tables 1.2 points of colour and, under the cast of ``scripts/evaluate_colour.py`` that
      moves every ink towards green, up to 10 (tomwhite); checked by the other cards' hues, it
      still cost 0.1 to 0.4 points there and gained nothing, so tables do without it.

    Args:
        colour_probs: (N, 3) float32 model probabilities, enum order (red, green, purple).
        inks: from :func:`symbol_colours` on the same cards.

    Returns:
        (N, 3) float32 probabilities, rows summing to 1.

    Raises:
        ValueError: if ``colour_probs`` is not (N, 3).
    """
    probs = np.asarray(colour_probs, np.float64)
    if probs.shape != (len(inks), 3):
        raise ValueError(f"colour_probs: expected ({len(inks)}, 3), got {probs.shape}")
    if inks.valid.sum() != 1:
        return probs.astype(np.float32)
    row = probs * np.exp(ink_hue_evidence(inks))
    return (row / np.maximum(row.sum(axis=1, keepdims=True), 1e-12)).astype(np.float32)


def table_colour(
    crops: npt.NDArray[np.uint8], colour_probs: npt.NDArray[np.float32], **kwargs: float
) -> tuple[npt.NDArray[np.float32], InkGroups, SymbolColours]:
    """Table-level colour: measure inks, weigh each card with its own ink hue
    (:func:`card_colour`), group the inks, fuse.

    Args:
        crops: (N, H, W, 3) uint8 BGR white-balanced crops.
        colour_probs: (N, 3) float32 model colour probabilities (red, green, purple).
        **kwargs: passed to :func:`cluster_inks` (``merge_deg``, ``split_deg``).

    Returns:
        (fused (N, 3) float32 probabilities, the groups, the ink readings).

    Raises:
        ValueError: if ``crops`` is not (N, H, W, 3) uint8 or ``colour_probs`` not (N, 3).
    """
    inks = symbol_colours(crops)
    probs = card_colour(colour_probs, inks)
    groups = cluster_inks(inks, probs, **kwargs)
    return fuse_colour(probs, groups, inks), groups, inks


def hue_spread(hues: npt.ArrayLike) -> tuple[float, float]:
    """The circular mean of hue angles (radians, any shape, at least one) and the largest
    angle (degrees, 0 to 180) of any of them from it: how far a set of inks lies from one hue."""
    angles = np.asarray(hues, np.float64).ravel()
    mean = float(np.angle(np.exp(1j * angles).mean()))
    return mean, float(np.degrees(np.abs(np.angle(np.exp(1j * (angles - mean))))).max())
