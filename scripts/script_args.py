"""Argument types shared by the scripts (argparse), so bad values are one-line usage errors."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``.

    Found in a new-user trial: ``benchmark.py --repeats 0`` ended in an UnboundLocalError,
    ``--real -1`` silently took all photos but one, ``--jobs 0`` ran a pool of 0;
    ``eval_synthetic.py --scenes-per-condition 0`` divided by zero and a negative ``--seed``
    failed in numpy, all with a traceback.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse
