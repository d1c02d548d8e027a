"""The project's exception type: errors a user can act on, turned into one line by the CLI."""

from __future__ import annotations

__all__ = ["SetVisionError"]


class SetVisionError(Exception):
    """A problem with the user's input or environment (bad photo, missing camera, bad model).

    The message is a complete sentence a user can act on; the CLI prints it on one line and
    exits non-zero.
    """
