"""Many photos through the pipeline: where annotated copies go, a process pool, per-photo errors.

This is the library side of ``setvision photo``: the CLI parses options, calls
:func:`process_photos` and prints each :class:`PhotoOutcome` as it arrives. A photo that cannot
be read becomes an outcome with ``error`` set; the others are still processed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from vision.errors import SetVisionError

__all__ = [
    "IMAGE_SUFFIXES",
    "OUTPUT_SUFFIX",
    "PhotoJob",
    "PhotoOutcome",
    "annotated_path",
    "copy_source",
    "same_photos",
    "is_annotated_copy",
    "list_photos",
    "plan_jobs",
    "process_photos",
]

#: File name endings treated as image files for ``--out`` (a file, not a folder).
IMAGE_SUFFIXES: Final = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
#: Annotated copies are named ``NAME.sets.jpg`` unless ``--out`` names them.
OUTPUT_SUFFIX: Final = ".sets.jpg"
#: Written into every JPEG and PNG annotated copy (a JPEG comment segment, COM 0xFFFE; a PNG
#: ``tEXt`` chunk; viewers ignore both). A folder scan skips the files that carry it, and only
#: those: a photo of the user's that happens to be named ``a.sets.jpg`` is read, so it is an
#: input photo and is never overwritten as if it were an earlier copy, not even with
#: ``--force``.
COPY_MARK: Final = b"setvision annotated copy"
#: Followed, since copies name their photo, by ``of NAME`` (the photo's file name, UTF-8, at
#: most :data:`_SOURCE_BYTES` bytes): a copy of another photo is never taken for this photo's
#: earlier copy (``a.bmp``'s ``a.sets.jpg`` when ``a.gif`` is read in a later run).
_OF: Final = b" of "
_SOURCE_BYTES: Final = 180
_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"


def _mark(source: str | None) -> bytes:
    """:data:`COPY_MARK`, with `` of NAME`` when the photo's file name is given."""
    if source is None:
        return COPY_MARK
    name = source.encode("utf-8", "surrogateescape")[:_SOURCE_BYTES]
    return COPY_MARK + _OF + name.replace(b"\x00", b"?")


def mark_jpeg(data: bytes, source: str | None = None) -> bytes:
    """JPEG bytes with a comment segment holding :data:`COPY_MARK` (and ``of`` the photo's
    file name ``source``) inserted after the start of image and its APP0 (JFIF) segment, where
    one is; other bytes are returned unchanged."""
    if data[:2] != b"\xff\xd8":
        return data
    at = 2
    if data[2:4] == b"\xff\xe0" and len(data) >= 6:
        at = 4 + int.from_bytes(data[4:6], "big")
    mark = _mark(source)
    segment = b"\xff\xfe" + (len(mark) + 2).to_bytes(2, "big") + mark
    return data[:at] + segment + data[at:]


def mark_png(data: bytes, source: str | None = None) -> bytes:
    """PNG bytes with a ``tEXt`` chunk (keyword ``Comment``) holding :data:`COPY_MARK` (and
    ``of`` the photo's file name ``source``) inserted after the IHDR chunk (the PNG
    specification: tEXt may come anywhere between IHDR and IEND); other bytes are returned
    unchanged."""
    import zlib

    if data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR":
        return data
    at = 8 + 12 + int.from_bytes(data[8:12], "big")  # length, type, data, CRC
    body = b"tEXt" + b"Comment\x00" + _mark(source)
    chunk = (len(body) - 4).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    return data[:at] + chunk + data[at:]


