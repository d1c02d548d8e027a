"""``setvision label``: make a dataset of card photos, review it, and export it.

``setvision label PHOTO... --out DATASET_DIR`` pre-labels photos (the same as ``setvision label
photos``); ``review``, ``import`` and ``export`` work on the dataset folder. Registered on the
app in :mod:`vision.cli`; the work is :mod:`vision.dataset`'s, this module parses and prints.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Annotated, Any, Final

import typer
from typer.core import TyperGroup

from vision.cli_errors import EXIT_BAD_INPUT, fail, say_err, user_errors

__all__ = ["label_app"]

#: Photos pre-labelled between two saves of the dataset (and a save at the end, or on Ctrl-C):
#: an interrupted run keeps what it read.
SAVE_EVERY: Final = 20
#: The command that ``setvision label PHOTO...`` runs.
DEFAULT_COMMAND: Final = "photos"


class _PhotosByDefault(TyperGroup):
    """``setvision label a.jpg ...`` is ``setvision label photos a.jpg ...``: arguments that do
    not start with a subcommand's name (or ask for help) go to :data:`DEFAULT_COMMAND`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)


label_app = typer.Typer(
    cls=_PhotosByDefault,
    help="Label photos of SET cards for a dataset: 'setvision label PHOTO... --out DATASET_DIR' "
    "pre-labels them with the model (COCO annotations.json and Label Studio tasks); 'review' "
    "checks them in a web page; 'import' takes back a Label Studio export; 'export' writes "
    "YOLO files and card crops.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

DatasetArg = Annotated[
    Path,
    typer.Argument(help="The dataset folder (made by 'setvision label PHOTO... --out').",
                   metavar="DATASET_DIR", show_default=False),
]  # fmt: skip
YoloOpt = Annotated[
    str | None,
    typer.Option(
        "--yolo",
        metavar="boxes|pose",
        help="Also write YOLO files into DATASET_DIR/yolo: card boxes, or boxes with the 4 "
        "corners as keypoints (pose).",
    ),
]
CropsOpt = Annotated[
    bool,
    typer.Option(
        "--crops",
        help="Also write each card's warped crop into DATASET_DIR/crops, a folder per card.",
    ),
]
UncheckedOpt = Annotated[
    bool,
    typer.Option(
        "--unchecked",
        help="Export photos no person checked too (their pre-labels; default: checked ones only).",
    ),
]


@label_app.command("photos")
@user_errors
def photos_command(
    paths: Annotated[
        list[str],
        typer.Argument(help="Photos or folders of photos.", show_default=False, metavar="PHOTO"),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            metavar="DATASET_DIR",
            help="The dataset folder (made if missing; photos already in it are kept as they are).",
        ),
    ],  # fmt: skip
    recursive: Annotated[
        bool,
        typer.Option("--recursive", "-r", help="Also take the photos in folders' subfolders."),
    ] = False,
    relabel: Annotated[
        bool,
        typer.Option(
            "--relabel",
            help="Pre-label again the photos already in the dataset that no person checked.",
        ),
    ] = False,
    yolo: YoloOpt = None,
    crops: CropsOpt = False,
    model: Annotated[
        Path | None,
        typer.Option(
            "--model", metavar="FILE", help="Card classifier .onnx (default: the packaged model)."
        ),
    ] = None,  # fmt: skip
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, metavar="N", help="Worker processes.")
    ] = 1,
) -> None:
    """Pre-label photos with the model into a dataset folder (never over a person's checks)."""
    from vision.batch import list_photos
    from vision.dataset.prelabel import prelabel
    from vision.dataset.records import merge_photos
    from vision.dataset.store import dataset_folder, file_of, load_photos, update_photos

    kind = _yolo_kind(yolo)
    folder = dataset_folder(out, create=True)
    before = load_photos(folder)  # a corrupt file stops here, before any work
    photos = list_photos(paths, recursive=recursive)
    inside = [p for p in photos if p.resolve().is_relative_to(folder.resolve())]
    if inside:  # the dataset's own YOLO links and crops (a dataset made in the photos' folder)
        say_err(f"setvision: {len(inside)} files inside {folder} (its exports) are not photos "
                "to label: left out")  # fmt: skip
        photos = [p for p in photos if p not in inside]
    files = [file_of(folder, p) for p in photos]
    have = {p.file: p for p in before}
    todo = [
        (photo, file)
        for photo, file in zip(photos, files, strict=True)
        if file not in have or (relabel and not _touched(have[file]))
    ]
    kept = len(photos) - len(todo)
    if kept:
        say_err(f"setvision: {kept} of {len(photos)} photos already in {folder}: kept as they are")
    done: list[Any] = []
    failed = 0
    cards = 0

    def flush() -> None:
        if done:
            batch = list(done)
            update_photos(folder, lambda old: merge_photos(old, batch, replace_unchecked=True)[0])
            done.clear()

    try:
        stream = prelabel([p for p, _ in todo], [f for _, f in todo], model=model, jobs_n=jobs)
        for item in stream:
            if item.labelled is None:
                say_err(f"setvision: error: {' '.join((item.error or '').split())}")
                failed += 1
                continue
            done.append(item.labelled)
            cards += len(item.labelled.cards)
            typer.echo(f"{item.photo}: {len(item.labelled.cards)} cards")
            if len(done) >= SAVE_EVERY:
                flush()
    finally:  # Ctrl-C included: what was read is kept
        flush()
    read = len(todo) - failed
    if todo:
        typer.echo(
            f"{read} photo{'s' if read != 1 else ''} pre-labelled ({cards} cards) into {folder}"
            + (f", {failed} not read" if failed else "")
            + f"; check them: setvision label review {folder}"
        )
    if kind is not None or crops:
        _export(folder, kind, crops, unchecked=True)
    if failed:
        raise typer.Exit(EXIT_BAD_INPUT)


