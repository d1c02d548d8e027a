#!/usr/bin/env python3
"""Label card corners in table photos: seed with a detector, render review sheets, correct by hand.

Annotations live in ``datasets/detection/<source>.json`` (format: ``datasets/detection/README.md``)
and point at photos in the shared datasets folder by their relative path. A photo is named on the
command line by its relative path or by any unique part of it (``pclewis/crazy``).

Typical session::

    python scripts/label.py seed --source koff            # detector (or built-in) proposals
    python scripts/label.py review koff/IMG01             # writes /tmp/setvision-label/*.png
    python scripts/label.py set-card koff/IMG01 3 x1 y1 x2 y2 x3 y3 x4 y4 --snap
    python scripts/label.py add-card koff/IMG01 x1 y1 ... x4 y4 --snap --partial
    python scripts/label.py remove-card koff/IMG01 7
    python scripts/label.py mark-reviewed koff/IMG01
    python scripts/label.py status

``review`` writes two images per photo: an overview (numbered polygons, corner dots, a coordinate
grid in photo pixels; the TL corner has a ring) and a corner sheet (every corner of every card
magnified, with the fitted sides drawn) to check the corners to a pixel or two. ``crop`` magnifies
any region with a fine grid, to read coordinates when placing corners by hand. ``snap`` moves a
card's sides onto the strongest paper edge nearby (a robust line fit per side) and puts the
corners where the sides meet: hand-placed corners then need only be roughly right.
"""

from __future__ import annotations

import csv
import dataclasses
import fcntl
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Final

import cv2
import numpy as np
import numpy.typing as npt
import typer

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from vision.data import shared_datasets  # noqa: E402
from vision.dataset.snap import intersect_lines as _intersect  # noqa: E402
from vision.dataset.snap import line_through as _line_through  # noqa: E402
from vision.dataset.snap import snap_quad  # noqa: E402
from vision.errors import SetVisionError  # noqa: E402
from vision.evaluation import (  # noqa: E402
    ATTRIBUTES,
    CardTruth,
    PhotoTruth,
    align_corners,
    canonical_order,
    dump_annotation_file,
    load_annotation_file,
    polygon_area,
    polygon_intersection,
    polygon_iou,
)

DEFAULT_ANNOTATIONS = REPO / "datasets" / "detection"
DEFAULT_OUT = Path("/tmp/setvision-label")
#: Card width / height (57 x 89 mm).
CARD_ASPECT = 57.0 / 89.0

#: Corners of a partial card lie outside the photo, so numbers may be negative: "-12" is a
#: number there, not an unknown option.
NUMBERS: Final = {"ignore_unknown_options": True}

app = typer.Typer(
    help="Label SET card corners in photos (seed, review, correct).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

AnnotationsOpt = Annotated[
    Path, typer.Option("--annotations", "-a", help="Folder of annotation JSON files.")
]
HowOpt = Annotated[
    str,
    typer.Option(
        help="Re-fit method: grabcut (segmentation), colour (paper vs table colour), snap, chroma."
    ),
]
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="Shared datasets folder (default: vision.data.shared_datasets())."),
]


# --------------------------------------------------------------------------- images


def load_image(path: Path) -> npt.NDArray[np.uint8]:
    """A photo as displayed (EXIF orientation applied), BGR uint8.

    Uses ``vision.io.load_image`` when the project has it, else OpenCV (whose ``IMREAD_COLOR``
    applies the EXIF orientation).
    """
    try:
        from vision.io import load_image as project_load
    except ImportError:  # an older checkout without vision.io
        pass
    else:
        return project_load(path)
    data = np.fromfile(str(path), dtype=np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise typer.BadParameter(f"cannot decode image {path}")
    return image


# --------------------------------------------------------------------------- geometry helpers


def _side_fit(points: npt.NDArray[np.float64], quad: npt.NDArray[np.float64]) -> np.ndarray | None:
    """Fit the four sides of ``quad`` to outline ``points`` (middle of each side) and intersect."""
    lines = []
    for i in range(4):
        p0, p1 = quad[i], quad[(i + 1) % 4]
        length = float(np.linalg.norm(p1 - p0))
        if length < 8:
            return None
        d = (p1 - p0) / length
        rel = points - p0
        along = rel @ d
        across = rel @ np.array([d[1], -d[0]])
        near = (along > 0.15 * length) & (along < 0.85 * length) & (np.abs(across) < 0.08 * length)
        if near.sum() < 5:
            return None
        lines.append(_line_through(points[near]))
    out = []
    for i in range(4):
        hit = _intersect(*lines[(i - 1) % 4], *lines[i])
        if hit is None:
            return None
        out.append(hit)
    return np.array(out)


def colour_quad(
    image: npt.NDArray[np.uint8], rough: npt.ArrayLike, refine: bool = True
) -> npt.NDArray[np.float64]:
    """A card's corners from a rough quadrilateral, by classifying pixels as paper or table.

    The paper colour is the median inside the rough quadrilateral shrunk to 80% (the paper
    outweighs the symbols there), the table colour the median of a ring 15-30% outside it; each
    pixel nearby takes the nearer of the two colours. The paper region under the rough card's
    centre gives the outline, whose straight parts are fitted with lines (rounded corners
    excluded); with ``refine`` the sides are then snapped to the strongest edge within a few
    pixels. Works where paper and table differ only slightly in colour (a white card on a
    lavender tray), as long as the two colours differ more than the noise.

    Returns:
        (4, 2) float64 corners, canonically ordered; the rough quad if no paper region is found.
    """
    quad = canonical_order(rough)
    h, w = image.shape[:2]
    centre = quad.mean(axis=0)
    big = centre + 1.35 * (quad - centre)
    x0, y0 = np.floor(big.min(axis=0)).astype(int).clip(0, [w - 1, h - 1])
    x1, y1 = np.ceil(big.max(axis=0)).astype(int).clip(1, [w, h])
    crop = np.ascontiguousarray(image[y0:y1, x0:x1])
    if crop.shape[0] < 10 or crop.shape[1] < 10:
        return quad
    scale = min(1.0, 500.0 / max(crop.shape[:2]))
    small = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (3, 3), 0).astype(np.float32)
    local = (quad - [x0, y0]) * scale
    mid = local.mean(axis=0)

    def region(factor: float) -> npt.NDArray[np.bool_]:
        m = np.zeros(small.shape[:2], np.uint8)
        cv2.fillConvexPoly(m, np.round(mid + factor * (local - mid)).astype(np.int32), 1)
        return m.astype(bool)

    inner = region(0.8)
    ring = region(1.3) & ~region(1.15)
    if inner.sum() < 20 or ring.sum() < 20:
        return quad
    paper = np.median(small[inner], axis=0)
    table = np.median(small[ring], axis=0)
    d_paper = np.linalg.norm(small - paper, axis=2)
    d_table = np.linalg.norm(small - table, axis=2)
    mask = ((d_paper < d_table) & region(1.35)).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels = cv2.connectedComponents(mask)
    cy, cx = np.clip(np.round(mid[::-1]).astype(int), 0, np.array(mask.shape) - 1)
    inside = labels[inner]
    inside = inside[inside > 0]
    if count < 2 or inside.size == 0:
        return quad
    best = np.bincount(inside).argmax()
    blob = (labels == best).astype(np.uint8) * 255
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    return _quad_from_contour(image, cnt, scale, (x0, y0), refine)


