"""Find SET cards in a BGR frame: one quadrilateral per card, corners in frame pixels.

How :func:`find_cards` works (a learned model, then geometry):

1. A small segmentation network (``models/card_detector.onnx``, onnxruntime, one thread) labels
   each pixel of the frame shrunk to a long side of 512 px as table, card or card border
   (:mod:`vision.detect.learned`). It was trained on rendered tables with wide randomisation
   and the annotated real photos (``scripts/train_detector.py``); how well it does on sources
   it never saw: ``models/card_detector_eval.json`` and the model card in ``models/README.md``.
2. Each connected piece of card (border pixels excluded, so touching and overlapping cards
   part) is one card: its convex hull gets a four-sided fit, pushed out by half the border's
   width (:func:`vision.detect.learned.quads_from_probs`).
3. Pieces unlike a card are dropped: a low mean card probability, far smaller than the frame's
   other cards, a side ratio no card shows at up to 60 degrees of tilt, or cut too far by the
   frame edge (:func:`vision.detect.learned_find.find_cards_learned`).
4. Sides are snapped to the card's edge at full resolution (:mod:`vision.detect.refine`), so
   crops of 12 MP photos stay sharp.
5. Plausibility against the scene (:mod:`vision.detect.plausible`): colourless ink among
   coloured cards (a receipt), a blank grainy patch, far smaller than the cards around it.

A card whose outline runs past the frame edge by a little is reported with ``partial=True``.

The modules: :mod:`~vision.detect.learned` (the network and its pieces),
:mod:`~vision.detect.learned_find` (steps 3-5), :mod:`~vision.detect.refine`,
:mod:`~vision.detect.plausible`, :mod:`~vision.detect.geometry` (corner order, areas, sides),
:mod:`~vision.detect.result` (:class:`CardDetections`) and :mod:`~vision.detect.whole_frame`
(whether a photo with no card found may be one card cropped to its edges, for the hint). The
older contour detector's ~20 stages were deleted when the learned one replaced them (#33).
"""

from vision.detect.geometry import order_corners
from vision.detect.learned_find import MIN_SCORE, WORK_LONG_SIDE, find_cards
from vision.detect.result import CardDetections

__all__ = ["CardDetections", "MIN_SCORE", "WORK_LONG_SIDE", "find_cards", "order_corners"]