def _touched(photo: Any) -> bool:
    return photo.checked or any(c.checked for c in photo.cards)


def _yolo_kind(value: str | None) -> Any:
    from vision.dataset.yolo import YoloKind

    if value is None:
        return None
    try:
        return YoloKind(value.lower())
    except ValueError:
        raise fail(f"--yolo {value!r}: expected boxes or pose") from None


def _export(folder: Path, kind: Any, crops: bool, *, unchecked: bool) -> None:
    from vision.dataset.crops import export_crops
    from vision.dataset.store import load_photos, photo_path
    from vision.dataset.yolo import export_yolo

    photos = load_photos(folder)
    chosen = [p for p in photos if unchecked or p.checked]
    if len(chosen) < len(photos):
        say_err(
            f"setvision: {len(photos) - len(chosen)} photos no person checked are left out "
            "(--unchecked to export them too)"
        )
    paths = [photo_path(folder, p.file) for p in chosen]
    if kind is not None:
        n = export_yolo(chosen, paths, folder / "yolo", kind)
        typer.echo(f"YOLO ({kind.value}): {n} photos in {folder / 'yolo'} (data.yaml)")
    if crops:
        n = export_crops(chosen, paths, folder / "crops")
        typer.echo(f"crops: {n} cards in {folder / 'crops'}")


@label_app.command("export")
@user_errors
def export_command(
    dataset: DatasetArg,
    yolo: YoloOpt = None,
    crops: CropsOpt = False,
    unchecked: UncheckedOpt = False,
) -> None:
    """Write a dataset's YOLO files or card crops (its COCO and Label Studio files are kept up
    to date by every change)."""
    from vision.dataset.store import dataset_folder

    kind = _yolo_kind(yolo)
    folder = dataset_folder(dataset, create=False)
    if kind is None and not crops:
        raise fail("nothing to export: give --yolo boxes, --yolo pose or --crops")
    _export(folder, kind, crops, unchecked=unchecked)


@label_app.command("import")
@user_errors
def import_command(
    export: Annotated[
        Path,
        typer.Argument(
            help="A Label Studio export (Export -> JSON).",
            metavar="EXPORT.json",
            show_default=False,
        ),
    ],  # fmt: skip
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DATASET_DIR", help="The dataset folder.")
    ],
) -> None:
    """Bring photos a person checked in Label Studio back into a dataset."""
    from vision.dataset.store import dataset_folder, import_label_studio

    folder = dataset_folder(out, create=True)
    taken, new = import_label_studio(folder, export)
    typer.echo(
        f"{taken} checked photo{'s' if taken != 1 else ''} taken from {export} into {folder}"
        + (f" ({new} new to it)" if new else "")
    )


@label_app.command("review")
@user_errors
def review_command(
    dataset: DatasetArg,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            metavar="N",
            help="Local port (0: any free one; default 8736).",
        ),
    ] = None,  # fmt: skip
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open the page in a browser.")
    ] = False,
) -> None:
    """Check a dataset's cards in a web page: accept with Enter, fix with the keyboard and mouse."""
    from vision.dataset.review_server import DEFAULT_PORT, make_server
    from vision.dataset.store import dataset_folder, load_photos

    folder = dataset_folder(dataset, create=False)
    photos = load_photos(folder)
    chosen = DEFAULT_PORT if port is None else port
    try:
        server = make_server(folder, chosen)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        raise fail(
            f"port {chosen} is in use (another review running?); give --port N, or --port 0 "
            "for any free one"
        ) from None
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    left = sum(not p.checked for p in photos)
    typer.echo(f"review {folder} ({left} of {len(photos)} photos to check) at {url}")
    typer.echo("every change is saved at once; Ctrl-C stops the page")
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped; every change was saved")
    finally:
        server.server_close()
