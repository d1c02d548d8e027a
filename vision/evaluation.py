"""Detection ground truth and its measurement: annotation files, polygon IoU, matching, scores.

The annotation format (one JSON file per source under ``datasets/detection/``) is described in
``datasets/detection/README.md``. Corners everywhere are (4, 2) float pixel coordinates in the
photo as displayed (EXIF orientation applied), ordered TL, TR, BR, BL of the card in portrait
orientation: TL-TR is a short side and the order runs clockwise on screen (y points down).

A detection matches a true card when their polygon IoU is at least :data:`IOU_THRESHOLD`. True
cards flagged ``partial`` (cut by the frame edge or mostly covered) need not be found; one detection
lying mostly inside one (or matching it) is neither a true nor a false positive, and any further
detection on the same partial card is a false positive (one card reported twice).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import ATTRIBUTES as CARD_ATTRIBUTES

__all__ = [
    "ATTRIBUTES",
    "IGNORE_OVERLAP",
    "IOU_THRESHOLD",
    "CardTruth",
    "DetectionScore",
    "PhotoTruth",
    "Summary",
    "align_corners",
    "canonical_order",
    "dump_annotation_file",
    "load_annotation_file",
    "load_annotations",
    "match_quads",
    "polygon_area",
    "polygon_intersection",
    "polygon_iou",
    "score_photo",
    "summarise",
]

#: Minimum polygon IoU for a detection to count as finding a true card (issue 3).
IOU_THRESHOLD: Final = 0.85
#: A detection with at least this fraction of its area inside a partial true card is ignored
#: (the first one on that card; a second one is a false positive).
IGNORE_OVERLAP: Final = 0.5
#: Optional per-card attributes an annotation may carry (vocabulary of ``vision.cards``).
ATTRIBUTES: Final = ("count", "colour", "shape", "fill")

#: The values each attribute may take, as text ("1".."3"; the words of ``vision.cards``).
_ATTRIBUTE_VALUES: Final = {
    name: tuple(str(v.value) for v in kind) for name, kind in CARD_ATTRIBUTES
}

Quad = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- geometry


def _as_quad(points: Any) -> Quad:
    quad = np.asarray(points, dtype=np.float64)
    if quad.shape != (4, 2):
        raise ValueError(f"corners: expected shape (4, 2), got {quad.shape}")
    if not np.all(np.isfinite(quad)):
        raise ValueError(f"corners: expected finite numbers, got {quad.tolist()}")
    return quad


def _convex(poly: npt.ArrayLike) -> npt.NDArray[np.float32]:
    pts = np.asarray(poly, dtype=np.float32).reshape(-1, 2)
    return cv2.convexHull(pts).reshape(-1, 2).astype(np.float32)


def polygon_area(poly: npt.ArrayLike) -> float:
    """Area in square pixels of a polygon (vertices in order, either direction)."""
    pts = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    x, y = pts[:, 0], pts[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)


def polygon_intersection(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Area of the intersection of two polygons, taken as their convex hulls (square pixels).

    Uses ``cv2.intersectConvexConvex``; a self-intersecting or concave quadrilateral is replaced by
    its convex hull first, which is what a card outline is.
    """
    pa, pb = _convex(a), _convex(b)
    if len(pa) < 3 or len(pb) < 3:
        return 0.0
    area, _ = cv2.intersectConvexConvex(pa, pb)
    return max(float(area), 0.0)


