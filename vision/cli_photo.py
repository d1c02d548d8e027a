"""``setvision photo``: find, read and solve the cards in photos; write annotated copies.

Registered on the app in :mod:`vision.cli`. The work is :func:`vision.batch.process_photos`;
this module parses options and prints (a rich table per photo, or one JSON object per line).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from vision.cli_errors import EXIT_BAD_INPUT, EXIT_NO_CARDS, say_err, user_errors, user_message
from vision.errors import SetVisionError
from vision.photo_warnings import file_warnings, reading_warnings
from vision.rules import no_set_verdict
from vision.settings import MAX_PIXELS, UNCERTAIN_BELOW

__all__ = ["photo_command", "probability_option"]


@user_errors
def photo_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Photos (JPEG, PNG, ...) or folders of photos.",
            show_default=False,
            metavar="PHOTO",
        ),
    ],
    recursive: Annotated[
        bool,
        typer.Option("--recursive", "-r", help="Also take the photos in folders' subfolders."),
    ] = False,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            metavar="PATH",
            help="Where annotated copies go: a file (one photo) or a folder (a name ending "
            "in / is always one). Default: NAME.sets.jpg beside each photo.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", "-f", help="Overwrite existing files.")] = False,
    no_image: Annotated[
        bool, typer.Option("--no-image", help="Do not write annotated copies.")
    ] = False,
    show: Annotated[
        bool,
        typer.Option(
            "--show",
            help="Open each annotated copy in a window (with --no-image: shown, not saved).",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per photo per line on stdout.")
    ] = False,
    jobs: Annotated[
        int,
        typer.Option("--jobs", "-j", min=1, metavar="N", help="Worker processes for many photos."),
    ] = 1,
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
            help="Flag cards whose reading is less likely right than this (a calibrated "
            "probability, 0 to 1, or a percentage: 0.9 or 90%).",
        ),
    ] = UNCERTAIN_BELOW,
    max_pixels: Annotated[
        int,
        typer.Option(
            "--max-pixels",
            min=1,
            metavar="N",
            help="Refuse photos with more pixels than this (a guard against decompression "
            "bombs; OpenCV itself decodes at most 2^30, about 1,074 MP).",
        ),
    ] = MAX_PIXELS,
    model: Annotated[
        Path | None,
        typer.Option(
            "--model",
            metavar="FILE",
            help="Card classifier .onnx, with its .json beside it (label order, input size, "
            "normalisation: what scripts/train_classifier.py writes); default: the packaged model.",
        ),
    ] = None,
) -> None:
    """Find the cards in photos, read them, list every SET and write annotated copies."""
    from vision.batch import (
        copy_source,
        is_annotated_copy,
        list_photos,
        plan_jobs,
        process_photos,
        same_photos,
        unreadable_photos,
    )

    if out is not None and not out.strip():  # never a name to write to, even if one exists
        what = "an empty path" if not out else "only spaces"
        _error(f"--out {out!r}: {what} (an unset variable?)")
        raise typer.Exit(EXIT_BAD_INPUT)
    if out is not None and out.startswith("~") and not Path(out.split(os.sep)[0]).exists():
        out = os.path.expanduser(out)  # quoted, so the shell left it: "~/x.jpg" made a folder "~"
    out_path = None if out is None else Path(out)
    out_folder = out is not None and out.endswith(("/", os.sep))  # "new.jpg/": a folder
    if no_image and out is not None:
        say_err("setvision: warning: --out is ignored with --no-image (nothing is written)")
    failures = 0  # photos not read, or read but their copy not written: exit code 2
    unread = unwritten = 0  # of those, for the summary line
    empty = 0  # photos read in which no card was found: exit code 1 (when nothing failed)
    # A path that names nothing (missing, an empty folder, an empty string from an unset shell
    # variable, which would otherwise mean "here") is reported, and the others still processed.
    found: list[Path] = []
    named_none = 0
    # --json lines of paths that name nothing, each with the number of photos found before it:
    # printed in their place among the photos' lines (input order).
    pending: list[tuple[int, str]] = []
    for raw in paths:
        try:
            if not raw.strip() and not os.path.lexists(raw):  # a file may be named " "
                what = "an empty path" if not raw else "only spaces, and no file has that name"
                raise SetVisionError(
                    f"{raw!r} is not a photo or folder ({what}: an unset variable?)"
                )
            found += list_photos([raw], recursive=recursive)
            if Path(raw).is_dir() and (
                unreadable := unreadable_photos(Path(raw), recursive=recursive)
            ):
                _warn(f"{raw}: {unreadable}")
            if not recursive and (below := _photos_in_subfolders(Path(raw))):
                _warn(f"{raw}: {below} in its subfolders not read; use --recursive to read "
                      "them too")  # fmt: skip
        except (OSError, SetVisionError) as error:  # missing, unreadable (a locked folder)
            message = user_message(error)
            _error(message)
            pending.append((len(found), _json_line(_json_error(raw, message))))
            failures += 1
            unread += 1
            named_none += 1
    photos = list_photos(found)  # all files now: only drops a photo named twice
    # An annotated copy named by the user (a folder's are skipped) is read, but said to be one.
    for copy in (p for p in photos if is_annotated_copy(p)):
        _note(f"note: {copy} is an annotated copy written by setvision (of "
              f"{copy_source(copy) or 'a photo'}): its outlines and labels may hide or change "
              "cards; read the original photo")  # fmt: skip
    for group in same_photos(found):  # said, not silently dropped
        read = next(p for p in photos if p in group)
        others = list(dict.fromkeys(str(p) for p in group if p != read))
        if not others:
            _note(f"note: {read} is given {len(group)} times: read once")
        else:
            _note(f"note: {', '.join(others)} {'is' if len(others) == 1 else 'are'} the same "
                  f"photo as {read}: read once")  # fmt: skip
    if pending:  # count the photos before each line as they are listed now, without repeats
        firsts = [len(list_photos(found[:before])) for before, _ in pending]
        pending = [(first, line) for first, (_, line) in zip(firsts, pending, strict=True)]

    def flush(upto: int) -> None:
        """Print the pending --json lines placed before photo number ``upto``."""
        while as_json and pending and pending[0][0] <= upto:
            typer.echo(pending.pop(0)[1])

    show = show and _can_show(no_image)
    planned = plan_jobs(
        photos, out_path, draw=not no_image, force=force, keep_image=show, folder=out_folder
    )
    options = {
        "mixed_decks": mixed_decks,
        "uncertain_below": uncertain_below,
        "max_pixels": max_pixels,
    }
    stream = process_photos(planned, model=model, jobs_n=jobs, **options)
    said: set[str] = set()
    created_folders: set[str] = set()  # said once: two workers may both make the same one
    for number, outcome in enumerate(_progress(stream, len(planned), enabled=len(planned) > 1)):
        flush(number)
        if outcome.result is not None:  # read, even if writing its copy then failed
            empty += not outcome.result["cards"]
            warnings = file_warnings(outcome.photo)
            warnings += reading_warnings(str(outcome.photo), outcome.result)
            for warning in warnings:
                _warn(warning)
            if as_json:
                written = None if outcome.written is None else str(outcome.written)
                line = {**outcome.result, "annotated": written}
                # Pixel (x, y) of the photo is (k*x, k*y) in the copy (k from 2 to 4 when the
                # cards were too small for their labels).
                line["annotated_scale"] = (
                    None if written is None else outcome.extra.get("annotated_scale", 1)
                )
                if outcome.error:  # read, but its copy could not be written: say why here too
                    line["annotated_error"] = " ".join(outcome.error.split())
                line["warnings"] = [" ".join(w.split()) for w in warnings]
                typer.echo(_json_line(line))
            else:
                _print_table(
                    outcome.result, outcome.written, outcome.extra.get("annotated_scale", 1)
                )
            created = outcome.extra.get("created_folder")
            if created is not None and str(created) not in created_folders:
                created_folders.add(str(created))
                _note(f"created the folder {created} for the annotated copy")
        elif as_json:  # not read: a line for it too, so a script sees every photo it gave
            typer.echo(_json_line(_json_error(outcome.photo, outcome.error)))
        if outcome.error:
            # The same refusal for every photo of a folder ("... is a read-only folder") is
            # said once; the summary still counts each photo without its copy.
            if outcome.error not in said:
                _error(outcome.error)
                said.add(outcome.error)
            failures += 1
            if outcome.result is None:
                unread += 1
            else:
                unwritten += 1
            continue
        if show and outcome.annotated is not None:
            show = _show(outcome.photo, outcome.annotated)
    flush(len(planned))
    total = len(photos) + named_none
    if total > 1 and not as_json:
        # A photo whose copy could not be written was still read and reported: processed.
        summary = f"{total - unread} of {total} photos processed"
        if unread:
            summary += f", {unread} failed"
        if unwritten:
            summary += f", no annotated copy written for {unwritten} (see the errors above)"
        if empty:
            summary += f", no cards found in {empty}"
        typer.echo(summary)
    if failures:
        raise typer.Exit(EXIT_BAD_INPUT)
    if empty:
        raise typer.Exit(EXIT_NO_CARDS)


#: Photos counted in a folder's subfolders at most (a home folder is not walked through).
SUBFOLDER_COUNT_LIMIT = 1000


def probability_option(text: str | float) -> float:
    """``--uncertain-below``: a probability from 0 to 1 ("0.9") or a percentage ("90%"); the
    default arrives as a float.

    Raises:
        typer.BadParameter: for anything else, with a hint for a bare "90" (a percentage
            without its sign); "nan" is no number here.
    """
    raw = str(text).strip()
    scale = 100.0 if raw.endswith("%") else 1.0
    try:
        value = float(raw[:-1] if scale == 100.0 else raw) / scale
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a number (0.9, or 90%)") from None
    if not 0.0 <= value <= 1.0:  # also false for nan
        hint = ""
        if scale == 1.0 and 1.0 < value <= 100.0:
            hint = f"; for {raw}% write {value / 100:g} or {raw}%"
        raise typer.BadParameter(
            f"{text!r} is not a probability from 0 to 1 (0.9) or a percentage (90%){hint}"
        )
    return value


def _photos_in_subfolders(path: Path) -> str:
    """How many photos the subfolders of ``path`` hold (a folder read without --recursive), as
    said to the user ("3", "1000 or more"); "" for none, or for a file. Hidden folders and
    files, and setvision's own copies, are left out, as ``--recursive`` would leave them."""
    from vision.batch import is_annotated_copy
    from vision.io import IMAGE_EXTENSIONS, walk_folders

    if not path.is_dir():
        return ""
    count = 0
    for root, files in walk_folders(path):  # linked folders too, as --recursive reads them
        if root == path:
            continue
        for name in files:
            lower = name.lower()
            if name.startswith(".") or Path(lower).suffix not in IMAGE_EXTENSIONS:
                continue
            if is_annotated_copy(root / name):
                continue
            count += 1
            if count >= SUBFOLDER_COUNT_LIMIT:
                return f"{count} or more photos"
    return "" if count == 0 else f"{count} photo{'s' if count != 1 else ''}"