def _quad_from_contour(
    image: npt.NDArray[np.uint8],
    cnt: npt.NDArray[np.int32],
    scale: float,
    origin: tuple[int, int],
    refine: bool,
) -> npt.NDArray[np.float64]:
    """A card quad from a segmented blob's outer contour (in a region scaled by ``scale`` whose
    top-left is ``origin`` in the photo): a 4-point hull or the minimum-area box as a start, then
    a fit of the four sides to the outline, then (``refine``) a snap to the paper edges."""
    pts = cnt.reshape(-1, 2).astype(np.float64) / scale + origin
    hull = cv2.convexHull(cnt)
    approx = cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True).reshape(-1, 2)
    start = (
        canonical_order(approx / scale + origin)
        if len(approx) == 4
        else canonical_order(cv2.boxPoints(cv2.minAreaRect(cnt)) / scale + origin)
    )
    fitted = _side_fit(pts, start)
    result = canonical_order(fitted) if fitted is not None else start
    if refine:
        result = snap_quad(image, result, radius=max(3.0, 2.0 / scale), iterations=2)
    return result


def grabcut_quad(
    image: npt.NDArray[np.uint8], rough: npt.ArrayLike, refine: bool = True
) -> npt.NDArray[np.float64]:
    """A card's corners from a rough quadrilateral, by segmenting the card around it (GrabCut).

    The rough quadrilateral may be off by 10-15% of the card's size: the segmentation starts
    from "probably card" inside it, "card" in its middle and "table" at the edge of a window
    25% larger. The outline's straight parts are fitted with lines (rounded corners excluded)
    and, with ``refine``, the sides are then snapped to the strongest edge within a few pixels.

    Returns:
        (4, 2) float64 corners, canonically ordered; the rough quad if the segmentation failed.
    """
    quad = canonical_order(rough)
    h, w = image.shape[:2]
    centre = quad.mean(axis=0)
    big = centre + 1.3 * (quad - centre)
    x0, y0 = np.floor(big.min(axis=0)).astype(int).clip(0, [w - 1, h - 1])
    x1, y1 = np.ceil(big.max(axis=0)).astype(int).clip(1, [w, h])
    crop = np.ascontiguousarray(image[y0:y1, x0:x1])
    if crop.shape[0] < 10 or crop.shape[1] < 10:
        return quad
    scale = min(1.0, 400.0 / max(crop.shape[:2]))
    small = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    local = (quad - [x0, y0]) * scale
    mask = np.full(small.shape[:2], cv2.GC_PR_BGD, np.uint8)
    cv2.fillConvexPoly(mask, np.round(local).astype(np.int32), cv2.GC_PR_FGD)
    inner = local.mean(axis=0) + 0.6 * (local - local.mean(axis=0))
    cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), cv2.GC_FGD)
    outer = local.mean(axis=0) + 1.28 * (local - local.mean(axis=0))
    ring = np.full(small.shape[:2], 1, np.uint8)
    cv2.fillConvexPoly(ring, np.round(outer).astype(np.int32), 0)
    mask[ring.astype(bool)] = cv2.GC_BGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    try:
        cv2.grabCut(small, mask, None, bgd, fgd, 5, cv2.GC_INIT_WITH_MASK)
    except cv2.error:
        return quad
    fg = np.isin(mask, (cv2.GC_FGD, cv2.GC_PR_FGD)).astype(np.uint8) * 255
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(fg, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return quad
    cnt = max(contours, key=cv2.contourArea)
    return _quad_from_contour(image, cnt, scale, (x0, y0), refine)


def chroma_snap_quad(image: npt.NDArray[np.uint8], rough: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """:func:`snap_quad` on a warmth image (red minus blue, times 4) instead of brightness.

    For cream cards on a bluish-white surface with pen lines (a drawn tray), where brightness
    edges belong to the lines and shadows but the card differs from the surface in hue. The
    sides found on the warmth image (within 20 px) are then snapped on brightness within 4 px.
    """
    b, _, r = cv2.split(image.astype(np.int16))
    warm = np.clip(128 + 4 * (r - b), 0, 255).astype(np.uint8)
    coarse = snap_quad(cv2.merge([warm, warm, warm]), rough, radius=20.0, iterations=3)
    # The hue edge finds the right edge among pen lines; brightness places it to a pixel.
    return snap_quad(image, coarse, radius=4.0, iterations=2)


def refine_quad(
    image: npt.NDArray[np.uint8], rough: npt.ArrayLike, how: str = "grabcut"
) -> npt.NDArray[np.float64]:
    """Re-fit a rough card quadrilateral with :func:`grabcut_quad`, :func:`colour_quad`,
    :func:`snap_quad` or :func:`chroma_snap_quad` (``how`` = ``grabcut``, ``colour``, ``snap``
    or ``chroma``)."""
    methods = {
        "grabcut": grabcut_quad,
        "colour": colour_quad,
        "snap": snap_quad,
        "chroma": chroma_snap_quad,
    }
    if how not in methods:
        raise typer.BadParameter(f"--how must be one of {sorted(methods)}, got {how!r}")
    return methods[how](image, rough)


def simple_find_cards(image: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.float64]]:
    """Labelling aid: card proposals from bright, low-saturation blobs of card shape.

    Deliberately simple and independent of ``vision.detect`` (so that ground truth seeded with it
    is not the project detector's opinion); every proposal is reviewed by a person anyway.
    """
    h, w = image.shape[:2]
    scale = min(1.0, 1000.0 / max(h, w))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    val = hsv[..., 2].astype(np.float32)
    sat = hsv[..., 1]
    local = cv2.GaussianBlur(val, (0, 0), max(small.shape[:2]) / 15)
    paper = ((val > local + 15) | (val > 200)) & (sat < 70) & (val > 90)
    mask = paper.astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours = list(cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)[0])
    # Edges too, for cards on paper-coloured surfaces: closed outlines of card shape.
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), 20, 60)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours += list(cv2.findContours(edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)[0])
    area_img = small.shape[0] * small.shape[1]
    found: list[tuple[float, npt.NDArray[np.float64]]] = []
    for cnt in contours:
        area = cv2.contourArea(cnt)
        if area < area_img * 0.002 or area > area_img * 0.3:
            continue
        rect = cv2.minAreaRect(cnt)
        (rw, rh) = rect[1]
        if min(rw, rh) <= 0:
            continue
        aspect = min(rw, rh) / max(rw, rh)
        fill = area / (rw * rh)
        if not (0.5 < aspect < 0.8) or fill < 0.85:
            continue
        hull = cv2.convexHull(cnt)
        approx = cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True)
        pts = approx.reshape(-1, 2) if len(approx) == 4 else cv2.boxPoints(rect)
        found.append((area, canonical_order(np.asarray(pts, dtype=np.float64) / scale)))
    # Largest first; drop proposals that overlap one already kept (inner outlines, duplicates).
    kept: list[npt.NDArray[np.float64]] = []
    for _, quad in sorted(found, key=lambda t: -t[0]):
        if all(polygon_iou(quad, k) < 0.3 for k in kept):
            kept.append(quad)
    return [snap_quad(image, q) for q in kept]


