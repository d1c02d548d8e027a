"""The ``setvision`` command line: thin over the library.

Every command parses its arguments, calls one library function and prints. Errors a user can act
on (:class:`~vision.errors.SetVisionError`, ``ValueError``, ``FileNotFoundError``, ``OSError``)
become one line on stderr and exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from vision.cards import parse_card
from vision.cli_errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    say_err,
    silence_stdout,
    user_errors,
    user_message,
)
from vision.errors import SetVisionError
from vision.rules import find_sets

app = typer.Typer(
    name="setvision",
    help="Find SET cards in photos and live video, read them, list every SET; referee a game.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        import vision

        typer.echo(f"setvision {vision.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Find SET cards in photos and live video, read them, list every SET; referee a game."""


@user_errors
def sets_command(
    cards: Annotated[
        list[str],
        typer.Argument(
            help='Cards as text, in any word order, e.g. "1 red solid oval" "2 green striped '
            "diamonds\"; the rules booklets' words work too (three, violet, shaded, hatched, "
            "empty, outline, capsule, rhombus, wave, ...).",
            metavar="CARD",
        ),
    ],
) -> None:
    """List every SET among cards given as text."""
    parsed = []
    for text in cards:
        try:
            parsed.append(parse_card(text))
        except ValueError as error:
            if len(cards) > 1 and all(re.fullmatch(r"[A-Za-z]+|\d", c) for c in cards):
                # every argument a bare word or count: the cards were typed unquoted (not a
                # one-word card such as "2-red-diamond-empty")
                raise ValueError(
                    f"{error} (one card per argument: quote each card, e.g. "
                    '\'setvision sets "1 red solid oval" "2 green striped diamonds"\')'
                ) from None
            raise
    for pos, card in enumerate(parsed, start=1):
        typer.echo(f"{pos:>3}  {card.label}")
    found = find_sets(parsed)
    seen: dict[int, int] = {}
    for card in parsed:
        seen[card.index] = seen.get(card.index, 0) + 1
    for index, n in sorted(seen.items()):
        if n > 1:
            typer.echo(
                f"note: {parsed[0].from_index(index).label} is given {n} times (a deck has "
                "each card once; copies of one card never make a SET together)"
            )
    if not found:
        typer.echo("no SET among these cards")
        return
    typer.echo(f"{len(found)} SET{'s' if len(found) != 1 else ''}:")
    for i, j, k in found:
        typer.echo(
            f"  {i + 1}, {j + 1}, {k + 1}: "
            f"{parsed[i].label} + {parsed[j].label} + {parsed[k].label}"
        )


@user_errors
def simulate_command(
    games: Annotated[
        int,
        typer.Option(
            "--games",
            "-n",
            min=2,
            max=2_000_000,
            metavar="N",
            help="Number of random games to play (100,000 take about 20 s).",
        ),  # fmt: skip
    ] = 100_000,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed, for a reproducible run.")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Exit 1 if a figure disagrees with its reference (intervals widened so that "
            "all eight together are 95%).",
        ),
    ] = False,
) -> None:
    """Play random games and compare the odds of no SET with the published figures."""
    import json

    from vision.simulate import CHECK_CONFIDENCE, CHECK_MIN_GAMES, format_report, simulate

    if check and games < CHECK_MIN_GAMES:
        say_err(
            f"setvision: warning: --check with {games:,} games: the intervals are so wide that "
            f"only gross errors can show; use {CHECK_MIN_GAMES:,} games or more"
        )
    report = simulate(games=games, seed=seed, confidence=CHECK_CONFIDENCE if check else 0.95)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        typer.echo(format_report(report))
    if check and not all(e.agrees for e in report.estimates):
        raise typer.Exit(1)


from vision.cli_label import label_app  # noqa: E402
from vision.cli_live import live_command  # noqa: E402
from vision.cli_photo import photo_command  # noqa: E402  (the commands, in --help's order)
from vision.cli_referee import referee_command  # noqa: E402

# Registered in the order --help lists them: the main job first.
app.command("photo")(photo_command)
app.command("live")(live_command)
app.command("referee")(referee_command)
app.command("sets")(sets_command)
app.command("simulate")(simulate_command)
app.add_typer(label_app, name="label")


def run(args: list[str] | None = None) -> int:
    """The ``setvision`` console entry: :data:`app`, with usage errors as one line.

    Typer would print a usage error (missing argument, bad option value, unknown command) as a
    multi-line box; here it is ``setvision: error: ...`` on stderr with exit code 2, like every
    other error.

    Args:
        args: command-line arguments (None: ``sys.argv[1:]``).

    Returns:
        The exit code.
    """
    return run_app(app, "setvision", args)