def copy_source(path: str | Path) -> str | None:
    """The file name of the photo an annotated copy was made from (as :func:`mark_jpeg` and
    :func:`mark_png` write it), or None: not a copy, unreadable, or a copy written before copies
    named their photo."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return None
    start = head.find(COPY_MARK + _OF)
    if start < 0:
        return None
    start += len(COPY_MARK + _OF)
    if head[:2] == b"\xff\xd8":  # the comment segment's length says where the name ends
        seg = head.rfind(b"\xff\xfe", 0, start)
        end = seg + 2 + int.from_bytes(head[seg + 2 : seg + 4], "big") if seg >= 0 else -1
    elif head[:8] == _PNG_SIGNATURE:  # the chunk's length, counted from after "tEXt"
        chunk = head.rfind(b"tEXt", 0, start)
        end = chunk + 4 + int.from_bytes(head[chunk - 4 : chunk], "big") if chunk >= 4 else -1
    else:
        return None
    if end <= start or end > len(head):
        return None
    return head[start:end].decode("utf-8", "surrogateescape")


def is_annotated_copy(path: str | Path) -> bool:
    """Whether ``path`` is a JPEG or PNG carrying :data:`COPY_MARK` in its first bytes (an
    annotated copy written by ``setvision photo``); False for anything unreadable."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the read
            return False
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return False
    return (head[:2] == b"\xff\xd8" or head[:8] == _PNG_SIGNATURE) and COPY_MARK in head


def list_photos(paths: Sequence[str | Path], *, recursive: bool = False) -> list[Path]:
    """Expand folders into their photos (:func:`vision.io.list_images`); keep files as given.

    Annotated copies inside folders (``*.sets.jpg`` carrying :data:`COPY_MARK`) are skipped so
    that running twice on a folder does not read its own output; a photo named more than once
    is listed once.

    Args:
        paths: photos and folders.
        recursive: also take the photos in the folders' subfolders (``--recursive``).

    Raises:
        FileNotFoundError: if a path does not exist.
        SetVisionError: if a folder holds no photo.
    """
    from vision.io import list_images

    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            images = list_images(path, recursive=recursive)
            found = [p for p in images if not is_annotated_copy(p)]
            if not found:
                where = "this folder or its subfolders" if recursive else "this folder"
                hint = ""
                if images:  # only annotated copies of an earlier run
                    copies = (
                        "1 annotated copy"
                        if len(images) == 1
                        else f"{len(images)} annotated copies"
                    )
                    hint = f"; {copies} written by setvision skipped"
                if not recursive and any(
                    p.is_dir() and not p.name.startswith(".") for p in path.iterdir()
                ):
                    hint = "; it has subfolders: use --recursive to look in them"
                if unreadable := unreadable_photos(path, recursive=recursive):
                    hint = f"; {unreadable}"
                raise SetVisionError(f"{path}: no photos in {where} (JPEG, PNG, ...){hint}")
            out.extend(found)
        elif path.exists() or path.is_symlink():  # a broken link: reading it says so
            out.append(path)
        elif str(raw) == "-":
            raise FileNotFoundError(
                "-: no such file or folder (a photo is not read from standard input; name its file)"
            )
        elif _URL.match(str(raw)):  # Path() would also eat a slash: "https:/example.com"
            raise FileNotFoundError(
                f"{raw}: is a URL; setvision reads files only (download the photo first)"
            )
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    # A photo named twice (or once directly and once in its folder) is read once, under its own
    # name rather than a link's where both are given (a folder with a.jpg and a link to it).
    unique: dict[Path, Path] = {}
    for photo in out:
        kept = unique.setdefault(_real(photo), photo)
        if kept.is_symlink() and not photo.is_symlink():
            unique[_real(photo)] = photo
    return list(unique.values())


#: A path that is a URL (``https://...``, ``rtsp://...``): a scheme, a colon and two slashes.
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


#: Folders of the system's devices and processes: a photo named there (``/dev/stdin``,
#: ``/proc/self/fd/0``) is a stream, and nothing is written beside it.
_SYSTEM_FOLDERS: Final = (Path("/dev"), Path("/proc"), Path("/sys"))


def _copy_may_go_beside(photo: Path) -> bool:
    """Whether an annotated copy may be written beside ``photo``: it is a regular file (not a
    pipe or a device), named outside the system's device folders (``/dev/stdin`` redirected
    from a file is a regular file, but ``/dev/stdin.sets.jpg`` is no place for a copy)."""
    folder = Path(os.path.abspath(photo)).parent
    if any(folder == system or system in folder.parents for system in _SYSTEM_FOLDERS):
        return False
    try:
        return stat.S_ISREG(photo.stat().st_mode)
    except OSError:  # vanished or unreadable: reading it says so
        return True


def same_photos(paths: Sequence[Path]) -> list[list[Path]]:
    """The entries of ``paths`` that are one photo (the same name given again, or the same file
    through a link or another path), in groups of two or more, in the order given;
    :func:`list_photos` reads each photo once."""
    groups: dict[Path, list[Path]] = {}
    for path in paths:
        groups.setdefault(_real(path), []).append(path)
    return [group for group in groups.values() if len(group) > 1]


def unreadable_photos(folder: Path, *, recursive: bool = False) -> str:
    """The files of ``folder`` that no folder listing reads, said to the user: its HEIC/HEIF/AVIF
    photos (:data:`vision.io.UNREADABLE_EXTENSIONS`), "2 HEIC/HEIF/AVIF photos not read (OpenCV
    cannot read them); export them as JPEG or PNG", and its videos
    (:data:`vision.io.VIDEO_EXTENSIONS`), "1 video not read (setvision photo reads still
    images)"; with ``recursive``, its subfolders that cannot be listed, "1 subfolder not read
    (permission denied): a/locked"; "" for none."""
    from vision.io import UNREADABLE_EXTENSIONS, VIDEO_EXTENSIONS, list_images, walk_folders

    said = []
    if recursive:
        errors: list[OSError] = []
        for _ in walk_folders(folder, errors):
            pass
        if errors:
            names = [str(e.filename) for e in errors[:3]] + (["..."] if len(errors) > 3 else [])
            reason = errors[0].strerror or "cannot be listed"
            reason = reason[:1].lower() + reason[1:]
            plural = "s" if len(errors) != 1 else ""
            said.append(f"{len(errors)} subfolder{plural} not read ({reason}): {', '.join(names)}")
    n = len(list_images(folder, recursive=recursive, extensions=UNREADABLE_EXTENSIONS))
    if n:
        said.append(
            f"{n} HEIC/HEIF/AVIF photo{'s' if n != 1 else ''} not read (OpenCV cannot read "
            f"{'them' if n != 1 else 'it'}); export {'them' if n != 1 else 'it'} as JPEG or PNG"
        )
    n = len(list_images(folder, recursive=recursive, extensions=VIDEO_EXTENSIONS))
    if n:
        said.append(
            f"{n} video{'s' if n != 1 else ''} not read (setvision photo reads still images)"
        )
    return "; ".join(said)


def annotated_path(photo: Path, out: Path | None, many: bool, folder: bool = False) -> Path:
    """Where the annotated copy of ``photo`` goes.

    Args:
        photo: the input photo.
        out: ``--out``: a folder (existing, or a path without an image suffix, or any path when
            there are several photos), or a file for a single photo; None: beside the input.
        many: several photos are being processed.
        folder: ``out`` is a folder whatever its name (``--out new.jpg/``, with the slash).

    Returns:
        ``NAME.sets.jpg`` beside the photo or in the ``out`` folder, or ``out`` itself.
    """
    name = photo.stem + OUTPUT_SUFFIX
    if out is None:
        return photo.with_name(name)
    if folder or out.is_dir() or many or out.suffix.lower() not in IMAGE_SUFFIXES:
        return out / name
    return out


