"""The ``setvision`` console entry (and ``python -m vision``).

Kept free of imports until Ctrl-C is handled: importing the CLI (typer, and on first use numpy,
OpenCV, onnxruntime) takes a few hundred milliseconds, and a Ctrl-C in that time must say what
a Ctrl-C later says (``setvision: error: interrupted``, exit code 130), not print a traceback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

#: Exit code after Ctrl-C: 128 + SIGINT, what a shell reports for a program the signal ended.
EXIT_INTERRUPTED = 130


def main(args: list[str] | None = None) -> int:
    """Run the ``setvision`` command line (:func:`vision.cli.run`).

    Args:
        args: command-line arguments (None: ``sys.argv[1:]``).

    Returns:
        The exit code. After a Ctrl-C the process ends here (``os._exit``, exit code 130,
        stdout flushed): a Ctrl-C that Python still holds (one met inside a compiled
        module's start, say) would otherwise end it by the signal at exit (-2, no message).
    """
    try:
        from vision.cli import run

        code = run(args)
    except KeyboardInterrupt:  # during the imports, or between the command and its exit
        code = interrupted()
    except ImportError as exc:  # a Ctrl-C inside a compiled module's start (numpy's, cv2's)
        if not any(isinstance(e, KeyboardInterrupt) for e in (exc.__cause__, exc.__context__)):
            raise
        code = interrupted()
    # The work is done and said: a Ctrl-C while Python shuts down would end the process by
    # the signal (no message, exit -2) after a complete run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == EXIT_INTERRUPTED:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(code)
    return code


def interrupted() -> int:
    """Say ``setvision: error: interrupted`` on stderr (the one line every Ctrl-C gets) and
    return :data:`EXIT_INTERRUPTED`. Written with ``os.write``: nothing here can raise again."""
    with contextlib.suppress(OSError):  # stderr closed or full: the exit code still says it
        os.write(2, b"setvision: error: interrupted\n")
    return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