def _drop_nested(quads: list[npt.NDArray[np.float64]]) -> list[npt.NDArray[np.float64]]:
    """Drop quadrilaterals lying mostly (70%) inside a larger one, and near-duplicates."""
    areas = [polygon_area(q) for q in quads]
    order = np.argsort(areas)[::-1]
    kept: list[int] = []
    for i in order:
        if areas[i] <= 0:
            continue
        if all(polygon_intersection(quads[i], quads[k]) / areas[i] < 0.7 for k in kept):
            kept.append(int(i))
    return [quads[i] for i in sorted(kept)]


def detector_find_cards(image: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.float64]]:
    """Proposals from the project's detector, ``vision.detect.find_cards``."""
    from vision.detect import find_cards

    result = find_cards(image)
    corners = np.asarray(result.corners, dtype=np.float64).reshape(-1, 4, 2)
    return [canonical_order(q) for q in corners]


# --------------------------------------------------------------------------- annotation store


def source_of(rel_path: str) -> str:
    """The source of a shared photo: the folder after ``tables/`` (else the first folder)."""
    parts = Path(rel_path).parts
    if len(parts) > 1 and parts[0] == "tables":
        return parts[1]
    return parts[0]


class Store:
    """Annotation files of one folder, loaded lazily and written back per source."""

    def __init__(self, folder: Path, data: Path | None = None, *, existing: bool = False) -> None:
        """``existing``: the annotations folder must exist already (a command that only
        reads it: a mistyped folder would otherwise look like one with no annotations)."""
        if folder.exists() and not folder.is_dir():
            raise typer.BadParameter(
                f"{folder} is a file, not a folder", param_hint="'--annotations'"
            )
        if existing and not folder.is_dir():
            raise typer.BadParameter(f"no folder {folder}", param_hint="'--annotations'")
        if data is not None and not data.is_dir():
            raise typer.BadParameter(f"no folder {data}", param_hint="'--data'")
        self.folder = folder
        self._data = data
        self._sources: dict[str, dict[str, PhotoTruth]] = {}

    @property
    def data(self) -> Path:
        if self._data is None:
            found = shared_datasets()
            if found is None:
                raise typer.BadParameter(
                    "the shared datasets are not found (../shared/datasets or $SETVISION_DATA)",
                    param_hint="'--data'",
                )
            self._data = found
        return self._data

    def source(self, name: str) -> dict[str, PhotoTruth]:
        if name not in self._sources:
            file = self.folder / f"{name}.json"
            self._sources[name] = {p.path: p for p in _read_annotations(file)}
        return self._sources[name]

    def forget(self, name: str) -> None:
        """Drop the cached copy of a source's file (re-read on next access)."""
        self._sources.pop(name, None)

    def all_sources(self) -> list[str]:
        return sorted({f.stem for f in self.folder.glob("*.json")} | set(self._sources))

    def get(self, rel: str) -> PhotoTruth | None:
        return self.source(source_of(rel)).get(rel)

    def put(self, photo: PhotoTruth) -> None:
        """Store one photo's entry: re-read the file under a lock, replace the entry, write."""
        src = source_of(photo.path)
        if not self.folder.is_dir():  # said, so a mistyped --annotations does not go unnoticed
            self.folder.mkdir(parents=True, exist_ok=True)
            typer.echo(f"label.py: created the folder {self.folder} for the annotations", err=True)
        file = self.folder / f"{src}.json"
        # Other label.py processes may write the file too: lock the folder itself (flock on a
        # directory), which leaves no lock file behind (one per folder and source in the temp
        # folder did: 1,100 after the test suite's runs).
        folder = os.open(self.folder, os.O_RDONLY)
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            current = {p.path: p for p in _read_annotations(file)}
            current[photo.path] = photo
            dump_annotation_file(file, current.values(), src)
        finally:
            os.close(folder)  # releases the lock
        self._sources[src] = current

    def resolve(self, name: str) -> str:
        """The relative path of a photo named by its path or a unique part of it."""
        candidate = Path(name)
        if not candidate.is_absolute() and (self.data / name).is_file():
            return name
        if candidate.is_file() or (candidate.is_absolute() and candidate.exists()):
            # an absolute path, or a file's path from the current folder
            try:
                return str(candidate.resolve().relative_to(self.data.resolve()))
            except ValueError:  # was a traceback
                raise typer.BadParameter(
                    f"{name} is not inside the datasets folder {self.data} (annotations name "
                    "photos by their path in it; --data picks another folder)",
                    param_hint="'PHOTO'",
                ) from None
        known = {p for s in self.all_sources() for p in self.source(s)}
        known |= {row["path"] for row in _tables_rows(self.data)}
        hits = sorted(p for p in known if _loosely_contains(p, name))
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise typer.BadParameter(f"no photo matches {name!r}")
        last = Path(name).name
        exact = [p for p in hits if last in (Path(p).name, Path(p).stem)]
        if len(exact) == 1:
            return exact[0]
        raise typer.BadParameter(f"{name!r} is ambiguous: {', '.join(hits[:5])}")


