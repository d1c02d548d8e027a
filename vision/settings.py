"""Defaults the command line shows in ``--help``, kept apart from the modules that use them so
that the CLI starts without importing numpy or OpenCV (``setvision --version`` and ``--help``
import neither).
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_PIXELS", "UNCERTAIN_BELOW"]

#: Default confidence under which a card is reported as uncertain (the calibrated probability
#: that its reading is right; README "Confidence").
UNCERTAIN_BELOW: Final = 0.9
#: Default pixel limit: 150 MP (a 108 MP phone photo passes; a decompression bomb does not).
MAX_PIXELS: Final = 150_000_000