def _json_line(value: Any) -> str:
    """One ``--json`` line. A file name that is not UTF-8 (byte 0xff, kept by Python as a lone
    surrogate) is written with the byte as the text ``\\xff``: a lone surrogate is valid JSON
    syntax but no Unicode, and strict parsers (and UTF-8 encoders) reject it."""

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            if not any("\udc80" <= ch <= "\udcff" for ch in item):
                return item
            raw = item.encode("utf-8", "surrogateescape")
            return raw.decode("utf-8", "backslashreplace")
        if isinstance(item, dict):
            return {key: clean(v) for key, v in item.items()}
        if isinstance(item, list | tuple):
            return [clean(v) for v in item]
        return item

    return json.dumps(clean(value))


def _json_error(photo: Path | str, message: str | None) -> dict[str, str]:
    """The ``--json`` line of a photo that could not be read: ``{"image", "error"}``."""
    return {"image": str(photo), "error": " ".join((message or "unknown error").split())}


#: The rich console of the progress bar while it is drawn (see :func:`_progress`): stderr
#: lines go through it, above the bar, instead of being written over it.
_BAR: dict[str, Any] = {}
#: The Console class of :func:`_console`, made on first use.
_CONSOLE: dict[str, Any] = {}


def _stderr_line(text: str) -> None:
    console = _BAR.get("console")
    if console is None:
        say_err(text)
    else:
        with contextlib.suppress(OSError):  # stderr full: the exit code still says it
            console.print(text, markup=False, highlight=False, soft_wrap=True)


