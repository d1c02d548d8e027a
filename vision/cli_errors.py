"""What every ``setvision`` command shares about failing: the exit codes, one-line messages on
stderr, and the decorator that turns errors a user can act on into them.

Imported by :mod:`vision.cli` and the command modules it registers (:mod:`vision.cli_photo`);
it imports neither, so the commands do not import the app that registers them.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from vision.errors import SetVisionError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_NO_CARDS",
    "fail",
    "say_err",
    "silence_stdout",
    "user_errors",
    "user_message",
]

P = ParamSpec("P")
R = TypeVar("R")

#: Exit code for bad input (unreadable file, bad card text, missing camera, ...).
EXIT_BAD_INPUT = 2
#: Exit code of ``setvision photo`` when every photo was read but in one or more no card was
#: found (as grep exits 1 when nothing matches); bad input (:data:`EXIT_BAD_INPUT`) comes first.
EXIT_NO_CARDS = 1
#: Exit code when standard output is a pipe its reader closed (``| head -1``): 128 + SIGPIPE,
#: what a shell reports for a program the signal ended (not 1, which says "no cards found").
EXIT_BROKEN_PIPE = 141
#: Exit code after Ctrl-C (128 + SIGINT), said as ``setvision: error: interrupted``.
EXIT_INTERRUPTED = 130


def say_err(line: str) -> None:
    """Write ``line`` to stderr; a stderr that cannot take it (``2>/dev/full``) is passed over:
    the exit code still says what happened (a failed write there made bad input exit 1)."""
    with contextlib.suppress(OSError):
        typer.echo(line, err=True)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the Exit to raise."""
    say_err(f"setvision: error: {' '.join(str(message).split())}")
    return typer.Exit(code)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn errors a user can act on into a one-line message and a non-zero exit."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly
            silence_stdout()
            raise typer.Exit(EXIT_BROKEN_PIPE) from None
        except (SetVisionError, ValueError, FileNotFoundError, OSError) as exc:
            raise fail(user_message(exc)) from None
        # KeyboardInterrupt goes on to run_app, which says it for every Ctrl-C alike

    return wrapper


def user_message(exc: Exception) -> str:
    """The one-line message for ``exc``: an OSError raised by Python itself (``[Errno 13]
    Permission denied: 'a/b.jpg'``) is given as ``a/b.jpg: permission denied``."""
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror[:1].lower() + exc.strerror[1:]
        if exc.filename is not None:
            return f"{exc.filename}: {reason}"
        if exc.errno in (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT):
            return f"could not write the output: {reason}"  # stdout to a full disk
    return str(exc)


def silence_stdout() -> None:
    """Point standard output at /dev/null, so that nothing more is written to a closed pipe
    (Python's final flush would fail again; the pattern the Python docs give for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (embedded, tests)
        pass