def polygon_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of two convex polygons, in [0, 1]; 0 when either is degenerate."""
    inter = polygon_intersection(a, b)
    union = polygon_area(_convex(a)) + polygon_area(_convex(b)) - inter
    return inter / union if union > 0 else 0.0


def canonical_order(corners: npt.ArrayLike) -> Quad:
    """Reorder a card quadrilateral to TL, TR, BR, BL in portrait orientation.

    The result runs clockwise on screen (image y points down) and starts at a short side: of the
    two short sides the one nearer the top of the image is the card's top (a SET card looks the
    same turned 180 degrees, so this is a convention, not a fact about the card).

    Args:
        corners: four (x, y) points in pixels, in order around the quadrilateral (either
            direction), any starting corner.

    Returns:
        (4, 2) float64 corners.
    """
    quad = _as_quad(corners)
    # Shoelace sign: positive = clockwise on screen when y points down.
    x, y = quad[:, 0], quad[:, 1]
    signed = np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))
    if signed < 0:
        quad = quad[::-1]
    sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)  # side i: corner i -> i+1
    # Short sides are 0 & 2 or 1 & 3 (compare the opposite pairs' mean lengths).
    start = 0 if sides[0] + sides[2] <= sides[1] + sides[3] else 1
    # Candidates for the top side: side `start` or side `start + 2`.
    mid_a = (quad[start] + quad[(start + 1) % 4]) / 2
    mid_b = (quad[(start + 2) % 4] + quad[(start + 3) % 4]) / 2
    if (mid_b[1], mid_b[0]) < (mid_a[1], mid_a[0]):
        start = (start + 2) % 4
    return np.roll(quad, -start, axis=0)


def align_corners(
    truth: npt.ArrayLike, found: npt.ArrayLike
) -> tuple[int, npt.NDArray[np.float64]]:
    """Best cyclic alignment of a detection's corners to the truth's.

    Args:
        truth: (4, 2) true corners, TL, TR, BR, BL.
        found: (4, 2) detected corners in the detector's order.

    Returns:
        ``(shift, errors)``: ``found`` rolled by ``-shift`` lines up best with ``truth`` (0 = same
        order, 2 = turned 180 degrees, which is still a valid portrait order, 1 or 3 = landscape
        order), and the four corner distances in pixels after that alignment. Mirrored orders
        (counter-clockwise) are considered too and reported as shift ``-1``.
    """
    t, f = _as_quad(truth), _as_quad(found)
    best: tuple[float, int, npt.NDArray[np.float64]] | None = None
    for mirrored in (False, True):
        cand = f[::-1] if mirrored else f
        for shift in range(4):
            rolled = np.roll(cand, -shift, axis=0)
            err = np.linalg.norm(rolled - t, axis=1)
            key = float(err.sum())
            code = -1 if mirrored else shift
            if best is None or key < best[0] - 1e-9:
                best = (key, code, err)
    assert best is not None
    return best[1], best[2]


def match_quads(
    truth: Sequence[npt.ArrayLike],
    found: Sequence[npt.ArrayLike],
    threshold: float = IOU_THRESHOLD,
) -> list[tuple[int, int, float]]:
    """One-to-one matching of detections to true cards by polygon IoU (optimal assignment).

    Args:
        truth: true quadrilaterals, each (4, 2).
        found: detected quadrilaterals, each (4, 2).
        threshold: minimum IoU for a pair to match.

    Returns:
        ``(truth_index, found_index, iou)`` for every matched pair, sorted by truth index. The
        assignment maximises the total IoU over pairs at or above ``threshold`` (Hungarian).
    """
    if not len(truth) or not len(found):
        return []
    iou = np.array([[polygon_iou(t, f) for f in found] for t in truth], dtype=np.float64)
    eligible = iou >= threshold
    if not eligible.any():
        return []
    from scipy.optimize import linear_sum_assignment

    cost = np.where(eligible, -iou, 1.0)
    rows, cols = linear_sum_assignment(cost)
    return sorted((int(r), int(c), float(iou[r, c])) for r, c in zip(rows, cols) if eligible[r, c])


# --------------------------------------------------------------------------- annotations


@dataclass(frozen=True)
class CardTruth:
    """One annotated card.

    Attributes:
        corners: (4, 2) float64 pixels in the displayed photo, TL, TR, BR, BL (portrait).
        partial: cut by the frame edge or mostly covered; need not be detected.
        attributes: any of ``count``, ``colour``, ``shape``, ``fill`` when known.
    """

    corners: Quad
    partial: bool = False
    attributes: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "corners", _as_quad(self.corners))
        if abs(cv2.contourArea(self.corners.astype(np.float32))) < 1.0:
            raise ValueError(f"corners: a quad of no area, {self.corners.tolist()}")
        unknown = set(self.attributes) - set(ATTRIBUTES)
        if unknown:
            raise ValueError(f"card attributes: expected keys from {ATTRIBUTES}, got {unknown}")
        for key, value in self.attributes.items():
            allowed = _ATTRIBUTE_VALUES[key]
            if str(value) not in allowed:
                raise ValueError(f"{key} {value!r} is not one of {', '.join(allowed)}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
            "partial": bool(self.partial),
        }
        for key in ATTRIBUTES:
            if key in self.attributes:
                out[key] = self.attributes[key]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CardTruth:
        attrs: dict[str, Any] = {k: data[k] for k in ATTRIBUTES if k in data}
        return cls(
            corners=data["corners"], partial=bool(data.get("partial", False)), attributes=attrs
        )


@dataclass(frozen=True)
class PhotoTruth:
    """The annotated cards of one photo.

    Attributes:
        path: photo path relative to the shared datasets folder, e.g.
            ``"tables/pclewis/resources/crazy.jpg"``.
        width, height: displayed size in pixels (EXIF orientation applied).
        cards: the annotated cards (an empty tuple for a photo with no card).
        reviewed: a person checked every card's corners by eye.
        source: the source (folder under ``tables/``), from the annotation file.
        note: free text (what is hard about the photo, what was decided).
    """

    path: str
    width: int
    height: int
    cards: tuple[CardTruth, ...] = ()
    reviewed: bool = False
    source: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "width": int(self.width),
            "height": int(self.height),
            "reviewed": bool(self.reviewed),
        }
        if self.note:
            out["note"] = self.note
        out["cards"] = [c.to_json() for c in self.cards]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "") -> PhotoTruth:
        return cls(
            path=str(data["path"]),
            width=int(data["width"]),
            height=int(data["height"]),
            cards=tuple(CardTruth.from_json(c) for c in data.get("cards", [])),
            reviewed=bool(data.get("reviewed", False)),
            source=source,
            note=str(data.get("note", "")),
        )


def load_annotation_file(path: str | Path) -> list[PhotoTruth]:
    """Read one annotation file (``{"source": ..., "photos": [...]}``).

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: if it is not a valid annotation file.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("photos"), list):
        raise ValueError(f"{path}: expected an object with a 'photos' list")
    source = str(data.get("source", path.stem))
    photos = []
    for n, entry in enumerate(data["photos"]):
        try:
            photos.append(PhotoTruth.from_json(entry, source))
        except (KeyError, TypeError, ValueError) as exc:  # say where: a hand-edited file
            name = entry.get("path", f"photo #{n}") if isinstance(entry, dict) else f"photo #{n}"
            cards = entry.get("cards", []) if isinstance(entry, dict) else []
            where = next(
                (f" card {i}" for i, c in enumerate(cards) if not _card_ok(c)), ""
            )  # fmt: skip
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ValueError(f"{path}: {name}{where}: {what}") from exc
    return photos