@dataclass(frozen=True)
class PhotoJob:
    """One photo to process.

    Attributes:
        photo: input path.
        output: where to write the annotated copy, or None not to write one.
        keep_image: return the annotated copy in the outcome (``--show``), written or not.
        overwrite: replace an existing file at ``output`` (``--force``); else the file is
            created only if it does not exist when written (another run may have made it).
        refusal: why no copy is written although one was asked for (the photo is read and
            its readings reported all the same, with this as its error).
    """

    photo: Path
    output: Path | None
    keep_image: bool = False
    overwrite: bool = False
    refusal: str | None = None

    @property
    def draw(self) -> bool:
        """Whether the annotated copy is drawn at all."""
        return self.output is not None or self.keep_image


@dataclass(frozen=True)
class PhotoOutcome:
    """What happened to one photo (picklable: crosses process boundaries).

    Attributes:
        photo: input path.
        result: the ``--json`` object (:meth:`vision.table.Table.to_json`), None on error.
        written: the annotated file written, if any.
        error: one-line message when the photo could not be processed.
        annotated: (H, W, 3) uint8 BGR annotated copy when the job asked to keep it.
        extra: ``created_folder``: the folder of the copy, when writing it created that folder
            (and any missing above it); ``annotated_scale``: how many times the photo's size
            the copy is drawn, when more than 1 (:func:`vision.overlay.annotation_scale`).
    """

    photo: Path
    result: dict[str, Any] | None = None
    written: Path | None = None
    error: str | None = None
    annotated: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def plan_jobs(
    photos: Sequence[Path],
    out: Path | None,
    *,
    draw: bool,
    force: bool,
    keep_image: bool = False,
    folder: bool = False,
) -> list[PhotoJob]:
    """Decide each photo's output; refuse to overwrite existing files unless ``force``.

    Args:
        photos: the input photos.
        out: ``--out`` (see :func:`annotated_path`).
        draw: write annotated copies (False: ``--no-image``).
        force: overwrite existing files.
        keep_image: return each annotated copy in its outcome (``--show``), written or not.
        folder: ``out`` was given as a folder (with a trailing slash), whatever its name.

    Returns:
        One job per photo. A photo whose copy may not be written (the file exists, it is an
        input photo, a read-only folder, a link) is still read: its job carries the refusal.

    Raises:
        SetVisionError: if a file stands where a folder above ``out`` should be
            (``notes.txt/x.jpg``), if ``out`` names a single file but several photos are
            given, a name that is only an image suffix (``.jpg``), or, for one photo, an
            existing file that is not an image (``/dev/null``)
            or a new name with a non-image suffix of letters (``res.txt``; ``run.v2`` is taken
            as a folder).
    """
    many = len(photos) > 1
    if out is not None and not folder and out.name.lower() in IMAGE_SUFFIXES:
        # ".jpg" is a hidden name without a suffix to the path library: it became a folder.
        raise SetVisionError(
            f"--out {out}: is only an image suffix; name a file ({out.parent / 'copy'}"
            f"{out.name}) or a folder"
        )
    blocker = None if out is None else _file_in_the_way(out)
    if blocker is not None:
        raise SetVisionError(f"--out {out}: {blocker} is a file, not a folder")
    if out is not None and folder and out.exists() and not out.is_dir():
        raise SetVisionError(f"--out {out}/: is a file, not a folder")
    if out is not None and many and out.exists() and not out.is_dir():
        raise SetVisionError(f"--out {out}: is a file, but {len(photos)} photos need a folder")
    named_file = out is not None and not folder and out.suffix.lower() in IMAGE_SUFFIXES
    if out is not None and many and named_file and not out.exists():
        raise SetVisionError(
            f"--out {out}: names one image file, but {len(photos)} photos were given; "
            "give a folder instead"
        )
    if out is not None and not many and not folder and out.suffix.lower() not in IMAGE_SUFFIXES:
        if out.exists() and not out.is_dir():
            raise SetVisionError(
                f"--out {out}: is neither a folder nor an image file name "
                f"({', '.join(IMAGE_SUFFIXES)})"
            )
        if not out.exists() and out.suffix[1:].isalpha():
            # "res.txt" is a mistyped file name far more often than a folder to be made.
            raise SetVisionError(
                f"--out {out}: setvision does not write {out.suffix} files; name an image "
                f"({', '.join(IMAGE_SUFFIXES)}) or a folder"
            )
    inputs = {_real(photo) for photo in photos}
    input_files = {_file_id(photo) for photo in photos} - {None}
    jobs = []
    seen: set[Path] = set()
    for photo in photos:
        target = annotated_path(photo, out, many, folder) if draw else None

        # A name taken by an earlier copy, or, when setvision chose it, by a photo of the user's
        # (a.jpg beside their own a.sets.jpg, read in this run or not): the next free name
        # (a.jpg.sets.jpg). The user's photo is never written over, not even with --force.
        def taken(candidate: Path, photo: Path = photo) -> bool:
            return _users_photo(candidate, inputs) or _other_photos_copy(candidate, photo)

        if target is not None and out is None and not _copy_may_go_beside(photo):
            jobs.append(PhotoJob(photo, None, keep_image, refusal=(
                f"{photo} names a device or a stream, not a photo's file: no annotated copy "
                "is written beside it; use --out FILE or --no-image")))  # fmt: skip
            continue
        if target is not None and (_real(target) in seen or (target != out and taken(target))):
            target = _unused_name(target, photo, seen | inputs, taken)
        if target is not None:
            seen.add(_real(target))
        advice = "use --out or --no-image" if out is None else "choose another --out"
        try:
            refusal = _refusal(target, out, force, inputs, input_files, advice)
        except OSError as error:  # a name too long for the file system, a folder not searchable
            refusal = f"{target}: {(error.strerror or str(error)).lower()}; {advice}"
        if refusal is not None:
            jobs.append(PhotoJob(photo, None, keep_image, refusal=refusal))
            continue
        jobs.append(PhotoJob(photo, target, keep_image, overwrite=force))
    return jobs


