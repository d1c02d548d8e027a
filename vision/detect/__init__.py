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

The older contour detector (``vision.detect.find.find_cards``: masks, candidate scoring,
selection, neighbours, piles, zoom and second looks) is still there as
``setvision photo --detector contours`` for comparison, until its stages are removed.
"""

from vision.detect.geometry import order_corners
from vision.detect.learned_find import find_cards
from vision.detect.masks import WORK_LONG_SIDE
from vision.detect.result import CardDetections
from vision.detect.scoring import MIN_SCORE

__all__ = ["CardDetections", "MIN_SCORE", "WORK_LONG_SIDE", "find_cards", "order_corners"]