def _card_ok(data: Any) -> bool:
    """Whether one card's JSON makes a :class:`CardTruth`."""
    try:
        CardTruth.from_json(data)
    except (KeyError, TypeError, ValueError):
        return False
    return True


def dump_annotation_file(path: str | Path, photos: Iterable[PhotoTruth], source: str) -> None:
    """Write an annotation file, one card per line so that diffs stay readable.

    Photos are sorted by path; the file is replaced atomically.
    """
    path = Path(path)
    photos = sorted(photos, key=lambda p: p.path)
    lines = ["{", f'  "source": {json.dumps(source)},', '  "photos": [']
    for i, photo in enumerate(photos):
        head = photo.to_json()
        cards = head.pop("cards")
        lines.append("    {")
        for key, value in head.items():
            lines.append(f"      {json.dumps(key)}: {json.dumps(value)},")
        if cards:
            lines.append('      "cards": [')
            for j, card in enumerate(cards):
                sep = "," if j < len(cards) - 1 else ""
                lines.append(f"        {json.dumps(card)}{sep}")
            lines.append("      ]")
        else:
            lines.append('      "cards": []')
        lines.append("    }" + ("," if i < len(photos) - 1 else ""))
    lines += ["  ]", "}", ""]
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    tmp.replace(path)


def load_annotations(folder: str | Path, reviewed_only: bool = True) -> list[PhotoTruth]:
    """All photos of every ``*.json`` annotation file in ``folder``, sorted by path.

    Args:
        folder: e.g. ``<repo>/datasets/detection``.
        reviewed_only: keep only photos whose ``reviewed`` flag is set.
    """
    photos: list[PhotoTruth] = []
    for file in sorted(Path(folder).glob("*.json")):
        photos.extend(load_annotation_file(file))
    if reviewed_only:
        photos = [p for p in photos if p.reviewed]
    return sorted(photos, key=lambda p: p.path)


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class DetectionScore:
    """Detection results on one photo.

    Attributes:
        path: the photo (relative to the shared datasets folder).
        source: its source.
        n_truth: true cards that must be found (``partial`` ones excluded).
        true_positives: required true cards matched by a detection.
        false_positives: detections matching no true card and not lying inside a partial one,
            and every detection after the first on one partial card (a card reported twice).
        ignored: detections matched to (or lying inside) a partial true card, one per card.
        missed: indices (into the photo's cards) of required cards not found.
        false_indices: indices (into the detections) of the false positives.
        corner_errors: (M, 4) pixel distances of matched corners after the best cyclic
            alignment, one row per matched required card.
        shifts: the alignment per matched required card (0 = same order, 2 = turned 180
            degrees, 1 or 3 = landscape order, -1 = counter-clockwise).
        raw_errors: (M, 4) distances in the detector's own order (no alignment).
        ious: IoU of each matched required card.
    """

    path: str
    source: str
    n_truth: int
    true_positives: int
    false_positives: int
    ignored: int
    missed: tuple[int, ...]
    false_indices: tuple[int, ...]
    corner_errors: npt.NDArray[np.float64]
    shifts: tuple[int, ...]
    raw_errors: npt.NDArray[np.float64]
    ious: tuple[float, ...]

    @property
    def perfect(self) -> bool:
        """Every required card found and no false positive."""
        return self.true_positives == self.n_truth and self.false_positives == 0


