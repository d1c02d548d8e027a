"""Synthetic tables with exact ground truth, and training crops through the real warp pipeline.

Part of :mod:`vision.render` (import the public names from there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import Card
from vision.render_background import make_background
from vision.render_camera import _noise_tile, _soft_blur, apply_camera, jitter_corners
from vision.render_card import CardStyle, card_size_for_width, render_card_and_mask, sample_style
from vision.render_clutter import CLUTTER_KINDS, clutter_object, clutter_width, draw_sheet
from vision.warp import BALANCE_VERSION, CARD_ASPECT, CROP_HEIGHT, CROP_WIDTH, warp_cards

__all__ = [
    "canonical_corners",
    "render_table",
    "render_training_batch",
    "render_training_crop",
]


def _quad(w: int, h: int) -> npt.NDArray[np.float32]:
    """Outer boundary of a (h, w) image in OpenCV pixel-centre coordinates, TL, TR, BR, BL."""
    return np.array(
        [[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]], np.float32
    )


def _apply_h(hom: npt.NDArray[np.float64], pts: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return (
        cv2.perspectiveTransform(pts.reshape(-1, 1, 2).astype(np.float64), hom)
        .reshape(pts.shape)
        .astype(np.float32)
    )


def canonical_corners(quad: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Order a card's corners TL, TR, BR, BL so the TL-TR short edge is the upper one in the image.

    A SET card looks the same turned by 180 degrees, so of the card's two portrait orderings this
    keeps the one whose top edge midpoint has the smaller ``y + 0.05 x`` (for a card lying near
    horizontal, the left short edge): the same rule as :func:`vision.detect.order_corners`, so
    rendered ground truth and detections can be compared corner by corner.

    Args:
        quad: (4, 2) float32, the card's own TL, TR, BR, BL in portrait (any rotation).

    Returns:
        (4, 2) float32.
    """
    q = np.asarray(quad, np.float32)
    key = q[:, 1] + 0.05 * q[:, 0]
    return q if key[0] + key[1] <= key[2] + key[3] else q[[2, 3, 0, 1]]


def _composite(
    frame: npt.NDArray[np.uint8],
    image: npt.NDArray[np.uint8],
    mask: npt.NDArray[np.float32],
    hom: npt.NDArray[np.float64],
    shadow: float = 0.0,
    shadow_offset: tuple[float, float] = (0.0, 0.0),
) -> None:
    """Warp ``image`` with alpha ``mask`` by ``hom`` onto ``frame`` (uint8, in place, in an ROI).

    A soft drop shadow of strength ``shadow`` (0..1), moved by ``shadow_offset`` pixels, darkens
    the frame under the object first.
    """
    fh, fw = frame.shape[:2]
    h, w = mask.shape
    quad = _apply_h(hom, _quad(w, h))
    pad = 4 + int(abs(shadow_offset[0]) + abs(shadow_offset[1])) + (int(0.04 * w) if shadow else 0)
    x0 = max(int(np.floor(quad[:, 0].min())) - pad, 0)
    y0 = max(int(np.floor(quad[:, 1].min())) - pad, 0)
    x1 = min(int(np.ceil(quad[:, 0].max())) + pad + 1, fw)
    y1 = min(int(np.ceil(quad[:, 1].max())) + pad + 1, fh)
    if x1 <= x0 or y1 <= y0:
        return
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    local = shift @ hom
    size = (x1 - x0, y1 - y0)
    roi = frame[y0:y1, x0:x1]
    # One warp of the premultiplied image plus alpha (no dark fringe at the edges).
    alpha8 = (mask * 255.0 + 0.5).astype(np.uint8)
    premult = cv2.multiply(image, cv2.merge([alpha8, alpha8, alpha8]), scale=1 / 255)
    rgba = cv2.warpPerspective(cv2.merge([premult, alpha8]), local, size, flags=cv2.INTER_LINEAR)
    a8 = np.ascontiguousarray(rgba[:, :, 3])
    if shadow > 0:
        move = np.array([[1, 0, shadow_offset[0]], [0, 1, shadow_offset[1]]], np.float32)
        sh = cv2.warpAffine(a8, move, size)
        sh = _soft_blur(sh, max(0.015 * max(size), 1.0))
        keep = cv2.convertScaleAbs(sh, alpha=-float(shadow), beta=255.0)
        roi[...] = cv2.multiply(roi, cv2.merge([keep, keep, keep]), scale=1 / 255)
    inv = 255 - a8
    under = cv2.multiply(roi, cv2.merge([inv, inv, inv]), scale=1 / 255)
    roi[...] = cv2.add(under, np.ascontiguousarray(rgba[:, :, :3]))


