"""``setvision live``: the SETs drawn on a camera, a stream, a video or a folder of frames.

Registered on the app in :mod:`vision.cli`. The work is :func:`vision.live_session.run_live`;
this module parses options, opens the source, the outputs and the view, and prints.
"""

from __future__ import annotations

import contextlib
import sys
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
from vision.cli_photo import probability_option
from vision.errors import SetVisionError
from vision.live_view import DEFAULT_PORT
from vision.settings import UNCERTAIN_BELOW

__all__ = ["live_command"]


@user_errors
def live_command(
    source: Annotated[
        str,
        typer.Argument(
            help="A camera number (0 is the first camera), a video file, a stream URL "
            "(rtsp://..., http://... as a phone camera app serves it) or a folder of frames.",
            metavar="SOURCE",
        ),
    ] = "0",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Write the annotated video here (.mp4, .avi, .mov, .m4v), the input's "
            "size and frame rate.",
        ),  # fmt: skip
    ] = None,
    json_path: Annotated[
        str | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="One JSON object per frame to FILE ('-': standard output): frame, "
            "time_s, cards (track id, reading, confidence, corners), sets (by id), "
            "hand.",
        ),  # fmt: skip
    ] = None,
    force: ForceOption = False,
    view: ViewOption = "auto",
    no_window: NoWindowOption = False,
    port: PortOption = DEFAULT_PORT,
    fps: FpsOption = None,
    save_dir: Annotated[
        Path,
        typer.Option(
            "--save-dir", metavar="DIR", help="Where the save key puts the frame as a photo."
        ),  # fmt: skip
    ] = Path("."),
    mixed_decks: Annotated[
        bool,
        typer.Option("--mixed-decks", help="Several decks are mixed: a card may appear twice."),
    ] = False,
    uncertain_below: Annotated[
        float,
        typer.Option(
            "--uncertain-below",
            parser=probability_option,
            metavar="P",
            help="Flag cards whose reading is less likely right than this (0.9 or 90%).",
        ),  # fmt: skip
    ] = UNCERTAIN_BELOW,
    model: ModelOption = None,
) -> None:
    """Draw every SET on a camera, stream, video or folder of frames as it plays.

    Keys (in the window or the web page): q quit, space pause, s save the frame as a photo.
    """
    from vision.classify import CardClassifier
    from vision.live_session import VideoOut, check_video_path, run_live
    from vision.live_view import Controls, View, WebView, WindowView
    from vision.video_source import open_source

    kind = view_kind(view, no_window)
    # Everything that can be refused is refused before the camera or the model is opened.
    if out is not None:
        check_video_path(out, force=force)
    json_file = json_target(json_path, force=force, option="--json")
    distinct_outputs(source, {"--out": out, "--json": json_file})
    if not save_dir.is_dir():
        raise SetVisionError(f"--save-dir {save_dir}: no such folder")
    classifier = CardClassifier(model)
    src = open_source(source, fps=fps)
    opened: list[Any] = []
    video: VideoOut | None = None
    shown: View | None = None
    try:
        controls = Controls()
        if kind == "web":  # first: a port in use must not leave output files behind
            shown = WebView(controls, port=port)
            say_err(f"setvision live: watching {src.name}: open {shown.url} "
                    "(q quits, space pauses, s saves the frame)")  # fmt: skip
        elif kind == "window":
            shown = WindowView(controls)
        video = VideoOut(out, src.fps, src.size, force=force) if out is not None else None
        stream: IO[str] | None = None
        if json_file == "-":
            stream = sys.stdout
        elif json_file is not None:
            stream = open(json_file, "w" if force else "x", encoding="utf-8")  # noqa: SIM115
            opened.append(stream)
        to_stdout = stream is sys.stdout
        with terminated_as_exit():
            summary = run_live(
                src, classifier, video=video, json_out=stream, view=shown, controls=controls,
                save_dir=save_dir, mixed_decks=mixed_decks, uncertain_below=uncertain_below,
                on_change=None if to_stdout else _print_change,
                on_saved=lambda p: say_err(f"saved {p}"),
            )  # fmt: skip
        video = shown = None  # finished and closed by run_live
    finally:
        if video is not None:  # the run never started: no empty video left behind
            video.finish()
        if shown is not None:
            shown.close()
        src.close()
        for f in opened:
            with contextlib.suppress(OSError):
                f.close()
    rate = summary.frames / summary.seconds if summary.seconds > 0 else 0.0
    line = f"{src.name}: {summary.frames} frames in {summary.seconds:.1f} s ({rate:.1f} a second)"
    if summary.dropped:
        line += f", {summary.dropped} skipped to keep up"
    if summary.video is not None:
        line += f"; annotated video: {summary.video}"
    say_err(line)


def _print_change(live: Any) -> None:
    """One line on standard output when the table shown changes."""
    table = live.table
    cards = ", ".join(f"#{c.id} {c.card.label}" for c in table.cards) or "no cards"
    sets = " ".join("(" + " ".join(f"#{i}" for i in s) + ")" for s in table.sets)
    typer.echo(f"{live.time_s:7.2f} s  {len(table.cards)} cards, {len(table.sets)} SETs"
               f"{': ' + sets if sets else ''}  [{cards}]")  # fmt: skip