def score_photo(
    photo: PhotoTruth,
    found: npt.ArrayLike,
    threshold: float = IOU_THRESHOLD,
) -> DetectionScore:
    """Compare one photo's detections with its truth.

    Args:
        photo: the annotated photo.
        found: (N, 4, 2) detected corners in displayed-photo pixels.
        threshold: IoU needed for a match.
    """
    quads = np.asarray(found, dtype=np.float64).reshape(-1, 4, 2)
    truth = [c.corners for c in photo.cards]
    matches = match_quads(truth, list(quads), threshold)
    matched_t = {t for t, _, _ in matches}
    matched_f = {f for _, f, _ in matches}
    errs, raws, shifts, ious = [], [], [], []
    tp = ignored = 0
    taken: set[int] = set()  # partial true cards already reported by a detection
    for t, f, iou in matches:
        if photo.cards[t].partial:
            ignored += 1
            taken.add(t)
            continue
        tp += 1
        shift, err = align_corners(truth[t], quads[f])
        errs.append(err)
        raws.append(np.linalg.norm(quads[f] - truth[t], axis=1))
        shifts.append(shift)
        ious.append(iou)
    partial = [t for t, c in enumerate(photo.cards) if c.partial]
    false_idx = []
    for f, quad in enumerate(quads):
        if f in matched_f:
            continue
        area = polygon_area(_convex(quad))
        inside = [polygon_intersection(quad, truth[t]) for t in partial]
        best = int(np.argmax(inside)) if inside else -1
        on_partial = area > 0 and best >= 0 and inside[best] / area >= IGNORE_OVERLAP
        if on_partial and partial[best] not in taken:
            ignored += 1
            taken.add(partial[best])
        else:
            false_idx.append(f)
    required = [i for i, c in enumerate(photo.cards) if not c.partial]
    missed = tuple(i for i in required if i not in matched_t)
    return DetectionScore(
        path=photo.path,
        source=photo.source,
        n_truth=len(required),
        true_positives=tp,
        false_positives=len(false_idx),
        ignored=ignored,
        missed=missed,
        false_indices=tuple(false_idx),
        corner_errors=np.array(errs, dtype=np.float64).reshape(-1, 4),
        shifts=tuple(shifts),
        raw_errors=np.array(raws, dtype=np.float64).reshape(-1, 4),
        ious=tuple(ious),
    )


