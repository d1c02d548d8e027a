"""Find SET cards in a BGR frame: one quadrilateral per card, corners in frame pixels.

How it works (contour-based, OpenCV only):

1. The frame is shrunk by an integer factor to a working size (long side 640-1279 px).
2. Candidate regions come from three binary masks: an Otsu threshold of the "whiteness" image
   (the per-pixel minimum of B, G, R: white paper is bright in every channel; wood, cloth,
   felt and coloured symbols are not), the regions enclosed by edges (grey-level Canny edges,
   warmth (R - B) edges, and thin dark seams found by a black-hat filter, so cards touching a
   neighbour separate along their seam), and the regions enclosed by faint edges with their
   gaps closed. Open edge chains that run around most of a quad (a white card on a white
   desk shows three sides) give candidates through their convex hull.
3. Each outline gets a four-sided fit (``cv2.approxPolyN``). Each quad is scored: the card's
   aspect ratio (57 x 89 mm) directly and through the perspective (Zhang & He, "Whiteboard
   scanning and image enhancement", 2007, with an assumed focal length), corner angles, how
   well the outline fills it, a bright low-saturation paper border (no darker than 0.4 x the
   scene's other cards) and some ink (symbols) inside, lying across the card.
4. Selection: a candidate holding two or more separate card-sized candidates (touching cards
   seen as one) is dropped; of nested candidates the whole card beats its lit half, and a
   card beats the white frame around it (a tray cell). Touching cards nobody separated are
   split: a region shaped like an a x b grid of cards into cells, other regions between their
   two deepest notches. Inside a found quad with a white surround, an inset card is searched.
5. Neighbours (SET is dealt in rows and columns): beside each found card, quads are placed in
   the table plane, snapped to edges and kept when they score as cards with the found cards'
   paper tint (a card half in shadow or washed out by glare; a white card on a white sill
   that shows two or three sides is placed by its coloured symbols, printed centred, and
   must find two sides meeting at a corner); such a quad also replaces a
   nested detection of another size (the box around a card's symbols) or one skewed against
   it (a side on a shadow edge). See :mod:`vision.detect.neighbours`.
6. Plausibility against the scene: a detection whose ink has no colour while the others' is
   clearly coloured (grey print on paper), or far smaller than the scene's cards where it lies
   (a box's label; the card size fitted over the table, perspective included), is dropped.
   See :mod:`vision.detect.plausible`.
7. Corners: the sides are refitted to the straight parts of the outline (rounded corners
   excluded: corners are where the straight edges meet), then refined on the full-resolution
   frame by locating the edge along short profiles across each side and fitting a line, so
   crops of 12 MP photos stay sharp.

8. A second look (:mod:`vision.detect.second_look`): where coloured ink of a symbol's size
   lies off every card found, a sharpened copy of the working image is searched as well and
   the cards it finds off the found ones, scored as cards on the frame as it was, are added
   (defocused, warm-lit or compressed photos lose fewer cards).

A card whose outline runs along the frame edge is reported with ``partial=True`` only while
what is visible still has a card's shape (it is cut by a few pixels); cards cut further are
left out. Cards covered by another card are reported only when their outline still looks like a
whole card (the top card is the one found).
"""

from vision.detect.find import find_cards
from vision.detect.geometry import order_corners
from vision.detect.masks import WORK_LONG_SIDE
from vision.detect.result import CardDetections
from vision.detect.scoring import MIN_SCORE

__all__ = ["CardDetections", "MIN_SCORE", "WORK_LONG_SIDE", "find_cards", "order_corners"]