def _read_annotations(file: Path) -> list[PhotoTruth]:
    """The photos of one annotation file ([] if there is none); a damaged file is one error."""
    if not file.exists():
        return []
    try:
        return load_annotation_file(file)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        kind = type(error).__name__
        raise typer.BadParameter(
            f"{file} is not a valid annotation file ({kind}: {error}); fix or restore it "
            "(datasets/detection/README.md gives the format)",
            param_hint="'--annotations'",
        ) from None


def _loosely_contains(path: str, name: str) -> bool:
    """Whether the '/'-separated parts of ``name`` occur in ``path`` in order."""
    pos = 0
    for part in name.split("/"):
        found = path.find(part, pos)
        if found < 0:
            return False
        pos = found + len(part)
    return True


def _tables_rows(data: Path) -> list[dict[str, str]]:
    index = data / "tables.csv"
    if not index.exists():
        return []
    with open(index, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _photo_or_fail(store: Store, name: str) -> PhotoTruth:
    rel = store.resolve(name)
    photo = store.get(rel)
    if photo is None:
        raise typer.BadParameter(f"{rel} has no annotation yet; run `seed` or `add-card` first")
    return photo


def _replace(photo: PhotoTruth, **changes: Any) -> PhotoTruth:
    return dataclasses.replace(photo, **changes)


def _quad_from_numbers(values: list[float]) -> npt.NDArray[np.float64]:
    if len(values) != 8:
        raise typer.BadParameter(f"expected 8 numbers (x1 y1 ... x4 y4), got {len(values)}")
    quad = np.array(values, dtype=np.float64).reshape(4, 2)
    if not np.isfinite(quad).all():
        raise typer.BadParameter("the corners must be finite numbers")
    hull = cv2.convexHull(quad.astype(np.float32), returnPoints=False)
    if len(hull) != 4:
        raise typer.BadParameter("the four corners do not form a convex quadrilateral")
    # Order around the centre, whatever order the corners were typed in.
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    return canonical_order(quad[np.argsort(angles)])


def _on_photo_or_fail(quad: npt.NDArray[np.float64], photo: PhotoTruth) -> None:
    """Refuse corners that put the whole card outside the photo (a partial card, cut by the
    frame, may reach past its edges)."""
    frame = np.array(
        [[0, 0], [photo.width, 0], [photo.width, photo.height], [0, photo.height]], np.float32
    )
    area, _ = cv2.intersectConvexConvex(quad.astype(np.float32), frame)
    if area <= 0:
        raise typer.BadParameter(
            f"card wholly outside the photo ({photo.width} x {photo.height} px)"
        )


def _moved(old: npt.ArrayLike, new: npt.ArrayLike) -> float:
    """Largest corner displacement in pixels, whatever the corners' starting point."""
    return float(align_corners(old, new)[1].max())


def _index_or_fail(photo: PhotoTruth, index: int) -> None:
    if not 0 <= index < len(photo.cards):
        raise typer.BadParameter(f"card index {index} out of range (0..{len(photo.cards) - 1})")


# --------------------------------------------------------------------------- drawing

_PALETTE = [
    (0, 0, 255),
    (0, 200, 0),
    (255, 0, 0),
    (0, 200, 255),
    (255, 0, 255),
    (255, 255, 0),
    (0, 128, 255),
    (128, 0, 255),
]


def _grid_step(extent: float) -> int:
    for step in (10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if extent / step <= 14:
            return step
    return 2000


def render_overview(
    image: npt.NDArray[np.uint8],
    cards: list[CardTruth],
    max_side: int = 1200,
    extra: list[npt.NDArray[np.float64]] | None = None,
) -> npt.NDArray[np.uint8]:
    """The photo downscaled to ``max_side`` with a labelled grid (photo pixels) and the cards.

    Card ``i`` is drawn as a numbered polygon with corner dots; the TL corner has a ring; partial
    cards are drawn dashed-looking in orange. ``extra`` quads (e.g. detections) are drawn in grey.
    """
    h, w = image.shape[:2]
    scale = min(1.0, max_side / max(h, w)) if max_side else 1.0
    view = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    margin = 40
    canvas = np.full((view.shape[0] + margin, view.shape[1] + margin, 3), 255, np.uint8)
    canvas[margin:, margin:] = view
    step = _grid_step(max(h, w))
    for x in range(0, w, step):
        xs = int(round(x * scale)) + margin
        cv2.line(canvas, (xs, margin), (xs, canvas.shape[0]), (200, 200, 200), 1)
        cv2.putText(canvas, str(x), (xs + 2, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
    for y in range(0, h, step):
        ys = int(round(y * scale)) + margin
        cv2.line(canvas, (margin, ys), (canvas.shape[1], ys), (200, 200, 200), 1)
        cv2.putText(canvas, str(y), (0, ys + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 0), 1)

    def to_canvas(q: npt.NDArray[np.float64]) -> npt.NDArray[np.int32]:
        return np.round(q * scale + margin).astype(np.int32)

    for q in extra or []:
        cv2.polylines(canvas, [to_canvas(q)], True, (128, 128, 128), 1, cv2.LINE_AA)
    for i, card in enumerate(cards):
        colour = (0, 140, 255) if card.partial else _PALETTE[i % len(_PALETTE)]
        pts = to_canvas(card.corners)
        cv2.polylines(canvas, [pts], True, colour, 1, cv2.LINE_AA)
        for j, p in enumerate(pts):
            cv2.circle(canvas, tuple(int(v) for v in p), 2, colour, -1)
            if j == 0:
                cv2.circle(canvas, tuple(int(v) for v in p), 6, colour, 1)
        c = pts.mean(axis=0).astype(int)
        label = f"{i}p" if card.partial else str(i)
        cv2.putText(
            canvas, label, (c[0] - 8, c[1] + 6), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (0, 0, 0), 3
        )
        cv2.putText(canvas, label, (c[0] - 8, c[1] + 6), cv2.FONT_HERSHEY_SIMPLEX, 0.7, colour, 2)
    return canvas


def render_corners(
    image: npt.NDArray[np.uint8], cards: list[CardTruth], tile: int = 128, per_row: int = 8
) -> npt.NDArray[np.uint8]:
    """Every corner of every card magnified: tiles labelled ``card.corner`` with both sides drawn.

    The window around each corner is 14% of the card's short side (at least 10 px) each way.
    """
    names = ("TL", "TR", "BR", "BL")
    tiles = []
    for i, card in enumerate(cards):
        q = card.corners
        short = min(np.linalg.norm(q[0] - q[1]), np.linalg.norm(q[1] - q[2]))
        half = max(10.0, 0.14 * short)
        for j in range(4):
            cx, cy = q[j]
            zoom = tile / (2 * half)
            # Affine map from photo to tile, so the crop is exact even at the frame edge.
            m = np.array([[zoom, 0, tile / 2 - zoom * cx], [0, zoom, tile / 2 - zoom * cy]])
            t = cv2.warpAffine(
                image, m, (tile, tile), flags=cv2.INTER_LINEAR, borderValue=(255, 0, 255)
            )
            for a, b in (((j - 1) % 4, j), (j, (j + 1) % 4)):
                pa = q[a] * zoom + m[:, 2]
                pb = q[b] * zoom + m[:, 2]
                cv2.line(
                    t,
                    tuple(int(v) for v in np.round(pa * 16)),
                    tuple(int(v) for v in np.round(pb * 16)),
                    (0, 255, 0),
                    1,
                    cv2.LINE_AA,
                    shift=4,
                )
            cv2.circle(t, (tile // 2, tile // 2), 2, (0, 0, 255), -1)
            label = f"{i}.{names[j]}" + ("p" if card.partial else "")
            cv2.putText(t, label, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3)
            cv2.putText(t, label, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1)
            cv2.rectangle(t, (0, 0), (tile - 1, tile - 1), (90, 90, 90), 1)
            tiles.append(t)
    if not tiles:
        return np.full((tile, tile * 2, 3), 255, np.uint8)
    rows = []
    for start in range(0, len(tiles), per_row):
        row = tiles[start : start + per_row]
        row += [np.full_like(tiles[0], 255)] * (per_row - len(row))
        rows.append(np.hstack(row))
    return np.vstack(rows)


def render_crop(
    image: npt.NDArray[np.uint8], box: tuple[float, float, float, float], size: int = 900
) -> npt.NDArray[np.uint8]:
    """A region ``(x0, y0, x1, y1)`` of the photo magnified to ``size`` px with a labelled grid."""
    x0, y0, x1, y1 = box
    zoom = size / max(x1 - x0, y1 - y0)
    out_w, out_h = int(round((x1 - x0) * zoom)), int(round((y1 - y0) * zoom))
    m = np.array([[zoom, 0, -zoom * x0], [0, zoom, -zoom * y0]])
    view = cv2.warpAffine(image, m, (out_w, out_h), flags=cv2.INTER_LINEAR)
    margin = 40
    canvas = np.full((out_h + margin, out_w + margin, 3), 255, np.uint8)
    canvas[margin:, margin:] = view
    step = _grid_step(max(x1 - x0, y1 - y0))
    for x in range(int(np.ceil(x0 / step) * step), int(x1) + 1, step):
        xs = int(round((x - x0) * zoom)) + margin
        cv2.line(canvas, (xs, margin), (xs, canvas.shape[0]), (0, 255, 255), 1)
        cv2.putText(canvas, str(x), (xs + 2, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
    for y in range(int(np.ceil(y0 / step) * step), int(y1) + 1, step):
        ys = int(round((y - y0) * zoom)) + margin
        cv2.line(canvas, (margin, ys), (canvas.shape[1], ys), (0, 255, 255), 1)
        cv2.putText(canvas, str(y), (0, ys + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 0), 1)
    return canvas


# --------------------------------------------------------------------------- commands


@app.command()
def seed(
    photos: Annotated[
        list[str] | None, typer.Argument(help="Photos (path or unique part).")
    ] = None,
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Every table photo of a source.")
    ] = None,
    method: Annotated[
        str,
        typer.Option(help="auto (detector if available), detector, simple, or both (union)."),
    ] = "auto",
    refine: Annotated[
        bool, typer.Option(help="Re-fit every proposal by segmenting the card.")
    ] = True,
    how: HowOpt = "grabcut",
    force: Annotated[
        bool,
        typer.Option(
            help="Replace photos already annotated too (reviewed or not): their cards, "
            "attributes, partial flags and notes are lost."
        ),
    ] = False,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Propose cards for photos not annotated yet (marked not reviewed). A photo that cannot be
    read is said in one line and the others are still seeded (exit code 2)."""
    store = Store(annotations, data)
    rels = [store.resolve(p) for p in photos or []]
    for src in source or []:
        paths = [r["path"] for r in _tables_rows(store.data) if r["source"] == src]
        if not paths:
            known = sorted({r["source"] for r in _tables_rows(store.data)})
            raise typer.BadParameter(
                f"no table photos of {src!r} in tables.csv; sources: {', '.join(known)}",
                param_hint="'--source'",
            )
        rels += paths
    if not rels:
        raise typer.BadParameter("name photos or --source")
    if method not in ("auto", "detector", "simple", "both"):
        raise typer.BadParameter("method must be auto, detector, simple or both")
    finders = [simple_find_cards]
    if method in ("auto", "detector", "both"):
        try:
            import vision.detect  # noqa: F401

            finders = [detector_find_cards] + (finders if method == "both" else [])
        except ImportError:
            if method in ("detector", "both"):
                raise typer.BadParameter("vision.detect is not available") from None
    failed = 0
    for rel in dict.fromkeys(rels):
        store.forget(source_of(rel))  # another process may have reviewed it meanwhile
        old = store.get(rel)
        if old is not None and not force:
            # Edits of a photo not yet reviewed (a card removed, attributes set) are work too:
            # seeding again would drop them without a word.
            what = "reviewed" if old.reviewed else "annotated, not reviewed"
            typer.echo(f"skip {rel} ({what}; --force replaces its cards and labels)")
            continue
        try:
            image = load_image(store.data / rel)
        except (SetVisionError, OSError) as error:  # one photo must not stop the others
            typer.echo(f"label.py: error: {error}", err=True)
            failed += 1
            continue
        quads: list[npt.NDArray[np.float64]] = []
        for finder in finders:
            try:
                proposals = finder(image)
            except Exception as exc:  # the detector is work in progress; keep labelling
                typer.echo(f"warning: {finder.__name__} failed on {rel}: {exc!r}", err=True)
                proposals = []
            for q in proposals:
                if all(polygon_iou(q, k) < 0.5 for k in quads):
                    quads.append(q)
        # A proposal mostly inside a larger one is a symbol (or an inner outline): drop it.
        quads = _drop_nested(quads)
        if refine:
            quads = _drop_nested([refine_quad(image, q, how) for q in quads])
        cards = tuple(CardTruth(corners=q) for q in quads)
        h, w = image.shape[:2]
        store.put(PhotoTruth(path=rel, width=w, height=h, cards=cards, source=source_of(rel)))
        names = "+".join(f.__name__ for f in finders)
        typer.echo(f"{rel}: {len(cards)} cards ({names}{', refined' if refine else ''})")
    if failed:
        raise typer.Exit(2)


@app.command()
def review(
    photos: Annotated[list[str], typer.Argument(help="Photos (path or unique part).")],
    out: Annotated[Path, typer.Option(help="Folder for the sheets.")] = DEFAULT_OUT,
    max_side: Annotated[int, typer.Option(help="Overview size in pixels.", min=200)] = 1200,
    corners: Annotated[bool, typer.Option(help="Also write the corner sheet.")] = True,
    detections: Annotated[bool, typer.Option(help="Overlay vision.detect output in grey.")] = False,
    combined: Annotated[
        bool, typer.Option(help="Also write one sheet with the overview and the corners.")
    ] = True,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Render review sheets (overview with grid, magnified corners) to OUT."""
    store = Store(annotations, data)
    _sheet_folder(out)
    for name in photos:
        rel = store.resolve(name)
        photo = store.get(rel)
        cards = list(photo.cards) if photo else []
        image = load_image(store.data / rel)
        extra = detector_find_cards(image) if detections else None
        stem = rel.replace("/", "__").rsplit(".", 1)[0]
        over = out / f"{stem}.overview.png"
        cv2.imwrite(str(over), render_overview(image, cards, max_side, extra))
        msg = f"{rel}: {len(cards)} cards, reviewed={photo.reviewed if photo else False}\n  {over}"
        if combined:
            left = render_overview(image, cards, 900, extra)
            right = render_corners(image, cards, tile=112) if cards else left[:10, :10] * 0 + 255
            height = max(left.shape[0], right.shape[0])
            pad = [
                cv2.copyMakeBorder(
                    x, 0, height - x.shape[0], 0, 8, cv2.BORDER_CONSTANT, value=(255, 255, 255)
                )
                for x in (left, right)
            ]
            sheet = out / f"{stem}.sheet.png"
            cv2.imwrite(str(sheet), np.hstack(pad))
            msg += f"\n  {sheet}"
        if corners and cards:
            sheet = out / f"{stem}.corners.png"
            cv2.imwrite(str(sheet), render_corners(image, cards))
            msg += f"\n  {sheet}"
        typer.echo(msg)


@app.command(context_settings=NUMBERS)
def crop(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    x0: float,
    y0: float,
    x1: float,
    y1: float,
    size: Annotated[
        int, typer.Option(help="Output size (longer side) in pixels.", min=100, max=4000)
    ] = 900,
    show_cards: Annotated[bool, typer.Option(help="Draw annotated cards.")] = True,
    out: Annotated[Path, typer.Option(help="Folder for the image.")] = DEFAULT_OUT,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Magnify a region (photo pixels) with a fine coordinate grid, to read corner positions."""
    if not np.isfinite([x0, y0, x1, y1]).all() or x1 <= x0 or y1 <= y0:
        raise typer.BadParameter(
            f"expected a region X0 Y0 X1 Y1 with X0 < X1 and Y0 < Y1, got {x0} {y0} {x1} {y1}"
        )
    store = Store(annotations, data)
    rel = store.resolve(photo)
    image = load_image(store.data / rel)
    h, w = image.shape[:2]
    if x1 <= 0 or y1 <= 0 or x0 >= w or y0 >= h:
        raise typer.BadParameter(
            f"the region {x0:g} {y0:g} {x1:g} {y1:g} lies outside the photo ({w} x {h} px)"
        )
    past = x0 < 0 or y0 < 0 or x1 > w or y1 > h
    entry = store.get(rel)
    if show_cards and entry is not None:
        image = image.copy()
        for i, card in enumerate(entry.cards):
            pts = np.round(card.corners * 16).astype(np.int32)
            cv2.polylines(image, [pts], True, _PALETTE[i % len(_PALETTE)], 1, cv2.LINE_AA, shift=4)
    _sheet_folder(out)
    stem = rel.replace("/", "__").rsplit(".", 1)[0]
    path = out / f"{stem}.crop_{int(x0)}_{int(y0)}_{int(x1)}_{int(y1)}.png"
    cv2.imwrite(str(path), render_crop(image, (x0, y0, x1, y1), size))
    typer.echo(f"{path}" + (f" (the region runs past the photo's {w} x {h} px)" if past else ""))


def _sheet_folder(out: Path) -> None:
    """Make the folder for review images, or fail in one line (a file there, no permission)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        where = next((p for p in (out, *out.parents) if p.exists()), out)
        raise typer.BadParameter(f"{where} is a file, not a folder", param_hint="'--out'") from None
    except OSError as error:
        raise typer.BadParameter(
            f"cannot make {out} ({error.strerror or error})", param_hint="'--out'"
        ) from None


def _edit_cards(store: Store, photo: PhotoTruth, cards: list[CardTruth], what: str) -> None:
    store.put(_replace(photo, cards=tuple(cards), reviewed=False))
    typer.echo(f"{photo.path}: {what}; {len(cards)} cards (review again, then mark-reviewed)")


@app.command("set-card", context_settings=NUMBERS)
def set_card(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    index: int,
    coords: Annotated[list[float], typer.Argument(help="x1 y1 x2 y2 x3 y3 x4 y4, any order.")],
    snap: Annotated[bool, typer.Option(help="Snap the sides to the paper edges.")] = False,
    refine: Annotated[bool, typer.Option(help="Re-fit by segmenting the card.")] = False,
    how: HowOpt = "grabcut",
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Replace card INDEX's corners."""
    store = Store(annotations, data)
    entry = _photo_or_fail(store, photo)
    _index_or_fail(entry, index)
    quad = _quad_from_numbers(coords)
    _on_photo_or_fail(quad, entry)
    if refine:
        quad = refine_quad(load_image(store.data / entry.path), quad, how)
    elif snap:
        quad = snap_quad(load_image(store.data / entry.path), quad)
    cards = list(entry.cards)
    old = cards[index]
    cards[index] = CardTruth(corners=quad, partial=old.partial, attributes=old.attributes)
    _edit_cards(store, entry, cards, f"card {index} set")


@app.command("add-card", context_settings=NUMBERS)
def add_card(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    coords: Annotated[list[float], typer.Argument(help="x1 y1 x2 y2 x3 y3 x4 y4, any order.")],
    snap: Annotated[bool, typer.Option(help="Snap the sides to the paper edges.")] = False,
    refine: Annotated[bool, typer.Option(help="Re-fit by segmenting the card.")] = False,
    how: HowOpt = "grabcut",
    partial: Annotated[bool, typer.Option(help="Cut by the frame or mostly covered.")] = False,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Add a card (creates the photo's entry if needed)."""
    store = Store(annotations, data)
    rel = store.resolve(photo)
    entry = store.get(rel)
    if entry is None:
        image = load_image(store.data / rel)
        entry = PhotoTruth(rel, image.shape[1], image.shape[0], source=source_of(rel))
    quad = _quad_from_numbers(coords)
    _on_photo_or_fail(quad, entry)
    if refine:
        quad = refine_quad(load_image(store.data / rel), quad, how)
    elif snap:
        quad = snap_quad(load_image(store.data / rel), quad)
    for i, card in enumerate(entry.cards):
        if polygon_iou(card.corners, quad) > 0.5:
            typer.echo(f"warning: overlaps card {i} (IoU {polygon_iou(card.corners, quad):.2f})")
    cards = [*entry.cards, CardTruth(corners=quad, partial=partial)]
    _edit_cards(store, entry, cards, f"card {len(cards) - 1} added")


@app.command("remove-card")
def remove_card(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    indices: Annotated[list[int], typer.Argument(help="Card indices to remove.")],
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Remove cards (indices as shown in the current review sheet)."""
    store = Store(annotations, data)
    entry = _photo_or_fail(store, photo)
    for i in indices:
        _index_or_fail(entry, i)
    cards = [c for i, c in enumerate(entry.cards) if i not in set(indices)]
    _edit_cards(store, entry, cards, f"removed {sorted(set(indices))}")


def _refit_cards(
    store: Store,
    photo: str,
    indices: list[int] | None,
    verb: str,
    fit: Any,
) -> None:
    """Replace the chosen cards' corners (default: all) by ``fit(image, corners)``, keeping
    their partial flag and attributes, and report how far each moved."""
    entry = _photo_or_fail(store, photo)
    image = load_image(store.data / entry.path)
    chosen = indices if indices else list(range(len(entry.cards)))
    cards = list(entry.cards)
    for i in chosen:
        _index_or_fail(entry, i)
        old = cards[i]
        new = fit(image, old.corners)
        typer.echo(f"card {i}: moved up to {_moved(old.corners, new):.1f} px")
        cards[i] = CardTruth(corners=new, partial=old.partial, attributes=old.attributes)
    _edit_cards(store, entry, cards, f"{verb} {chosen}")


@app.command("snap")
def snap_cmd(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    indices: Annotated[list[int] | None, typer.Argument(help="Cards (default: all).")] = None,
    radius: Annotated[float | None, typer.Option(help="Search radius in pixels.")] = None,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Snap cards' sides to the paper edges nearby (refines hand-placed corners)."""
    _refit_cards(
        Store(annotations, data), photo, indices, "snapped",
        lambda image, corners: snap_quad(image, corners, radius=radius),
    )  # fmt: skip


@app.command("add-rects", context_settings=NUMBERS)
def add_rects(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    boxes: Annotated[list[float], typer.Argument(help="x0 y0 x1 y1 per card (rough boxes).")],
    how: HowOpt = "grabcut",
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Add cards from rough axis-aligned boxes, each re-fitted by segmentation."""
    if not boxes or len(boxes) % 4:
        raise typer.BadParameter(f"expected 4 numbers per box, got {len(boxes)}")
    store = Store(annotations, data)
    rel = store.resolve(photo)
    image = load_image(store.data / rel)
    entry = store.get(rel) or PhotoTruth(rel, image.shape[1], image.shape[0], source=source_of(rel))
    cards = list(entry.cards)
    for x0, y0, x1, y1 in np.array(boxes, dtype=np.float64).reshape(-1, 4):
        rough = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        cards.append(CardTruth(corners=refine_quad(image, rough, how)))
    _edit_cards(store, entry, cards, f"added {len(boxes) // 4} cards")


@app.command("refine")
def refine_cmd(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    indices: Annotated[list[int] | None, typer.Argument(help="Cards (default: all).")] = None,
    how: HowOpt = "grabcut",
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Re-fit cards by segmenting each around its current outline, then snap the sides."""
    _refit_cards(
        Store(annotations, data), photo, indices, "refined",
        lambda image, corners: refine_quad(image, corners, how),
    )  # fmt: skip


@app.command("copy-from")
def copy_from(
    photo: Annotated[str, typer.Argument(help="Photo to label (path or unique part).")],
    other: Annotated[str, typer.Argument(help="Labelled photo of the same scene/camera.")],
    how: HowOpt = "grabcut",
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Seed a photo with another photo's cards (fixed camera), each re-fitted."""
    store = Store(annotations, data)
    src = _photo_or_fail(store, other)
    rel = store.resolve(photo)
    image = load_image(store.data / rel)
    h, w = image.shape[:2]
    sx, sy = w / src.width, h / src.height
    cards = tuple(
        CardTruth(corners=refine_quad(image, c.corners * [sx, sy], how), partial=c.partial)
        for c in src.cards
    )
    store.put(PhotoTruth(rel, w, h, cards, reviewed=False, source=source_of(rel)))
    typer.echo(f"{rel}: {len(cards)} cards from {src.path}")


@app.command("mark-partial")
def mark_partial(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    indices: Annotated[list[int], typer.Argument(help="Card indices.")],
    unset: Annotated[bool, typer.Option("--unset", help="Clear the flag instead.")] = False,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Flag cards as partial (cut by the frame edge or mostly covered)."""
    store = Store(annotations, data)
    entry = _photo_or_fail(store, photo)
    cards = list(entry.cards)
    for i in indices:
        _index_or_fail(entry, i)
        c = cards[i]
        cards[i] = CardTruth(corners=c.corners, partial=not unset, attributes=c.attributes)
    store.put(_replace(entry, cards=tuple(cards)))
    typer.echo(f"{entry.path}: partial={not unset} for {indices}")


@app.command("set-attrs")
def set_attrs(
    photo: Annotated[str, typer.Argument(help="Photo (path or unique part).")],
    index: int,
    text: Annotated[str, typer.Argument(help='Card text, e.g. "2 red striped diamonds".')],
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Record a card's attributes (parsed with vision.cards.parse_card)."""
    from vision.cards import parse_card

    try:
        card = parse_card(text)
    except ValueError as error:  # a typo was a ValueError traceback
        raise typer.BadParameter(str(error), param_hint="'TEXT'") from None
    store = Store(annotations, data)
    entry = _photo_or_fail(store, photo)
    _index_or_fail(entry, index)
    attrs: dict[str, Any] = {}
    for key in ATTRIBUTES:
        value = getattr(card, key)
        value = getattr(value, "value", value)  # an Enum (Count too) or a plain value
        attrs[key] = int(value) if key == "count" else str(value)
    cards = list(entry.cards)
    old = cards[index]
    cards[index] = CardTruth(corners=old.corners, partial=old.partial, attributes=attrs)
    store.put(_replace(entry, cards=tuple(cards)))
    typer.echo(f"{entry.path}: card {index} = {attrs}")


@app.command("mark-reviewed")
def mark_reviewed(
    photos: Annotated[list[str], typer.Argument(help="Photos (path or unique part).")],
    note: Annotated[str | None, typer.Option(help="Note to store with the photo.")] = None,
    unset: Annotated[bool, typer.Option("--unset", help="Clear the flag instead.")] = False,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Flag photos as reviewed by eye (every card's corners checked)."""
    store = Store(annotations, data)
    for name in photos:
        rel = store.resolve(name)
        entry = store.get(rel)
        if entry is None:  # a photo with no card at all (a negative)
            image = load_image(store.data / rel)
            entry = PhotoTruth(rel, image.shape[1], image.shape[0], source=source_of(rel))
        changes: dict[str, Any] = {"reviewed": not unset}
        if note is not None:
            changes["note"] = note
        store.put(_replace(entry, **changes))
        typer.echo(f"{rel}: reviewed={not unset}, {len(entry.cards)} cards")
        if note is not None and entry.note and entry.note != note:  # said, so never lost
            typer.echo(f"  note replaced; it was: {entry.note}")


DatasetOutOpt = Annotated[
    Path, typer.Option("--out", "-o", metavar="DATASET_DIR", help="The dataset folder.")
]


@app.command("to-dataset")
def to_dataset(
    sources: Annotated[list[str], typer.Argument(help="Sources (annotation files' names).")],
    out: DatasetOutOpt,
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Write sources' annotations as a setvision label dataset (COCO, Label Studio tasks), to
    review them in its page or in Label Studio; photos already there and checked are kept."""
    from vision.dataset.project import photos_from_truths
    from vision.dataset.records import merge_photos
    from vision.dataset.store import dataset_folder, update_photos

    store = Store(annotations, data, existing=True)
    missing = [s for s in sources if not (annotations / f"{s}.json").is_file()]
    if missing:
        raise typer.BadParameter(
            f"no annotations of {', '.join(missing)} (have: {', '.join(store.all_sources())})",
            param_hint="'SOURCES'",
        )
    truths = [p for s in sources for p in sorted(store.source(s).values(), key=lambda p: p.path)]
    folder = dataset_folder(out, create=True)
    photos = photos_from_truths(truths, folder, store.data)
    update_photos(folder, lambda old: merge_photos(old, photos, replace_unchecked=True)[0])
    typer.echo(f"{len(photos)} photos of {', '.join(sources)} written to {folder}")


@app.command("from-dataset")
def from_dataset(
    dataset: Annotated[Path, typer.Argument(metavar="DATASET_DIR", help="The dataset folder.")],
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    data: DataOpt = None,
) -> None:
    """Write a dataset's photos that lie in the shared datasets back into the annotation files
    (one per source), each replacing that photo's entry; ``reviewed`` is the photo's check."""
    from vision.dataset.project import truths_from_photos
    from vision.dataset.store import dataset_folder, load_photos

    store = Store(annotations, data)
    folder = dataset_folder(dataset, create=False)
    written = 0
    for truth in truths_from_photos(load_photos(folder), folder, store.data, source=""):
        if Path(truth.path).is_absolute():  # said, not dropped in silence
            typer.echo(f"label.py: {truth.path} is not in {store.data}: left out", err=True)
            continue
        store.put(truth)
        written += 1
    typer.echo(f"{written} photos written to {annotations}")


@app.command()
def status(
    annotations: AnnotationsOpt = DEFAULT_ANNOTATIONS,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every photo.")] = False,
    data: DataOpt = None,
) -> None:
    """Photos and cards per source: all of them, and those in reviewed photos (the ones
    training and evaluation read)."""
    store = Store(annotations, data, existing=True)
    total = [0, 0, 0, 0, 0]
    for src in store.all_sources():
        photos = list(store.source(src).values())
        rev = [p for p in photos if p.reviewed]
        counts = (
            len(photos),
            len(rev),
            sum(len(p.cards) for p in photos),
            sum(len(p.cards) for p in rev),
            sum(c.partial for p in rev for c in p.cards),
        )
        typer.echo(_status_line(src, counts))
        for i, v in enumerate(counts):
            total[i] += v
        if verbose:
            for p in sorted(photos, key=lambda p: p.path):
                typer.echo(f"    {'R' if p.reviewed else '-'} {len(p.cards):3d}  {p.path}")
    typer.echo(_status_line("total", tuple(total)))


def _status_line(name: str, counts: tuple[int, ...]) -> str:
    photos, reviewed, cards, reviewed_cards, partial = counts
    return (
        f"{name:12s} photos {photos:3d}  reviewed {reviewed:3d}  cards {cards:4d} "
        f"(in reviewed photos {reviewed_cards}, partial {partial})"
    )


if __name__ == "__main__":
    from vision.cli import run_app

    try:
        sys.exit(run_app(app, "label.py"))
    except OSError as error:  # the file system said no (a full disk, a permission): one line
        print(f"label.py: error: {error}", file=sys.stderr)
        sys.exit(1)
