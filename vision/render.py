"""Procedural SET cards, camera effects and synthetic tables with exact ground truth.

The renderer is library code shared by tests, the shipped sample photo, classifier training and
the live overlay / referee tests. Everything is drawn from parameters and noise; no photo is used.

* :func:`render_card` draws one flat card of a sampled deck edition (:class:`CardStyle`,
  :func:`sample_style`).
* :func:`apply_camera` photographs a crop or a frame (light, lens, sensor, JPEG);
  :func:`apply_effects` does so with chosen effects at chosen strengths (stress tests);
  :func:`jitter_corners` imitates a detector's corner error.
* :func:`render_table` lays cards on a procedural table (:data:`BACKGROUNDS`, or
  :data:`EXTRA_BACKGROUNDS` for stress tests) and returns the
  frame with the exact corners of every card.
* :func:`render_training_crop` / :func:`render_training_batch` make classifier inputs through the
  same :func:`vision.warp.warp_cards` pipeline as real photos.

The implementation lives in ``render_card``, ``render_camera``, ``render_background``,
``render_clutter`` and ``render_scene``; import from here.
"""

from vision.render_background import BACKGROUNDS, EXTRA_BACKGROUNDS, make_background
from vision.render_camera import apply_camera, apply_effects, jitter_corners
from vision.render_card import (
    DEFAULT_CARD_SIZE,
    INK_HUES,
    CardStyle,
    card_size_for_width,
    render_card,
    render_card_and_mask,
    sample_style,
    symbol_polygon,
)
from vision.render_clutter import CLUTTER_KINDS, SHEET_KINDS
from vision.render_scene import (
    canonical_corners,
    render_table,
    render_training_batch,
    render_training_crop,
)

__all__ = [
    "BACKGROUNDS",
    "CLUTTER_KINDS",
    "SHEET_KINDS",
    "EXTRA_BACKGROUNDS",
    "DEFAULT_CARD_SIZE",
    "INK_HUES",
    "CardStyle",
    "apply_camera",
    "apply_effects",
    "canonical_corners",
    "card_size_for_width",
    "jitter_corners",
    "make_background",
    "render_card",
    "render_card_and_mask",
    "render_table",
    "render_training_batch",
    "render_training_crop",
    "sample_style",
    "symbol_polygon",
]
