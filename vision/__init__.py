"""setvision: find SET cards in photos and video, read them, list every SET, referee a game.

Importing the package costs nothing: ``__version__`` is looked up from the installed metadata
on first use (``importlib.metadata`` takes about 50 ms to import), so the console entry
(:mod:`vision.__main__`) can install its Ctrl-C handling before anything heavy is imported.
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("setvision")
        except PackageNotFoundError:  # running from a source tree without an install
            return "0.0.0+unknown"
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