def _refusal(
    target: Path | None,
    out: Path | None,
    force: bool,
    inputs: set[Path],
    input_files: set[tuple[int, int]],
    advice: str,
) -> str | None:
    """Why the annotated copy ``target`` may not be written (see :func:`plan_jobs`), or None.

    Raises:
        OSError: if the file system refuses to look the name up (too long, say).
    """
    if target is None:
        return None
    if _real(target) in inputs or (target.exists() and _file_id(target) in input_files):
        # Never write over a photo being read (nor a hard link to one), not even with
        # --force: it would be lost. The photo is still read and reported.
        return f"{target} is an input photo: no annotated copy is written; {advice}"
    refusal = _link_refusal(target)
    if refusal is not None:
        return refusal
    # (A name setvision chose that a photo of the user's bears was changed before: plan_jobs.)
    if target.exists() and not target.is_symlink() and not target.is_file():
        # a folder, a FIFO, a device: never written to, not even with --force
        return f"{target} exists and is not a file; use --out or --no-image"
    if target.exists() and not force:
        other = "--out" if out is None else "another --out"
        return f"{target} exists; use --force to overwrite, {other} or --no-image"
    if out is None and _read_only(_real(target).parent):
        return (
            f"{target.parent} is a read-only folder: no annotated copy is written beside "
            "its photos; use --out or --no-image"
        )
    if out is not None:  # the folder the file lands in: a link's, not the link's own
        where = _existing_folder(_real(target).parent)
        if where is not None and _read_only(where):
            return (
                f"{where} is a read-only folder: no annotated copy is written; choose another --out"
            )
    return None


def _real(path: Path) -> Path:
    """The absolute path with every symbolic link followed, as ``Path.resolve``, but a symlink
    loop does not raise (``os.path.realpath``): such a path stays, and reading it gives its
    one-line error."""
    return Path(os.path.realpath(path))


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of an existing file, None if it cannot be read (two names of one file,
    hard links included, share it)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _read_only(folder: Path) -> bool:
    """The folder is marked read-only (no write permission for anyone): a dataset or source
    folder. Checked on the mode bits, since a process running as root may write anyway."""
    try:
        return folder.stat().st_mode & 0o222 == 0
    except OSError:
        return False