def run_app(typer_app: typer.Typer, prog: str, args: list[str] | None = None) -> int:
    """Run a typer app with every usage or parameter error as one line on stderr:
    ``PROG: error: ...``, and the exit code click gives it (2 for usage errors); a
    :class:`vision.errors.SetVisionError` that reaches it (bad input) is one line too, exit 2.

    Args:
        typer_app: the app (``setvision``'s, or a script's such as ``scripts/label.py``).
        prog: the program name shown in help and errors.
        args: command-line arguments (None: ``sys.argv[1:]``).

    Returns:
        The exit code.
    """
    args = sys.argv[1:] if args is None else list(args)
    if sys.stderr is None:  # started with stderr closed (2>&-): warnings go nowhere, run on
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process
    if sys.stdout is None:  # started with stdout closed (>&-): the readings would be lost
        say_err(f"{prog}: error: standard output is closed; redirect it to a file or /dev/null")
        return 2
    command = typer.main.get_command(typer_app)
    _bare_flags(command)
    was_devnull = _stdout_is_devnull()
    try:
        code = _run_command(command, prog, args)
        sys.stdout.flush()  # what is still buffered for a pipe: a reader gone shows here
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`--help | head -1`): stop quietly
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # `--help > /dev/full`
        say_err(f"{prog}: error: {user_message(exc)}")
        return EXIT_BAD_INPUT
    except SystemExit:
        if _stdout_broken(was_devnull):  # click or rich met a closed pipe and exit with 1
            return EXIT_BROKEN_PIPE
        raise
    except ImportError as exc:  # a Ctrl-C inside a compiled module's start (onnxruntime's)
        if not caused_by_ctrl_c(exc):
            raise
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:  # a Ctrl-C anywhere (typer turns it into exit code 130)
        say_err(f"{prog}: error: interrupted")
    return code


def _run_command(command: Any, prog: str, args: list[str]) -> int:
    """Run a click command made from a typer app with every usage error as one line."""
    exceptions = _click_exceptions()
    try:
        code = command(args=args, prog_name=prog, standalone_mode=False)
    except getattr(exceptions, "NoArgsIsHelpError", ()) as exc:  # bare command: the help
        exc.show()
        return exc.exit_code
    except exceptions.UsageError as exc:
        message = " ".join(exc.format_message().split()).rstrip(".")
        # typer 0.2x words a bad choice of an Enum option "Invalid value for '--x': Value error,
        # 'y' is not one of ..." (a new user's trial): the "Value error," says nothing more.
        message = message.replace(": Value error, ", ": ")
        where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        dashed = _dashed_argument(args) if isinstance(exc, exceptions.NoSuchOption) else None
        if dashed is not None and exc.ctx is not None:  # a photo "-x.jpg", a card "-1 red ..."
            what, shown, text = dashed
            if exc.ctx.info_name == "sets":  # no card starts with "-": say what is wrong with it
                try:
                    parse_card(text)
                except ValueError as card_error:
                    say_err(f"{prog}: error: {card_error}")
                    return exc.exit_code
            where = f" ({shown} is {what}: put -- before it: {exc.ctx.command_path} -- {shown})"
        say_err(f"{prog}: error: {message}{where}")
        return exc.exit_code
    except exceptions.ClickException as exc:
        say_err(f"{prog}: error: {' '.join(exc.format_message().split())}")
        return exc.exit_code
    except typer.Abort:
        say_err(f"{prog}: error: aborted")
        return 1
    except SetVisionError as exc:  # bad input a command did not catch (an unreadable photo)
        say_err(f"{prog}: error: {' '.join(str(exc).split())}")
        return 2
    return code if isinstance(code, int) else 0


def caused_by_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` came of a Ctrl-C: a KeyboardInterrupt met while a compiled module was
    being imported surfaces as an ImportError ("initialization failed") caused by it."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _stdout_broken(was_devnull: bool) -> bool:
    """Whether click or rich found standard output to be a closed pipe: each then exits with
    1, click after wrapping the stream in its ``PacifyFlushWrapper`` (while writing
    ``--help``), rich after pointing it at /dev/null (typer's help is drawn by rich).

    Args:
        was_devnull: whether stdout was /dev/null before the command (``> /dev/null``).
    """
    return type(sys.stdout).__name__.endswith("PacifyFlushWrapper") or (
        not was_devnull and _stdout_is_devnull()
    )


def _stdout_is_devnull() -> bool:
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (tests, embedded)
        return False
    return (out.st_dev, out.st_ino) == (null.st_dev, null.st_ino)


def _bare_flags(command: Any) -> None:
    """Show on/off options (``--force``, ``--help``) in ``--help`` without a value column:
    typer 0.29 writes ``<bool>`` there, as if the flag took a value. Gives every flag of the
    command and its subcommands an empty metavar; the help option, made when first asked
    for, gets one too. Options with a metavar of their own keep it; arguments named by a
    metavar (PHOTO, CARD) lose the type typer writes beside them (``<list[str]>``)."""
    for param in getattr(command, "params", []):
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        elif getattr(param, "param_type_name", "") == "argument" and param.metavar:
            param.display_type_rich = lambda ctx: None  # PHOTO, not PHOTO <list[str]>
    make_help_option = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        _bare_flags(sub)


def _dashed_argument(args: list[str]) -> tuple[str, str, str] | None:
    """The first argument that starts with "-" but is no option, which click takes for one:
    ("a file", name, name) for an existing file or folder, ("not an option", quoted text, text)
    for text with a space in it ("-1 red solid oval"); None if there is none before a "--"."""
    for arg in args:
        if arg == "--":
            return None
        if not arg.startswith("-") or len(arg) < 2:
            continue
        if " " in arg:
            return "not an option", shlex.quote(arg), arg
        try:
            if Path(arg).exists():
                return "a file", arg, arg
        except (OSError, ValueError):  # a name too long, or with a NUL
            continue
    return None


def _click_exceptions() -> Any:
    """Click's exception module: vendored by newer typer (``typer._click``), else click's own."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - typer < 0.2x runs on click itself
        from click import exceptions  # type: ignore[no-redef]
    return exceptions


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