def _error(message: str) -> None:
    _stderr_line(f"setvision: error: {' '.join(message.split())}")


def _warn(message: str) -> None:
    _stderr_line(f"setvision: warning: {' '.join(message.split())}")


def _note(message: str) -> None:
    _stderr_line(f"setvision: {' '.join(message.split())}")


def _progress(stream: Any, total: int, *, enabled: bool) -> Any:
    """Wrap ``stream`` in a rich progress bar on stderr: only for several photos whose readings
    go to a file or a pipe while stderr is a terminal. When the readings go to the terminal
    too, they show the progress themselves (a bar drawn there was written over by them)."""
    if not enabled or not sys.stderr.isatty() or sys.stdout.isatty():
        yield from stream
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("photos"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    console = _console(stderr=True)
    with Progress(*columns, console=console, transient=True, redirect_stdout=False) as bar:
        task = bar.add_task("photos", total=total)
        _BAR["console"] = console
        try:
            for item in stream:
                yield item
                bar.advance(task)
        finally:
            _BAR.clear()


def _console(**options: Any) -> Any:
    """A rich ``Console`` (``options`` as its own) that lets a closed pipe raise
    ``BrokenPipeError`` (:func:`vision.cli_errors.user_errors` makes it exit code 141): rich's own
    handling points stdout at /dev/null and exits with 1, the code for "no cards found"."""
    if "class" not in _CONSOLE:  # made once, on first use (rich is imported lazily)
        from rich.console import Console

        class _PipeConsole(Console):
            def on_broken_pipe(self) -> None:
                raise BrokenPipeError

        _CONSOLE["class"] = _PipeConsole
    return _CONSOLE["class"](**options)


def _print_table(result: dict[str, Any], written: Path | None, scale: int = 1) -> None:
    from rich.table import Table

    from vision.decode import format_confidence

    # Not a terminal (a file, a pipe, a log): no width to fit, so cells are not wrapped (rich
    # assumes 80 columns there and split "2 green striped squiggles" over two lines).
    width = None if sys.stdout.isatty() else 1000
    console = _console(highlight=False, soft_wrap=True, width=width)
    cards = result["cards"]
    sets = result["sets"]
    head = f"[bold]{result['image']}[/bold]: "
    copy_line = f"annotated copy: {written}"
    if scale > 1:
        copy_line += f" (drawn {scale}x the photo's size: its cards are too small for labels)"
    if not cards:
        console.print(head + "no cards found in this photo")
        if written:
            console.print(copy_line)
        return
    s = len(sets)
    noun = "card" if len(cards) == 1 else "cards"
    console.print(head + f"{len(cards)} {noun}, {s} SET{'s' if s != 1 else ''}")
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("#", justify="right")
    table.add_column("position")
    table.add_column("card")
    table.add_column("confidence", justify="right")
    rows = []
    for card in cards:
        notes = []
        conf = format_confidence(card["confidence"])
        if card.get("uncertain"):
            notes.append("[yellow]uncertain[/yellow]")
            conf = f"[yellow]{conf}[/yellow]"
        if card.get("duplicate"):
            notes.append("[magenta]duplicate reading[/magenta]")
        if card.get("partial"):
            notes.append("cut by the photo edge")
        if card.get("fills_photo"):
            notes.append("the whole photo (no card outline in it)")
        position = f"row {card.get('row', '?')}, col {card.get('col', '?')}"
        rows.append((str(card["id"]), position, card["label"], conf, ", ".join(notes)))
    noted = any(row[-1] for row in rows)
    if noted:  # no empty column (it padded every line with trailing spaces)
        table.add_column("note")
    for row in rows:
        table.add_row(*(row if noted else row[:-1]))
    with console.capture() as captured:  # the last column is padded to its widest cell
        console.print(table)
    console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    by_id = {card["id"]: card for card in cards}
    if not sets:
        console.print(f"[bold]{no_set_verdict(len(cards))}[/bold]")
    for k, triple in enumerate(sets, start=1):
        text = " + ".join(f"#{i} {by_id[i]['label']}" for i in triple)
        doubtful = [f"#{i}" for i in triple if by_id[i].get("uncertain")]
        if doubtful:  # a SET is only as sure as its least sure card
            text += f" [yellow](rests on uncertain {', '.join(doubtful)})[/yellow]"
        console.print(f"SET {k}: {text}")
    if result.get("colourless"):
        console.print(
            "[yellow]this photo has no colour (greyscale, or tinted by one colour): no card's "
            "colour can be read, "
            "so every card is uncertain and the SETs are guesses[/yellow]"
        )
    uncertain = [c for c in cards if c.get("uncertain")]
    if uncertain:
        ids = ", ".join(f"#{c['id']} ({format_confidence(c['confidence'])})" for c in uncertain)
        console.print(f"[yellow]uncertain readings: {ids}; check these cards[/yellow]")
    for line in _duplicate_lines(cards, bool(result.get("mixed_decks"))):
        console.print(f"[magenta]{line}[/magenta]", markup=True)
    if written:
        console.print(copy_line)


#: Groups of cards first read alike from which a table is suspected to hold several decks.
MIXED_HINT_GROUPS = 3


def _duplicate_lines(cards: list[dict[str, Any]], mixed_decks: bool) -> list[str]:
    """What the table says about cards read alike: each group of card ids with the card they
    were read as, and with several groups on one deck, a hint at ``--mixed-decks``."""
    groups: dict[str, list[int]] = {}
    for card in cards:
        if card.get("duplicate"):
            groups.setdefault(card.get("first_read", card["label"]), []).append(card["id"])
    if not groups:
        return []
    verb = "are" if mixed_decks else "read as"
    parts = [
        f"{' and '.join(', '.join(f'#{i}' for i in ids).rsplit(', ', 1))} {verb} {label}"
        for label, ids in groups.items()
    ]
    if mixed_decks:
        return [f"the same card more than once (several decks): {'; '.join(parts)}"]
    lines = [f"duplicate readings: {'; '.join(parts)}; resolved by the deck having each card once"]
    if len(groups) >= MIXED_HINT_GROUPS:
        lines.append(
            f"{len(groups)} cards of the deck were each read on two cards or more: if decks are "
            "mixed on this table, use --mixed-decks"
        )
    return lines


def _can_show(no_image: bool) -> bool:
    """Whether ``--show`` can open windows here; if not, one warning line on stderr."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        _warn(
            "--show: no display here (DISPLAY is not set), so nothing is shown; "
            + ("nothing is written either (--no-image)" if no_image else "copies are written")
        )
        return False
    return True


def _show(photo: Path, image: Any) -> bool:
    """Show ``image`` (BGR uint8) in a window until a key is pressed.

    Returns:
        False if this OpenCV build has no window support (said once on stderr): stop showing.
    """
    import cv2

    title = f"{photo.name} (setvision)"
    try:
        cv2.imshow(title, image)
        cv2.waitKey(0)
        cv2.destroyWindow(title)
    except cv2.error:
        _warn(
            "--show: this OpenCV build has no window support (opencv-python-headless), "
            "so nothing is shown"
        )
        return False
    return True
