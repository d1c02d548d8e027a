"""What ``setvision live`` and ``setvision referee`` share: the options they both take, the
view they open, and their output files, each checked before anything runs, no two the same
file (nor the input), SIGTERM ending a run as Ctrl-C does (the video finished), and nothing left
behind by a run that could not start.

Imported by :mod:`vision.cli_live` and :mod:`vision.cli_referee`; it imports neither.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from vision.errors import SetVisionError

__all__ = [
    "EXIT_TERMINATED",
    "FpsOption",
    "ForceOption",
    "ModelOption",
    "NoWindowOption",
    "PortOption",
    "VIEWS",
    "ViewOption",
    "distinct_outputs",
    "json_target",
    "terminated_as_exit",
    "view_kind",
]

#: How the overlay can be shown (:mod:`vision.live_view`).
VIEWS = ("auto", "web", "window", "none")

ForceOption = Annotated[bool, typer.Option("--force", "-f", help="Overwrite existing files.")]
ViewOption = Annotated[
    str,
    typer.Option(
        "--view",
        metavar="KIND",
        help="How to show the overlay: 'web' (a page on this machine, the default with the "
        "headless OpenCV), 'window' (needs the full OpenCV build), 'none', or 'auto' (a "
        "window where possible, else web).",
    ),
]
NoWindowOption = Annotated[
    bool, typer.Option("--no-window", help="Show nothing (the same as --view none).")
]
PortOption = Annotated[
    int,
    typer.Option(
        "--port",
        min=0,
        max=65535,
        metavar="N",
        help="Port of the web view on 127.0.0.1 (0: any free one).",
    ),  # fmt: skip
]
FpsOption = Annotated[
    float | None,
    typer.Option(
        "--fps",
        min=0.001,
        metavar="F",
        help="Frames per second of a folder of frames (default 30), or of a source "
        "that does not say its own.",
    ),  # fmt: skip
]
ModelOption = Annotated[
    Path | None,
    typer.Option(
        "--model",
        metavar="FILE",
        help="Card classifier .onnx (with its .json); default: the packaged one.",
    ),  # fmt: skip
]


def view_kind(view: str, no_window: bool) -> str:
    """``web``, ``window`` or ``none`` from ``--view`` and ``--no-window`` (``auto``: a
    window where the OpenCV build has HighGUI, else the web page).

    Raises:
        SetVisionError: an unknown kind, or ``--no-window`` with a kind that shows something.
    """
    from vision.live_view import has_highgui

    kind = view.strip().lower()
    if kind not in VIEWS:
        raise SetVisionError(f"--view {view!r}: expected one of {', '.join(VIEWS)}")
    if no_window and kind not in ("auto", "none"):
        raise SetVisionError(f"--no-window and --view {view} ask for two things; give one")
    if no_window:
        return "none"
    return ("window" if has_highgui() else "web") if kind == "auto" else kind


#: Exit code after SIGTERM (128 + 15), as a shell reports a program the signal ended.
EXIT_TERMINATED = 143


def json_target(path: str | None, *, force: bool, option: str) -> str | None:
    """A JSON Lines output (``--json``, ``--events``) checked before the run: ``-``, a new
    file, or one to replace with ``force``.

    Raises:
        SetVisionError: an empty name, a folder, a file there (without ``force``), a folder
            that does not exist; each said with ``option``.
    """
    if path is None or path == "-":
        return path
    if not path.strip():
        raise SetVisionError(f"{option} {path!r}: an empty name (an unset variable?)")
    target = Path(path)
    if target.is_dir():
        raise SetVisionError(f"{option} {path}: is a folder; give a file name")
    if target.exists() and not force:
        raise SetVisionError(f"{option} {path}: exists; not overwritten (use --force to replace "
                             "it)")  # fmt: skip
    if not target.parent.exists():
        raise SetVisionError(f"{option} {path}: no such folder {target.parent}")
    return path


def distinct_outputs(source: str, outputs: dict[str, str | Path | None]) -> None:
    """Refuse two outputs that name one file, or an output that is the input.

    Args:
        source: the input as the user gave it.
        outputs: option -> the file it names (None or ``-``: none).

    Raises:
        SetVisionError: naming both options.
    """
    seen: dict[str, str] = {}
    inputs = {os.path.realpath(source)} if Path(source).exists() else set()
    for option, value in outputs.items():
        if value is None or str(value) == "-":
            continue
        real = os.path.realpath(value)
        if real in inputs:
            raise SetVisionError(f"{option} {value}: that is the input; write elsewhere")
        if real in seen:
            raise SetVisionError(f"{seen[real]} and {option} both name {value}; give each its "
                                 "own file")  # fmt: skip
        seen[real] = option


@contextlib.contextmanager
def terminated_as_exit() -> Iterator[None]:
    """While inside, SIGTERM (``kill``, ``timeout``) ends the program through the same
    ``finally`` blocks as Ctrl-C, so the annotated video is finished and moved into place;
    exit code :data:`EXIT_TERMINATED`. Outside the main thread: nothing is changed."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(EXIT_TERMINATED)

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (tests running commands in threads)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        sys.stderr.flush()