def _existing_folder(folder: Path) -> Path | None:
    """``folder`` or its nearest existing ancestor (what a new path would be made in)."""
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            return candidate
    return None


def _link_refusal(target: Path) -> str | None:
    """Why ``target``, a symbolic link, must not be written (through it), or None."""
    if not target.is_symlink():
        return None
    where = _real(target)
    if not target.exists():  # it would only fail later with a puzzling message
        return f"{target} is a broken link (to {where}); remove it or choose another --out"
    if where.suffix.lower() not in IMAGE_SUFFIXES:  # never written into a file of another kind
        return f"{target} is a link to {where}, which is not an image file; choose another --out"
    return None


def _unused_name(
    target: Path, photo: Path, seen: set[Path], taken: Callable[[Path], bool] = lambda c: False
) -> Path:
    """Another name for ``target``, already taken by an earlier photo (``a.jpg`` and ``a.png``)
    or by a file of the user's (``taken``).

    The full name comes first (``a.png.sets.jpg``), then a number (``a.png.2.sets.jpg``, for
    photos of the same name from several folders into one ``--out`` folder).
    """
    candidate = target.with_name(photo.name + OUTPUT_SUFFIX)
    k = 2
    while _real(candidate) in seen or taken(candidate):
        candidate = target.with_name(f"{photo.name}.{k}{OUTPUT_SUFFIX}")
        k += 1
    return candidate


def _users_photo(path: Path, inputs: set[Path]) -> bool:
    """Whether ``path`` is a photo of this run or a file setvision did not write (a photo of
    the user's bearing a copy's name); False where the file system will not say (a name too
    long: the refusal then says why)."""
    try:
        return _real(path) in inputs or (path.is_file() and not is_annotated_copy(path))
    except OSError:
        return False


def _other_photos_copy(path: Path, photo: Path) -> bool:
    """Whether ``path`` is an annotated copy that names another photo than ``photo`` (a
    photo's name; copies written before copies named their photo say nothing, and count as
    this photo's)."""
    source = copy_source(path)
    return source is not None and source != photo.name


_WORKER: dict[str, Any] = {}


def _init_worker(model: str | None, options: dict[str, Any]) -> None:
    from vision.classify import CardClassifier

    _WORKER["classifier"] = CardClassifier(model)
    _WORKER["options"] = options


def _init_pool_worker(model: str | None, options: dict[str, Any]) -> None:
    # Ctrl-C reaches the whole process group: only the parent handles it (one line, exit 130;
    # it then terminates the pool), or every worker prints a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A pool worker whose initialiser raises is restarted forever: keep the error instead.
    try:
        _WORKER.pop("error", None)
        _init_worker(model, options)
    except Exception as error:  # reported per photo by _run
        _WORKER["error"] = f"could not start a worker: {' '.join(str(error).split())}"


def _check_model(model: str | None) -> None:
    """Find and verify the model here so a bad model is one clear error, not one per worker.

    Only the file and its checksum are checked: no onnxruntime session (and its threads) is
    created in the parent before the workers fork.
    """
    from vision.models import load_model_info

    load_model_info(model)