@dataclass(frozen=True)
class Summary:
    """Aggregate detection figures over a set of photos.

    Attributes:
        photos: number of photos.
        perfect_photos: photos with every required card found and nothing else.
        truth, true_positives, false_positives: card counts.
        precision, recall: in [0, 1] (1.0 when there is nothing to find / nothing found).
        corner_mean, corner_median, corner_p95, corner_max: pixels, over all matched corners after
            the best cyclic alignment.
        raw_corner_mean, raw_corner_median: the same in the detector's own corner order.
        portrait_order_ok: fraction of matches whose order is TL, TR, BR, BL or its 180 degree turn.
        same_order: fraction of matches whose order equals the truth's exactly.
    """

    photos: int
    perfect_photos: int
    truth: int
    true_positives: int
    false_positives: int
    precision: float
    recall: float
    corner_mean: float
    corner_median: float
    corner_p95: float
    corner_max: float
    raw_corner_mean: float
    raw_corner_median: float
    portrait_order_ok: float
    same_order: float

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def summarise(scores: Sequence[DetectionScore]) -> Summary:
    """Aggregate per-photo scores (micro-averaged over cards)."""
    truth = sum(s.n_truth for s in scores)
    tp = sum(s.true_positives for s in scores)
    fp = sum(s.false_positives for s in scores)
    errs = np.concatenate([s.corner_errors.ravel() for s in scores]) if scores else np.zeros(0)
    raws = np.concatenate([s.raw_errors.ravel() for s in scores]) if scores else np.zeros(0)
    shifts = [sh for s in scores for sh in s.shifts]

    def stat(values: npt.NDArray[np.float64], fn: Any) -> float:
        return float(fn(values)) if values.size else float("nan")

    return Summary(
        photos=len(scores),
        perfect_photos=sum(s.perfect for s in scores),
        truth=truth,
        true_positives=tp,
        false_positives=fp,
        precision=tp / (tp + fp) if tp + fp else 1.0,
        recall=tp / truth if truth else 1.0,
        corner_mean=stat(errs, np.mean),
        corner_median=stat(errs, np.median),
        corner_p95=stat(errs, lambda v: np.percentile(v, 95)),
        corner_max=stat(errs, np.max),
        raw_corner_mean=stat(raws, np.mean),
        raw_corner_median=stat(raws, np.median),
        portrait_order_ok=(sum(sh in (0, 2) for sh in shifts) / len(shifts)) if shifts else 1.0,
        same_order=(sum(sh == 0 for sh in shifts) / len(shifts)) if shifts else 1.0,
    )
