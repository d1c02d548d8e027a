"""Unit tests of helpers in vision.detect.neighbours."""

from __future__ import annotations

import numpy as np

from vision.detect.neighbours import _parallel_missing


def test_side_not_found_is_turned_parallel_to_its_opposite():
    # A card-sized hypothesis whose top side (side 0) is tilted 10 degrees; the other three
    # sides found their edges. The top is turned parallel to the bottom about its midpoint.
    quad = np.array([[100.0, 100.0], [200.0, 117.6], [200.0, 260.0], [100.0, 260.0]])
    ok = np.array([[False, True, True, True]])
    out = _parallel_missing(quad[None], ok)[0]
    np.testing.assert_allclose(out[2:], quad[2:])  # the bottom corners stay
    np.testing.assert_allclose(out[:2], [[100.0, 108.8], [200.0, 108.8]])
    # A quad with every side found, or none parallel to fix, is returned as it was.
    square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    np.testing.assert_allclose(
        _parallel_missing(square[None], np.array([[True, False, True, True]]))[0], square
    )