def _run(job: PhotoJob) -> PhotoOutcome:
    import cv2

    from vision.pipeline import process_photo

    if "error" in _WORKER:
        return PhotoOutcome(job.photo, error=f"{job.photo}: {_WORKER['error']}")
    try:
        done = process_photo(job.photo, _WORKER["classifier"], draw=job.draw, **_WORKER["options"])
    except (SetVisionError, ValueError, FileNotFoundError, OSError) as error:
        message = " ".join(str(error).split())
        if str(job.photo) not in message:
            message = f"{job.photo}: {message}"
        return PhotoOutcome(job.photo, error=message)
    except cv2.error as error:  # one photo OpenCV cannot handle must not stop the others
        reason = " ".join(str(error).split()) or "unknown error"
        return PhotoOutcome(job.photo, error=f"{job.photo}: could not be processed ({reason})")
    result = done.table.to_json(str(job.photo))
    kept = done.annotated if job.keep_image else None
    written = None
    if job.refusal is not None:
        return PhotoOutcome(job.photo, result, error=job.refusal, annotated=kept)
    extra: dict[str, Any] = {}
    if done.annotated is not None and done.annotated_scale > 1:
        extra["annotated_scale"] = done.annotated_scale
    if job.output is not None and done.annotated is not None:
        missing = _missing_folder(job.output)
        problem = _write_image(
            job.output, done.annotated, exclusive=not job.overwrite, source=job.photo.name
        )
        if problem:
            return PhotoOutcome(job.photo, result, error=problem, annotated=kept)
        written = job.output
        if missing is not None:  # said, so a mistyped --out path does not go unnoticed
            extra["created_folder"] = job.output.parent
    return PhotoOutcome(job.photo, result, written, annotated=kept, extra=extra)


def _missing_folder(out: Path) -> Path | None:
    """The outermost folder above ``out`` that does not exist yet (writing ``out`` creates it
    and those inside it), or None."""
    missing = None
    for parent in out.parents:
        if parent.exists() or parent.is_symlink():
            break
        missing = parent
    return missing


def _file_in_the_way(out: Path) -> Path | None:
    """The nearest existing folder above ``out`` if it is in fact a file (``notes.txt/x.jpg``)."""
    for parent in out.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def _write_image(
    path: Path, image: Any, *, exclusive: bool = False, source: str | None = None
) -> str | None:
    """Encode ``image`` (BGR uint8) for ``path``'s suffix and write it, marked as the copy of
    the photo named ``source`` (:func:`mark_jpeg`); a message on failure.

    ``exclusive``: create the file only if it does not exist yet (two runs writing the same
    name at once: the second is refused instead of overwriting the first)."""
    import cv2

    jpeg = path.suffix.lower() in ("", ".jpg", ".jpeg", ".jpe")
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if jpeg else []  # other encoders warn of the key
    try:
        ok, encoded = cv2.imencode(path.suffix or ".jpg", image, params)
        if not ok:
            return f"{path}: cannot encode an image with this suffix; use .jpg or .png"
        data = mark_jpeg(encoded.tobytes(), source) if jpeg else mark_png(encoded.tobytes(), source)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Through a link (an --out the user named), its file is written and the link kept.
        write_whole(_real(path) if path.is_symlink() else path, data, exclusive=exclusive)
    except FileExistsError:
        return f"{path} exists (written meanwhile by another run?); use --force to overwrite"
    except OSError as error:
        reason = error.strerror or str(error)
        return f"{path}: could not write the annotated copy ({reason}); use --out or --no-image"
    return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: The process's umask, read once: the mode of a file written whole (:func:`write_whole`) is
#: that of one ``open`` would have made.
_UMASK: Final = _umask()