def _distractor(
    rng: np.random.Generator, kind: str, width: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """A non-card object (image, alpha): a sticky note, a phone-like dark rectangle, a white
    paper (receipt or envelope: white like a card but of another shape, with grey print) or a
    card box (a coloured box of about a card's shape, with a white label and coloured marks)."""
    if kind == "box":
        w, h = width, int(width * rng.uniform(1.45, 1.6))
        img = np.empty((h, w, 3), np.float32)
        img[:] = rng.uniform(40, 200, 3)
        side = max(int(0.08 * w), 1)  # the box's side face, in shade
        img[:, w - side :] *= 0.6
        x0, y0, x1, y1 = int(0.15 * w), int(0.2 * h), int(0.75 * w), int(0.55 * h)
        img[y0:y1, x0:x1] = rng.uniform(225, 250)
        for j in range(3):
            mark = tuple(float(v) for v in rng.uniform(30, 220, 3))
            cy = int(y0 + (j + 1) * (y1 - y0) / 4)
            axes = (int((x1 - x0) * 0.3), int((y1 - y0) * 0.08))
            cv2.ellipse(img, ((x0 + x1) // 2, cy), axes, 0, 0, 360, mark, -1, cv2.LINE_AA)
        return np.clip(img, 0, 255).astype(np.uint8), np.ones((h, w), np.float32)
    if kind == "paper":
        w = width
        h = int(w * (rng.uniform(1.8, 2.6) if rng.random() < 0.5 else rng.uniform(0.6, 0.75)))
        img = np.full((h, w, 3), rng.uniform(225, 250), np.float32)
        for y in range(int(0.1 * h), int(0.9 * h), max(h // 18, 3)):
            x1 = int(w * rng.uniform(0.4, 0.9))
            img[y : y + max(h // 60, 1), int(0.1 * w) : x1] = rng.uniform(90, 160)
        return np.clip(img, 0, 255).astype(np.uint8), np.ones((h, w), np.float32)
    if kind == "note":
        w = h = width
        colour = np.array([[80, 230, 250], [200, 150, 255], [250, 200, 120], [140, 240, 160]][
            int(rng.integers(4))], np.float32)  # fmt: skip
        yy = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
        img = colour[None, None, :] * (1.0 - 0.12 * yy) * np.ones((h, w, 1), np.float32)
        mask = np.ones((h, w), np.float32)
        return np.clip(img, 0, 255).astype(np.uint8), mask
    w, h = width, int(width * rng.uniform(1.9, 2.2))
    img = np.full((h, w, 3), rng.uniform(10, 35), np.float32)
    inset = max(w // 18, 1)
    img[inset * 3 : h - inset * 3, inset : w - inset] += rng.uniform(5, 25)  # the screen
    xx = np.linspace(0, 1, w, dtype=np.float32)[None, :]
    yy = np.linspace(0, 1, h, dtype=np.float32)[:, None]
    img += (60 * np.clip(1 - np.abs(xx + yy - rng.uniform(0.5, 1.5)) * 6, 0, 1))[:, :, None]
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (0, 0), (w - 1, h - 1), 255, -1)
    r = max(w // 8, 2)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        sx, sy = (0 if cx == r else w - r), (0 if cy == r else h - r)
        mask[sy : sy + r, sx : sx + r] = 0
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8), mask.astype(np.float32) / 255.0


def _fingertip(
    scene: npt.NDArray[np.uint8],
    corner: npt.NDArray[np.float32],
    centre: npt.NDArray[np.float32],
    card_w: float,
    rng: np.random.Generator,
) -> None:
    """Draw a skin-coloured fingertip (in place) reaching over ``corner`` toward the centre."""
    tone = np.array([[150, 175, 225], [110, 140, 195], [70, 100, 150], [45, 65, 100]][
        int(rng.integers(4))], np.float64) * rng.uniform(0.85, 1.1)  # fmt: skip
    direction = (centre - corner) / max(float(np.linalg.norm(centre - corner)), 1e-6)
    tip = corner + direction * card_w * rng.uniform(0.1, 0.2)
    half_w = card_w * rng.uniform(0.12, 0.17)
    angle = float(np.degrees(np.arctan2(direction[1], direction[0])))
    back = tip - direction * card_w * 0.6
    centre_px = tuple(int(round(v * 16)) for v in (tip + back) / 2)
    axes = (int(round(card_w * 0.3 * 16)), int(round(half_w * 16)))
    cv2.ellipse(scene, centre_px, axes, angle, 0, 360, tuple(tone), -1, cv2.LINE_AA, 4)
    nail = tip - direction * half_w * 0.9
    cv2.ellipse(scene, tuple(int(round(v * 16)) for v in nail),
                (int(round(half_w * 0.7 * 16)), int(round(half_w * 0.55 * 16))), angle, 0, 360,
                tuple(np.minimum(tone * 1.12 + 15, 255)), -1, cv2.LINE_AA, 4)  # fmt: skip


@dataclass(frozen=True)
class _Placement:
    centre: tuple[float, float]
    angle: float  # radians, rotation of the portrait card on the table plane


def _layout(
    n: int, rng: np.random.Generator, layout: str, touching: bool, spacing: float | None = None
) -> list[_Placement]:
    """Card centres and angles on the table plane, in units of the card width (``spacing``:
    see :func:`render_table`)."""
    ch = 1.0 / CARD_ASPECT
    if layout == "grid":
        cols = int(np.ceil(np.sqrt(n * 4 / 3))) if n > 3 else n
        cols = {12: 4, 15: 5, 9: 3, 18: 6, 21: 7}.get(n, cols)
        landscape = rng.random() < 0.25
        gap = 0.0 if touching else rng.uniform(0.08, 0.35)
        cw, chh = (ch, 1.0) if landscape else (1.0, ch)
        base = np.pi / 2 if landscape else 0.0
        out = []
        for i in range(n):
            r, c = divmod(i, cols)
            x = c * (cw + gap) + (0 if touching else rng.normal(0, 0.03))
            y = r * (chh + gap) + (0 if touching else rng.normal(0, 0.03))
            ang = base + (0 if touching else rng.normal(0, 0.04)) + np.pi * rng.integers(2)
            out.append(_Placement((float(x), float(y)), float(ang)))
        return out
    if layout != "loose":
        raise ValueError(f"layout: expected 'grid' or 'loose', got {layout!r}")
    out: list[_Placement] = []
    side = np.sqrt(n) * 1.55
    radius = 0.5 * np.hypot(1.0, ch)
    if spacing is None:
        spacing = 0.82 if touching else 1.02
    min_dist = 2 * radius * spacing
    for _ in range(n):
        for _attempt in range(400):
            p = rng.uniform(0, side, 2) * np.array([1.3, 1.0])
            if all(np.hypot(*(p - q.centre)) >= min_dist for q in out):
                break
            side *= 1.003
        out.append(_Placement((float(p[0]), float(p[1])), float(rng.uniform(0, 2 * np.pi))))
    return out


#: Distance of the pinhole camera of ``render_table(tilt_deg=...)`` from the cards' centre, in
#: half-spans of the layout: the layout fills about 50 degrees of view, a phone's main camera.
_PINHOLE_DISTANCE: Final = 2.2


def _camera_homography(
    pts: npt.NDArray[np.float32],
    size: tuple[int, int],
    rng: np.random.Generator,
    tilt: float,
    margin: float,
    tilt_deg: float | None = None,
    turn: float | None = None,
) -> npt.NDArray[np.float64]:
    """Plane -> frame homography: rotation, tilt (foreshortening), then fit ``pts`` in frame.

    ``tilt_deg`` replaces the random keystone of ``tilt`` by a pinhole camera looking at the
    layout ``tilt_deg`` degrees away from straight down; ``turn`` (radians) replaces the random
    rotation. The random numbers are drawn either way, so the rest of the scene stays the same.
    """
    W, H = size
    centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
    span = float(np.max(pts.max(axis=0) - pts.min(axis=0)))
    rot = rng.uniform(-0.25, 0.25)
    rot = rot if turn is None else turn
    c, s = np.cos(rot), np.sin(rot)
    # Foreshortening: a camera looking down at an angle shrinks the far (top) side.
    k = tilt * rng.uniform(0.5, 1.0)
    src = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float32)
    skew = rng.uniform(-0.3, 0.3) * k
    dst = np.array([[-1 + k + skew, -1 + 0.4 * k], [1 - k + skew, -1 + 0.4 * k], [1, 1], [-1, 1]],
                   np.float32)  # fmt: skip
    persp = cv2.getPerspectiveTransform(src, dst)
    if tilt_deg is not None:  # (x, y) on the table -> (x, y cos t, D - y sin t): far side up
        t = np.radians(tilt_deg)
        persp = np.array([[1, 0, 0], [0, np.cos(t), 0], [0, -np.sin(t), _PINHOLE_DISTANCE]])
    norm = np.array([[c / span * 2, -s / span * 2, 0], [s / span * 2, c / span * 2, 0],
                     [0, 0, 1]], np.float64) @ np.array(
        [[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]], np.float64)  # fmt: skip
    hom = persp @ norm
    q = _apply_h(hom, pts)
    lo, hi = q.min(axis=0), q.max(axis=0)
    scale = min(W * (1 - 2 * margin) / (hi[0] - lo[0]), H * (1 - 2 * margin) / (hi[1] - lo[1]))
    free = np.array([W, H]) - (hi - lo) * scale
    off = free * rng.uniform(0.3, 0.7, 2) - lo * scale
    fit = np.array([[scale, 0, off[0]], [0, scale, off[1]], [0, 0, 1]], np.float64)
    return fit @ hom


def render_table(
    cards: Sequence[Card],
    rng: np.random.Generator,
    background: str | None = "wood",
    size: tuple[int, int] = (1600, 1200),
    *,
    layout: str = "grid",
    style: CardStyle | None = None,
    tilt: float = 0.25,
    touching: bool = False,
    distractors: int = 0,
    strength: float = 0.4,
    margin: float = 0.08,
    tilt_deg: float | None = None,
    turn: float | None = None,
    distractor_kinds: Sequence[str] | None = None,
    fingers: int = 0,
    spacing: float | None = None,
    sheet: str | None = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """Render a photo of cards lying on a table, with exact corners.

    Args:
        cards: the cards to lay out (any number >= 1).
        rng: random generator.
        background: one of :data:`vision.render.BACKGROUNDS`, or None for a random one.
        size: frame (width, height) in pixels.
        layout: ``"grid"`` (rows and columns, small jitter, sometimes all landscape) or
            ``"loose"`` (random positions and angles, no overlap).
        style: deck edition shared by all cards; ``sample_style(rng)`` when None.
        tilt: 0 looks straight down; up to about 0.5 for a steep angle.
        touching: let cards touch (grid without gaps; loose layout slightly overlapping, later
            cards on top; corners are always the whole card's, hidden parts included).
        distractors: number of non-card objects (sticky notes, phones, white receipts or
            envelopes, see ``distractor_kinds``) placed beside the cards.
        strength: camera effects strength passed to :func:`apply_camera` (0 for none).
        margin: minimum free border around the cards, fraction of the frame; a negative margin
            lets cards run off the frame edge (their corners then lie outside the frame).
        tilt_deg: a pinhole camera looking this many degrees away from straight down (true
            perspective: the far side shrinks and the cards are foreshortened by about its
            cosine), replacing ``tilt``; None keeps ``tilt``.
        turn: the layout's rotation in the frame in radians; None draws it in +-0.25.
        distractor_kinds: the kinds drawn from for ``distractors``: ``"note"``, ``"phone"``,
            ``"paper"``, ``"box"`` (a card box), or one of
            :data:`vision.render_clutter.CLUTTER_KINDS` (keyboard, laptop, mouse, cup,
            envelope); None means note, phone and paper.
        fingers: number of cards with a fingertip over one corner (the card is still whole in
            the ground truth).
        spacing: loose layout only: the least distance between two card centres, in card
            diagonals (None: 1.02, or 0.82 with ``touching``); under about 0.8 cards overlap
            more than at their corners, later cards on top.
        sheet: a paper sheet under the cards (:data:`vision.render_clutter.SHEET_KINDS`:
            plain, ruled, or a cell drawn round every card); None for none.

    The scene for a given ``rng`` state is the same whatever ``tilt_deg`` and ``turn`` are: only
    the camera changes.

    Returns:
        ``(frame, corners)``: (H, W, 3) uint8 BGR and (N, 4, 2) float32 corners of each card in
        ``cards`` order, TL, TR, BR, BL in portrait order (see :func:`canonical_corners`), in
        pixel-centre coordinates of the card's outer boundary.

    Raises:
        ValueError: for no cards or an unknown layout / background.
    """
    if len(cards) == 0:
        raise ValueError("cards: expected at least one card")
    W, H = int(size[0]), int(size[1])
    if distractors > 0:  # leave room beside the cards
        margin = max(margin, 0.18)
    style = style if style is not None else sample_style(rng)
    places = _layout(len(cards), rng, layout, touching, spacing)
    ch = 1.0 / CARD_ASPECT
    unit = np.array([[-0.5, -ch / 2], [0.5, -ch / 2], [0.5, ch / 2], [-0.5, ch / 2]], np.float32)
    plane_quads = []
    for p in places:
        c, s = np.cos(p.angle), np.sin(p.angle)
        rot = np.array([[c, -s], [s, c]], np.float32)
        plane_quads.append(unit @ rot.T + np.array(p.centre, np.float32))
    plane_quads_arr = np.array(plane_quads, np.float32)
    hom = _camera_homography(
        plane_quads_arr.reshape(-1, 2), (W, H), rng, tilt, margin, tilt_deg, turn
    )

    # Background: a texture laid on the plane, seen through the same camera.
    tex = make_background(background, rng, (W, H))
    lo, hi = plane_quads_arr.reshape(-1, 2).min(0), plane_quads_arr.reshape(-1, 2).max(0)
    ext = max(hi[0] - lo[0], hi[1] - lo[1]) * 1.8
    ctr = (lo + hi) / 2
    tex_to_plane = np.array([[ext / W, 0, ctr[0] - ext / 2], [0, ext / W * 1.0, ctr[1] - ext * H
                             / W / 2], [0, 0, 1]], np.float64)  # fmt: skip
    frame = cv2.warpPerspective(tex, hom @ tex_to_plane, (W, H), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REFLECT)  # fmt: skip
    if sheet is not None:
        draw_sheet(frame, hom, plane_quads_arr, sheet, rng)

    # Distractors in free space on the plane.
    placed = [(np.array(p.centre), 0.5 * np.hypot(1.0, ch)) for p in places]
    to_plane = np.linalg.inv(hom)
    for _ in range(distractors):
        kind = str(rng.choice(list(distractor_kinds or ("note", "phone", "paper"))))
        widths = {"note": rng.uniform(1.2, 1.45), "phone": rng.uniform(1.1, 1.35),
                  "paper": rng.uniform(1.0, 1.6)}  # fmt: skip
        if kind in CLUTTER_KINDS:
            obj_w = clutter_width(kind, rng)
            radius = 0.5 * obj_w * 1.2
        else:
            obj_w = rng.uniform(1.1, 1.2) if kind == "box" else widths[kind]  # same stream
            radius = 0.5 * obj_w * {"note": 1.42, "phone": 2.3, "paper": 2.9, "box": 1.9}[kind]
        for _try in range(200):
            at = (rng.uniform(0.02, 0.98, 2) * np.array([W, H])).astype(np.float32)
            pos = _apply_h(to_plane, at[None])[0].astype(np.float64)
            if all(np.hypot(*(pos - q)) > r + radius for q, r in placed):
                break
        else:
            continue
        placed.append((pos, radius))
        if kind in CLUTTER_KINDS:
            img, mask = clutter_object(rng, kind, 400)
        else:
            img, mask = _distractor(rng, kind, 200)
        a = rng.uniform(0, 2 * np.pi)
        c, s = np.cos(a), np.sin(a)
        sc = obj_w / img.shape[1]
        place = np.array([[c * sc, -s * sc, 0], [s * sc, c * sc, 0], [0, 0, 1]], np.float64)
        place[:2, 2] = pos - place[:2, :2] @ np.array([img.shape[1] / 2, img.shape[0] / 2])
        _composite(frame, img, mask, hom @ place, shadow=0.35, shadow_offset=(3.0, 4.0))

    # Cards, each rendered at about its size in the frame, with a soft drop shadow.
    corners = np.empty((len(cards), 4, 2), np.float32)
    light_dir = rng.uniform(-1, 1, 2)
    for i, (card, quad) in enumerate(zip(cards, plane_quads_arr, strict=True)):
        fq = _apply_h(hom, quad)
        px_w = max(np.linalg.norm(fq[1] - fq[0]), np.linalg.norm(fq[2] - fq[3]))
        cw, chh = card_size_for_width(px_w * 1.15)
        img, mask = render_card_and_mask(card, rng, style, (cw, chh))
        card_to_plane = cv2.getPerspectiveTransform(_quad(cw, chh), quad)
        card_hom = hom @ card_to_plane
        off = light_dir * 0.02 * px_w
        _composite(frame, img, mask, card_hom, shadow=rng.uniform(0.15, 0.35),
                   shadow_offset=(float(off[0]), float(off[1])))  # fmt: skip
        corners[i] = canonical_corners(_apply_h(card_hom, _quad(cw, chh)))
    for i in rng.choice(len(cards), min(fingers, len(cards)), replace=False) if fingers else ():
        px_w = float(np.linalg.norm(corners[i, 1] - corners[i, 0]))
        _fingertip(frame, corners[i, int(rng.integers(4))], corners[i].mean(axis=0), px_w, rng)
    out = frame
    if strength > 0:
        widths = np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
        unit = float(np.median(widths)) / CROP_WIDTH
        out = apply_camera(out, rng, strength, perspective=False, unit=unit)
    return out, corners


# ---------------------------------------------------------------------------------------------
# Training crops


def render_training_crop(
    card: Card,
    rng: np.random.Generator,
    style: CardStyle | None = None,
    strength: float | None = None,
    background: npt.NDArray[np.uint8] | None = None,
    balance_version: int = BALANCE_VERSION,
) -> npt.NDArray[np.uint8]:
    """One classifier input made the way real crops are made.

    Renders the card at a random resolution (55-230 px wide, so low-resolution webcam cards are
    covered), lays it in a small scene (table texture, sometimes a neighbouring card's edge) at a
    random perspective, photographs it with :func:`apply_camera`, then cuts it out with
    :func:`vision.warp.warp_cards` from corners moved by :func:`jitter_corners`, which also
    applies the same paper white balance as at run time.

    Args:
        card: the card.
        rng: random generator.
        style: deck edition; ``sample_style(rng)`` when None.
        strength: camera effects strength; uniform in 0.1..1 when None.
        background: (h, w, 3) uint8 BGR texture to cut the scene's surface from; a plain
            random colour with noise when None.
        balance_version: the white balance (:data:`vision.warp.BALANCE_SETTINGS`).

    Returns:
        (CROP_HEIGHT, CROP_WIDTH, 3) uint8 BGR crop (250 x 160), white balanced.
    """
    style = style if style is not None else sample_style(rng)
    s = float(rng.uniform(0.1, 1.0)) if strength is None else strength
    cw = float(np.exp(rng.uniform(np.log(55), np.log(230))))
    cw_i, ch_i = card_size_for_width(cw)
    img, mask = render_card_and_mask(card, rng, style, (cw_i, ch_i))
    sw, sh = int(cw_i * 1.3) + 8, int(ch_i * 1.22) + 8
    if background is not None:
        bh, bw = background.shape[:2]
        if bh >= sh and bw >= sw:
            y, x = int(rng.integers(bh - sh + 1)), int(rng.integers(bw - sw + 1))
            scene = background[y : y + sh, x : x + sw].copy()
        else:
            scene = cv2.resize(background, (sw, sh))
    else:
        plain = rng.uniform(10, 230, 3).astype(np.float32) + 4.0 * _noise_tile(rng, sh, sw)
        scene = np.clip(plain, 0, 255).astype(np.uint8)
    # Where the card lands: centred, rotated a little, with a random perspective.
    centre = np.array([sw / 2, sh / 2]) + rng.normal(0, 0.03, 2) * cw
    ang = rng.normal(0, 0.08)
    c, si = np.cos(ang), np.sin(ang)
    half = np.array([[-cw_i, -ch_i], [cw_i, -ch_i], [cw_i, ch_i], [-cw_i, ch_i]]) / 2
    dst = half @ np.array([[c, -si], [si, c]]).T + centre
    dst += rng.uniform(-1, 1, (4, 2)) * 0.09 * cw_i * rng.random()
    dst = dst.astype(np.float32)
    if rng.random() < 0.3:  # a neighbouring card's edge (same paper) beside this one
        axis = dst[1] - dst[0] if rng.random() < 0.5 else dst[3] - dst[0]
        shift = axis * rng.uniform(1.03, 1.2) * (1 if rng.random() < 0.5 else -1)
        nb = np.round((dst + shift) * 16).astype(np.int32)
        cv2.fillConvexPoly(scene, nb, tuple(float(v) for v in style.paper), cv2.LINE_AA, 4)
    card_hom = cv2.getPerspectiveTransform(_quad(cw_i, ch_i), dst)
    _composite(scene, img, mask, card_hom, shadow=rng.uniform(0.0, 0.3),
               shadow_offset=tuple(rng.normal(0, 0.02, 2) * cw_i))  # fmt: skip
    if rng.random() < 0.06:  # a fingertip holding the card at a corner (symbols stay visible)
        _fingertip(scene, dst[int(rng.integers(4))], dst.mean(axis=0), cw_i, rng)
    photo = apply_camera(scene, rng, s, perspective=False)
    quad = _apply_h(card_hom, _quad(cw_i, ch_i))
    if rng.random() < 0.5:  # detectors may return either of the two portrait orderings
        quad = quad[[2, 3, 0, 1]]
    # Detectors and hand-made crops frame the card a little loosely or tightly: scale the quad
    # about its centre (0.94 cuts into the border, 1.04 shows some table), then jitter corners.
    mid = quad.mean(axis=0)
    quad = (mid + (quad - mid) * rng.uniform(0.94, 1.04)).astype(np.float32)
    quad = jitter_corners(quad, rng)
    return warp_cards(photo, quad[None], balance_version=balance_version)[0]


def render_training_batch(
    cards: Sequence[Card],
    seed: int,
    *,
    strength: float | None = None,
    styles: int = 64,
    balance_version: int = BALANCE_VERSION,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Render one training crop per card (repeat cards in ``cards`` for more).

    Deterministic for a given ``seed``; use different seeds for parallel workers.

    Args:
        cards: the cards to render, e.g. ``full_deck() * 100``.
        seed: random seed.
        strength: camera effects strength; random per crop when None.
        styles: number of deck editions sampled for the batch (each crop uses one at random).
        balance_version: the white balance of the crops (:data:`vision.warp.BALANCE_SETTINGS`).

    Returns:
        ``(crops, labels)``: (N, 250, 160, 3) uint8 BGR crops and (N, 4) int64 labels, the value
        positions (count, colour, shape, fill) of :attr:`vision.cards.Card.positions`.
    """
    rng = np.random.default_rng(seed)
    editions = [sample_style(rng) for _ in range(max(styles, 1))]
    textures = [make_background(None, rng, (336, 464)) for _ in range(6)]
    crops = np.empty((len(cards), CROP_HEIGHT, CROP_WIDTH, 3), np.uint8)
    labels = np.empty((len(cards), 4), np.int64)
    for i, card in enumerate(cards):
        style = editions[int(rng.integers(len(editions)))]
        bg = textures[int(rng.integers(len(textures)))] if rng.random() < 0.7 else None
        crops[i] = render_training_crop(card, rng, style, strength, bg, balance_version)
        labels[i] = card.positions
    return crops, labels
