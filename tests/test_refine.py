"""Unit tests of vision.detect.refine.snap_sides."""

from __future__ import annotations

import numpy as np

from vision.detect.refine import snap_sides


def test_darker_out_takes_the_near_edge_of_a_gap():
    # A card in shadow (paper at 120) on a dark table, a gap (30) and a lit neighbour (240)
    # beyond it: the gap's far edge is the stronger step, but the card's side is the step down
    # going outwards at x = 100.
    image = np.full((200, 200, 3), 30, np.uint8)
    image[20:180, 20:100] = 120
    image[20:180, 108:190] = 240
    quad = np.array([[[24.0, 24.0], [105.0, 24.0], [105.0, 176.0], [24.0, 176.0]]])
    reach = np.array([12.0])
    plain, _ = snap_sides(image, quad, -reach, reach, centred=False)
    down, found = snap_sides(image, quad, -reach, reach, centred=False, darker_out=True)
    assert abs(plain[0, 1, 0] - 108) < 1.5  # the far edge of the gap
    assert abs(down[0, 1, 0] - 100) < 1.5 and abs(down[0, 2, 0] - 100) < 1.5
    assert found[0, 1]