def write_whole(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write ``data`` to ``path`` whole or not at all.

    The bytes go to a hidden temporary file in ``path``'s folder, which then takes ``path``'s
    name: replacing the file there (``os.replace``; the new file gets the old one's permission
    bits, but is a new file: another hard link to the old one keeps the old content), or, with
    ``exclusive``, only if the name is still free (``os.link``; two runs writing one name at
    once: the second is refused). A write that fails part-way (a full disk, a quota, Ctrl-C)
    leaves no truncated file behind and the file it would have replaced as it was. On a file
    system without hard links, ``exclusive`` creates ``path`` itself and removes it again if
    the write fails; in a folder that may not be written, an existing file that may is
    rewritten in place.

    Raises:
        FileExistsError: with ``exclusive``, if ``path`` exists.
        OSError: if the folder cannot be written (permission, space, ...).
    """
    try:
        # A short fixed name: the copy's own name may be near the file system's 255 bytes.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".setvision-", suffix=".part")
    except PermissionError:
        if exclusive or not path.is_file():
            raise
        # A file the user may write in a folder they may not: written in place, as before.
        with open(path, "wb") as file:
            file.write(data)
        return
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        if not exclusive:
            try:  # a file replaced keeps its permissions
                shutil.copymode(path, temporary)
            except OSError:
                os.chmod(temporary, 0o666 & ~_UMASK)
            os.replace(temporary, path)
            return
        os.chmod(temporary, 0o666 & ~_UMASK)
        try:
            os.link(temporary, path)
        except FileExistsError:
            raise
        except OSError:  # no hard links here (FAT, some network shares)
            _create_whole(path, data)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _create_whole(path: Path, data: bytes) -> None:
    """Create ``path`` (refused if it exists) with ``data``; removed again if the write fails."""
    with open(path, "xb") as file:
        try:
            file.write(data)
            file.flush()
        except BaseException:
            path.unlink(missing_ok=True)
            raise


def process_photos(
    jobs: Sequence[PhotoJob],
    *,
    model: str | Path | None = None,
    jobs_n: int = 1,
    classifier: Any = None,
    **options: Any,
) -> Iterator[PhotoOutcome]:
    """Run the pipeline on each photo, in input order, one outcome per photo.

    Args:
        jobs: from :func:`plan_jobs`.
        model: classifier ``.onnx`` path (None: the packaged model).
        jobs_n: worker processes (1: in this process). Each worker loads its own classifier.
        classifier: use this classifier instead of loading one (in-process only; tests).
        **options: ``max_pixels`` for :func:`vision.io.load_image` (``--max-pixels``), the rest
            passed to :func:`vision.pipeline.recognise` (``mixed_decks``, ``uncertain_below``,
            ``detector`` in-process only).

    Yields:
        :class:`PhotoOutcome` per job, in order.

    Raises:
        SetVisionError: if the classifier cannot be loaded.
    """
    if jobs_n <= 1 or len(jobs) <= 1 or classifier is not None:
        if classifier is None:
            _init_worker(str(model) if model else None, options)
        else:
            _WORKER["classifier"], _WORKER["options"] = classifier, options
        for job in jobs:
            yield _run(job)
        return
    import multiprocessing

    _check_model(str(model) if model else None)
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    workers = max(1, min(jobs_n, len(jobs), os.cpu_count() or 1))
    init_args = (str(model) if model else None, options)
    with (
        _ctrl_c_noted() as interrupted,
        context.Pool(workers, _init_pool_worker, init_args) as pool,
    ):
        outcomes = pool.imap(_run, jobs, chunksize=1)
        while True:
            try:
                outcome = outcomes.next(timeout=_POLL_S)
            except multiprocessing.TimeoutError:
                outcome = None
            except StopIteration:
                break
            if interrupted():
                raise KeyboardInterrupt
            if outcome is not None:
                yield outcome
        if interrupted():  # came with the last results
            raise KeyboardInterrupt


#: How often (s) the parent of a worker pool looks for a Ctrl-C noted while it waits.
_POLL_S: Final = 0.1


@contextlib.contextmanager
def _ctrl_c_noted() -> Iterator[Callable[[], bool]]:
    """While a worker pool runs, Ctrl-C (SIGINT) is only noted, and the caller raises
    KeyboardInterrupt itself between results (``yield`` a function saying whether it came).

    Python's own handler raises KeyboardInterrupt wherever the main thread happens to be;
    raised inside a finaliser (the garbage collector runs them among the pool's bookkeeping) it
    is only printed ("Exception ignored in ...") and the run goes on. A suspect for a Ctrl-C
    lost once under load (the run went to its end and exited 0). Outside the main thread (no
    signal handler can be set there) nothing changes."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    came: list[bool] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(True))
    try:
        yield lambda: bool(came)
    finally:
        signal.signal(signal.SIGINT, previous)
