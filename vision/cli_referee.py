"""``setvision referee``: follow a physical game through a camera and enforce the rules.

Registered on the app in :mod:`vision.cli`. The work is :func:`vision.referee_session.run_referee`
(``setvision referee undo JOURNAL``: :func:`vision.referee_session.undo_last`); this module
parses options, opens the source, the journal, the outputs and the view, and prints.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from vision.cli_errors import say_err, user_errors
from vision.cli_outputs import (
    ForceOption,
    FpsOption,
    ModelOption,
    NoWindowOption,
    PortOption,
    ViewOption,
    distinct_outputs,
    json_target,
    terminated_as_exit,
    view_kind,
)
from vision.errors import SetVisionError
from vision.live_view import DEFAULT_PORT

__all__ = ["referee_command"]


@user_errors
def referee_command(
    source: Annotated[
        str,
        typer.Argument(
            help="A camera number (0 is the first), a video file, a stream URL or a "
            "folder of frames; or 'undo' followed by a journal to take back its "
            "last event.",
            metavar="SOURCE",
        ),  # fmt: skip
    ] = "0",
    journal_to_undo: Annotated[
        str | None, typer.Argument(help="With 'undo': the journal.", metavar="[JOURNAL]")
    ] = None,
    events: Annotated[
        str | None,
        typer.Option(
            "--events",
            metavar="FILE",
            help="Write each event as a JSON line to FILE ('-': standard output).",
        ),  # fmt: skip
    ] = None,
    journal: Annotated[
        Path | None,
        typer.Option(
            "--journal",
            metavar="FILE",
            help="The game's journal (every event, fsynced as it happens); default "
            "referee-DATE-TIME.jsonl here.",
        ),  # fmt: skip
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="JOURNAL",
            help="Continue the game in this journal (after a crash or a restart).",
        ),  # fmt: skip
    ] = None,
    players: Annotated[
        str | None,
        typer.Option(
            "--players",
            metavar="NAME:SIDE,...",
            help="Who plays from which edge of the picture (bottom, left, right, "
            "top), e.g. 'Ann:bottom,Bob:left'; default: each side is a player.",
        ),  # fmt: skip
    ] = None,
    penalty: Annotated[
        str,
        typer.Option(
            "--penalty",
            metavar="RULE",
            help="What a wrong claim costs: lose-point (Italian booklet), sit-out "
            "(German rules) or none.",
        ),  # fmt: skip
    ] = "lose-point",
    variant: Annotated[
        str,
        typer.Option(
            "--variant",
            metavar="DECK",
            help="standard (12 dealt), beginner-solid or beginner-one-colour (9 dealt).",
        ),  # fmt: skip
    ] = "standard",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Write the annotated video (with the scoreboard) here.",
        ),  # fmt: skip
    ] = None,
    force: ForceOption = False,
    view: ViewOption = "auto",
    no_window: NoWindowOption = False,
    port: PortOption = DEFAULT_PORT,
    fps: FpsOption = None,
    model: ModelOption = None,
) -> None:
    """Referee a game of SET through a camera: takes, wrong claims, refills, extra deals, scores.

    Keys (window or web page): q quit, space pause, s save the frame, u undo the last event.
    """
    from vision.game import Penalty
    from vision.referee import parse_players
    from vision.referee_session import undo_last
    from vision.rules import Variant

    if source == "undo":
        if journal_to_undo is None:
            raise SetVisionError("undo: give the journal, e.g. setvision referee undo game.jsonl")
        undone = undo_last(Path(journal_to_undo))
        typer.echo(f"took back: {undone.message}" if undone else "nothing to take back")
        return
    if journal_to_undo is not None:
        raise SetVisionError(f"one SOURCE, got {source!r} and {journal_to_undo!r} (to take "
                             "back an event: setvision referee undo JOURNAL)")  # fmt: skip
    try:
        rule = Penalty(penalty.strip().lower())
    except ValueError:
        raise SetVisionError(
            f"--penalty {penalty!r}: expected lose-point, sit-out or none"
        ) from None
    try:
        deck = Variant(variant.strip().lower())
    except ValueError:
        raise SetVisionError(f"--variant {variant!r}: expected one of "
                             f"{', '.join(v.value for v in Variant)}") from None  # fmt: skip
    if resume is not None and (players or penalty != "lose-point" or variant != "standard"):
        say_err(f"setvision referee: note: --players, --penalty and --variant are ignored with "
                f"--resume: the game in {resume} keeps its own")  # fmt: skip
    seats = parse_players(players)
    if rule is Penalty.SIT_OUT and len(set(seats.values())) < 2:
        raise SetVisionError("--penalty sit-out needs two players or more")
    shown = view_kind(view, no_window)
    _run(source, seats, rule, deck, events=events, journal=journal, resume=resume, out=out,
         force=force, view=shown, port=port, fps=fps, model=model)  # fmt: skip


def _run(source: str, seats: dict[str, str], rule: Any, deck: Any, *, events: str | None,
         journal: Path | None, resume: Path | None, out: Path | None, force: bool, view: str,
         port: int, fps: float | None, model: Path | None) -> None:  # fmt: skip
    from vision.classify import CardClassifier
    from vision.live_session import VideoOut, check_video_path
    from vision.live_view import Controls, View, WebView, WindowView
    from vision.referee_session import open_journal, run_referee
    from vision.video_source import open_source

    kind = view
    if resume is not None and journal is not None and journal != resume:
        raise SetVisionError("--journal and --resume name two files: --resume continues its own")
    if out is not None:
        check_video_path(out, force=force)
    events_file = json_target(events, force=force, option="--events")
    distinct_outputs(source, {"--out": out, "--events": events_file,
                              "--journal": resume or journal})  # fmt: skip
    classifier = CardClassifier(model)
    src = open_source(source, fps=fps)
    opened: list[IO[str]] = []
    video: VideoOut | None = None
    shown: View | None = None
    book = None
    path = resume or journal
    try:
        controls = Controls()
        if kind == "web":  # first: a port in use must not leave output files behind
            shown = WebView(controls, port=port)
            say_err(f"setvision referee: watching {src.name}: open {shown.url} (q quits, u "
                    "undoes the last event)")  # fmt: skip
        elif kind == "window":
            shown = WindowView(controls, title="setvision referee")
        if path is None:
            book, referee, path = _new_journal(seats, rule, deck)
        else:
            book, referee = open_journal(path, resume=resume is not None, players=seats,
                                         penalty=rule, variant=deck)  # fmt: skip
        so_far = len(referee.events)
        say_err(f"setvision referee: {'continuing' if resume else 'journal'} {path}"
                + (f" ({so_far} event{'s' if so_far != 1 else ''} so far)" if resume
                   else ""))  # fmt: skip
        stream: IO[str] | None = None
        if events_file == "-":
            stream = sys.stdout
        elif events_file is not None:
            stream = open(events_file, "w" if force else "x", encoding="utf-8")  # noqa: SIM115
            opened.append(stream)
        video = VideoOut(out, src.fps, src.size, force=force) if out is not None else None
        with terminated_as_exit():
            result = run_referee(
                src, classifier, referee, book, events_out=stream, video=video, view=shown,
                controls=controls, on_event=None if stream is sys.stdout else _print_event,
                on_note=say_err,
            )  # fmt: skip
        video = shown = book = None  # finished and closed by run_referee
    finally:
        if video is not None:  # the run never started: no empty video left behind
            video.finish()
        if shown is not None:
            shown.close()
        if book is not None:
            book.close()
        src.close()
        for f in opened:
            with contextlib.suppress(OSError):
                f.close()
    game = result.referee.game
    scores = ", ".join(f"{p} {s}" for p, s in game.scores.items())
    say_err(f"{src.name}: {result.live.frames} frames; scores: {scores}; journal: {path}")


def _new_journal(seats: dict[str, str], rule: Any, deck: Any) -> tuple[Any, Any, Path]:
    """A new journal here, named by the date and time (``-2``, ``-3``, ... if taken)."""
    from vision.referee_session import open_journal

    stem = time.strftime("referee-%Y%m%d-%H%M%S")
    for k in range(1, 100):
        path = Path(f"{stem}{'' if k == 1 else f'-{k}'}.jsonl")
        if path.exists():
            continue
        try:
            book, referee = open_journal(path, resume=False, players=seats, penalty=rule,
                                         variant=deck)  # fmt: skip
        except SetVisionError:  # made by another run just now
            continue
        return book, referee, path
    raise SetVisionError(f"{stem}*.jsonl: no free name for the journal here; give --journal")


def _print_event(event: Any) -> None:
    """One line on standard output per event."""
    who = f" {event.player} ({event.side})" if event.player else ""
    typer.echo(f"{event.time_s:7.2f} s  {event.type}{who}: {event.message}")
