"""Load photos as a person sees them, with errors a user can act on.

:func:`load_image` returns a BGR uint8 (H, W, 3) frame from a path or from encoded bytes:

- EXIF orientation is applied (``cv2.IMREAD_COLOR`` does this; verified by a test with a
  hand-made EXIF block), so a portrait phone photo comes out portrait;
- greyscale becomes 3-channel BGR, 16-bit images are scaled to 8 bits (OpenCV divides by 256);
- a PNG/WebP with transparency is composited over white, as viewers show it (such images are
  decoded without EXIF orientation, which they practically never carry);
- the pixel dimensions declared in the header (JPEG, PNG, BMP, GIF, WebP) are checked *before*
  decoding, so a decompression bomb (a small file declaring a gigapixel image) fails with a
  message instead of exhausting memory; other formats rely on OpenCV's own limit
  (``OPENCV_IO_MAX_IMAGE_PIXELS``, 2^30 pixels by default);
- missing, empty, truncated, directory and non-image inputs raise ``FileNotFoundError`` or
  :class:`~vision.errors.SetVisionError` naming the file and what to do.

:func:`list_images` lists the photos in a folder (extensions in :data:`IMAGE_EXTENSIONS`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import struct
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import SetVisionError
from vision.settings import MAX_PIXELS

__all__ = [
    "IMAGE_EXTENSIONS",
    "UNREADABLE_EXTENSIONS",
    "MAX_BYTES",
    "MAX_PIXELS",
    "ImageSource",
    "decode_scale",
    "decoder_messages",
    "frame_count",
    "is_gif",
    "is_palette_png",
    "jpeg_quality",
    "image_size",
    "list_images",
    "load_image",
    "walk_folders",
]

#: File name extensions (lower case) that :func:`list_images` picks up; all decodable by OpenCV.
IMAGE_EXTENSIONS: Final = frozenset(
    {".jpg", ".jpeg", ".jpe", ".png", ".bmp", ".dib", ".webp", ".tif", ".tiff", ".pbm", ".pgm",
     ".ppm", ".pnm", ".gif"}
)  # fmt: skip
#: Extensions of photos OpenCV cannot read (HEIC/HEIF from phones, AVIF): not listed as photos
#: by :func:`list_images`, but counted by ``setvision photo`` so that a folder of them is not
#: passed over in silence.
UNREADABLE_EXTENSIONS: Final = frozenset({".heic", ".heif", ".hif", ".avif"})
#: Extensions of video files: a folder's videos are not photos, and are said to be skipped.
VIDEO_EXTENSIONS: Final = frozenset(
    {".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".wmv", ".mpg", ".mpeg", ".3gp", ".mts"}
)
#: Default file size limit in bytes (no photo is this large; a video or disk image might be).
MAX_BYTES: Final = 512 * 1024 * 1024

#: A path (``str`` or ``os.PathLike``) or the encoded file contents.
ImageSource = str | os.PathLike[str] | bytes | bytearray | memoryview

_HEIF_BRANDS: Final = (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif")


def _is_video(head: bytes) -> bool:
    """True for the containers of common video files, from their first bytes: ISO media (MP4,
    MOV, M4V, 3GP: an ``ftyp`` box whose brand is not a HEIF/AVIF image), AVI (RIFF ``AVI ``),
    Matroska and WebM (the EBML magic)."""
    if len(head) >= 12 and head[4:8] == b"ftyp":
        return head[8:12] not in _HEIF_BRANDS
    return head[:4] == b"\x1aE\xdf\xa3" or (head[:4] == b"RIFF" and head[8:12] == b"AVI ")


def load_image(
    source: ImageSource,
    *,
    max_pixels: int = MAX_PIXELS,
    max_bytes: int = MAX_BYTES,
    min_long_side: int | None = None,
) -> npt.NDArray[np.uint8]:
    """Decode a photo into a BGR uint8 frame, oriented as a person sees it.

    Args:
        source: path to an image file, or its encoded bytes.
        max_pixels: refuse images whose header declares more pixels than this.
        max_bytes: refuse files larger than this many bytes.
        min_long_side: if given, a JPEG is decoded at 1/2, 1/4 or 1/8 of its size (libjpeg's
            DCT scaling: a 12 MP photo decodes in about half the time at 1/2) while its long
            side stays at least this many pixels; other formats are decoded at full size.
            The frame is then smaller than the photo: pixel (x, y) of a frame reduced by f
            covers photo pixels f*x .. f*x + f - 1 (see :func:`decode_scale`).

    Returns:
        (H, W, 3) uint8 BGR array, EXIF orientation applied (H, W as displayed).

    Raises:
        FileNotFoundError: if a path does not exist.
        SetVisionError: if the path is a directory, or the data is empty, too large, truncated,
            not an image, an unsupported format (HEIC/AVIF), or declares too many pixels.
    """
    data, name = _read(source, max_bytes)
    if not data:
        raise SetVisionError(f"{name} is empty (0 bytes); it is not a photo")
    head = bytes(data[:64])
    if len(head) >= 12 and head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS:
        raise SetVisionError(
            f"{name} is a HEIC/HEIF/AVIF image, which OpenCV cannot read; "
            "export it as JPEG or PNG (on a phone: Settings > Camera > Formats > Most Compatible)"
        )
    if _is_video(head):
        raise SetVisionError(
            f"{name} is a video, not a photo; setvision photo reads still images "
            "(save a frame as JPEG or PNG)"
        )
    size = image_size(data)
    if size is not None:
        width, height = size
        if width <= 0 or height <= 0:
            raise SetVisionError(f"{name} declares an empty image ({width} x {height} pixels)")
        if width * height > max_pixels:
            declared, limit = f"{_megapixels(width * height)} MP", f"{_megapixels(max_pixels)} MP"
            if declared == limit or max_pixels < 1000:  # rounded alike, or shown as 1e-06 MP
                declared, limit = f"{width * height:,} pixels", f"{max_pixels:,}-pixel"
            raise SetVisionError(
                f"{name} declares {width} x {height} pixels ({declared}), more than the {limit} "
                "limit; resize the photo or, if it is genuine, raise the limit "
                "(setvision photo --max-pixels)"
            )
        if width * height > _opencv_pixel_limit():
            declared = f"declares {width} x {height} pixels ({_megapixels(width * height)} MP)"
            raise _beyond_opencv(name, f"{declared}, more than")
    if _is_jpeg(head) and _jpeg_truncated(data):
        raise SetVisionError(f"{name} is a truncated JPEG (the file ends early); copy it again")
    buffer = np.frombuffer(data, dtype=np.uint8)
    try:
        with decoder_messages() as messages:
            if _has_alpha(data):
                frame = _decode_alpha(buffer, name)
            else:
                frame = cv2.imdecode(buffer, _decode_flag(head, size, min_long_side))
    except cv2.error as exc:  # OpenCV's own size limit, or a corrupt stream
        if "CV_IO_MAX_IMAGE_PIXELS" in str(exc):  # a format whose size is not read above
            raise _beyond_opencv(name, "has more pixels than") from exc
        raise SetVisionError(f"{name} could not be decoded: {str(exc).strip()}") from exc
    damage = [
        line
        for line in messages
        if any(word in line for word in _DAMAGE_WORDS) and "extraneous bytes" not in line
    ]
    if frame is not None and damage:
        # The decoder filled in what it could not read (grey blocks): readings would be
        # made up for part of the photo.
        raise SetVisionError(f"{name} is damaged ({damage[0]}); it cannot be read reliably")
    if frame is None and head[:4] in _TIFF_MAGIC:
        # A TIFF of 32-bit or floating-point samples: OpenCV reads it only as it is stored.
        with decoder_messages():
            frame = _decode_alpha(buffer, name)
    if frame is None:
        if size is not None or _image_magic(head):  # a format read here: the rest is damaged
            raise SetVisionError(f"{name} is truncated or corrupt; copy or export it again")
        raise SetVisionError(
            f"{name} is not an image OpenCV can read (its content, whatever its name); "
            f"supported formats: {', '.join(sorted(IMAGE_EXTENSIONS))}"
        )
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    return np.ascontiguousarray(frame)


def _opencv_pixel_limit() -> int:
    """The most pixels OpenCV's decoders accept: ``OPENCV_IO_MAX_IMAGE_PIXELS`` (read by OpenCV
    once, when it is loaded), 2^30 by default."""
    try:
        return int(os.environ.get("OPENCV_IO_MAX_IMAGE_PIXELS", 1 << 30))
    except ValueError:
        return 1 << 30


def _beyond_opencv(name: str, what: str) -> SetVisionError:
    """The error for an image larger than OpenCV decodes: "NAME {what} OpenCV decodes (...)"."""
    return SetVisionError(
        f"{name} {what} OpenCV decodes "
        f"({_megapixels(_opencv_pixel_limit())} MP; the environment variable "
        "OPENCV_IO_MAX_IMAGE_PIXELS, read when setvision starts, raises it)"
    )


#: Decoder messages that mean the image data is damaged (parts of the picture made up), as
#: libjpeg, libpng and libtiff word them; other messages (e.g. libjpeg's "Invalid SOS
#: parameters" or "Corrupt JPEG data: N extraneous bytes before marker", common on cameras'
#: valid files) are dropped.
_DAMAGE_WORDS: Final = ("Corrupt JPEG data", "premature end", "CRC error", "TIFFReadEncoded",
                        "TIFFFillStrip", "TIFFFillTile", "Read error")  # fmt: skip


@contextlib.contextmanager
def decoder_messages() -> Iterator[list[str]]:
    """Collect what the C image libraries print to standard error (file descriptor 2) while
    decoding, instead of letting it reach the user; yields the list, filled on exit."""
    lines: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr (embedded): nothing to collect
        yield lines
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read(1 << 16).decode("utf-8", "replace")
            lines += [" ".join(line.split()) for line in text.splitlines() if line.strip()]


#: Extensions of formats that can hold several frames or pages (animations, multi-page scans);
#: :func:`load_image` reads the first.
_MULTI_FRAME: Final = frozenset({".gif", ".tif", ".tiff", ".webp", ".png", ".apng"})


def is_gif(path: str | os.PathLike[str]) -> bool:
    """True if the file is a GIF (by its first bytes): at most 256 colours per frame, so inks
    and paper lose the shades that detection and colour reading rely on. False for a file that
    cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(6) in (b"GIF87a", b"GIF89a")
    except OSError:
        return False


#: The luminance quantization table of the JPEG standard (ITU-T T.81, Annex K, table K.1), in
#: row order, which libjpeg scales for its quality setting.
_JPEG_LUMINANCE: Final = (
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
    14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
    18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
)  # fmt: skip
#: Row-order index of each coefficient in a file's (zigzag) order (T.81, figure A.6).
_ZIGZAG: Final = (
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27,
    20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
)  # fmt: skip


def jpeg_quality(path: str | os.PathLike[str]) -> int | None:
    """The quality setting (1-100, libjpeg's scale) a JPEG file was saved at, estimated from its
    luminance quantization table; None for a file that is not a JPEG or cannot be followed.

    libjpeg scales the standard table by ``S = 5000 / Q`` (Q < 50) or ``200 - 2 Q`` percent
    (Independent JPEG Group, ``jcparam.c``) and clips the entries to 1..255; ``S`` is
    recovered from the entries left unclipped, as the ratio of their sum to the standard
    ones', so the estimate is within a unit for libjpeg's own tables (OpenCV, most cameras and
    apps; measured at 5 to 95) and a like-for-like figure for others.
    """
    try:
        with open(path, "rb") as handle:
            if handle.read(2) != b"\xff\xd8":
                return None
            while True:
                head = handle.read(4)
                if len(head) < 4 or head[0] != 0xFF:
                    return None
                marker, length = head[1], struct.unpack(">H", head[2:4])[0]
                if marker == 0xDA or length < 2:  # start of scan: no table before it
                    return None
                body = handle.read(length - 2)
                if marker != 0xDB:
                    continue
                i = 0
                while i < len(body):  # one or more tables: precision/id byte, 64 entries
                    precision, table = body[i] >> 4, body[i] & 0x0F
                    size = 128 if precision else 64
                    values = body[i + 1 : i + 1 + size]
                    if len(values) < size:
                        return None
                    if table == 0:
                        entries = struct.unpack(">64H", values) if precision else tuple(values)
                        pairs = [(v, _JPEG_LUMINANCE[_ZIGZAG[j]]) for j, v in enumerate(entries)]
                        free = [(v, ref) for v, ref in pairs if 1 < v < 255] or pairs
                        scale = 100.0 * sum(v for v, _ in free) / sum(ref for _, ref in free)
                        quality = (200.0 - scale) / 2.0 if scale <= 100.0 else 5000.0 / scale
                        return int(min(100, max(1, round(quality))))
                    i += 1 + size
    except OSError:
        return None


def is_palette_png(path: str | os.PathLike[str]) -> bool:
    """True if the file is a PNG of indexed colour (IHDR colour type 3: at most 256 colours, as
    a GIF), by its first 26 bytes (the PNG specification, IHDR). False for any other file and
    for a file that cannot be read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(26)
    except OSError:
        return False
    return (
        len(head) == 26
        and head[:8] == b"\x89PNG\r\n\x1a\n"
        and head[12:16] == b"IHDR"
        and head[25] == 3
    )


def frame_count(path: str | os.PathLike[str]) -> int:
    """How many frames or pages an image file holds (an animated GIF, PNG or WebP, a multi-page
    TIFF), as OpenCV counts them (``cv2.imcount``); :func:`load_image` reads only the first.

    Args:
        path: the image file.

    Returns:
        The number of frames; 1 for formats that hold one (JPEG, BMP, ...) and for a file that
        cannot be counted (missing, unreadable: :func:`load_image` reports those).
    """
    if Path(path).suffix.lower() not in _MULTI_FRAME:
        return 1
    try:
        with decoder_messages():  # OpenCV logs a file it cannot count to stderr
            count = int(cv2.imcount(os.fspath(path)))
    except (cv2.error, OSError, ValueError):
        return 1
    return max(count, 1)


_REDUCED: Final = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
                   8: cv2.IMREAD_REDUCED_COLOR_8}  # fmt: skip


def decode_scale(width: int, height: int, min_long_side: int | None) -> int:
    """The factor (1, 2, 4 or 8) by which :func:`load_image` reduces a JPEG of this size
    (as its header declares it) for ``min_long_side``."""
    if min_long_side is None:
        return 1
    factor = 1
    while factor < 8 and max(width, height) // (2 * factor) >= min_long_side:
        factor *= 2
    return factor


def _decode_flag(head: bytes, size: tuple[int, int] | None, min_long_side: int | None) -> int:
    if size is None or not _is_jpeg(head):
        return cv2.IMREAD_COLOR
    factor = decode_scale(size[0], size[1], min_long_side)
    return _REDUCED[factor] if factor > 1 else cv2.IMREAD_COLOR


def list_images(
    folder: str | os.PathLike[str],
    *,
    recursive: bool = False,
    extensions: frozenset[str] = IMAGE_EXTENSIONS,
) -> list[Path]:
    """Image files in ``folder`` (by extension, case-insensitive, one of ``extensions``),
    sorted by path.

    Hidden files (names starting with ``.``) are skipped, and with ``recursive`` so are hidden
    folders (``.git``, ``.cache``, ...). A link to a photo that is gone is listed (reading it
    then says so) rather than skipped unannounced.

    Args:
        folder: the folder to list.
        recursive: also list the photos in its subfolders, at any depth.
        extensions: lower-case extensions with the dot (:data:`UNREADABLE_EXTENSIONS`: the
            photos OpenCV cannot read).

    Raises:
        FileNotFoundError: if ``folder`` does not exist.
        SetVisionError: if ``folder`` is not a directory.
    """
    root = Path(folder)
    if not root.exists():
        raise FileNotFoundError(f"folder not found: {root}")
    if not root.is_dir():
        raise SetVisionError(f"{root} is not a folder; pass a folder of photos")
    found = _walk(root) if recursive else root.iterdir()
    return sorted(
        p
        for p in found
        if p.suffix.lower() in extensions
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and (p.is_file() or (p.is_symlink() and not p.exists()))
    )


def walk_folders(
    root: Path, errors: list[OSError] | None = None
) -> Iterator[tuple[Path, list[str]]]:
    """Each folder under ``root`` (``root`` first) with its file names, following links to
    folders (a folder of photos linked in is read like any other), each real folder once, and
    none that holds ``root`` (a link back up the tree is neither a loop nor a way out of it);
    hidden folders are not entered. A folder that cannot be listed (no permission) is left out;
    with ``errors``, its error is appended there (``filename``: the folder)."""
    seen: set[str] = set()
    top = os.path.realpath(root)
    onerror = None if errors is None else errors.append
    for here, dirs, files in os.walk(root, followlinks=True, onerror=onerror):
        real = os.path.realpath(here)
        if real in seen or top.startswith(real.rstrip(os.sep) + os.sep):
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        yield Path(here), files


def _walk(root: Path) -> Iterator[Path]:
    """Every file and link under ``root`` (see :func:`walk_folders`)."""
    for here, files in walk_folders(root):
        for name in files:
            yield here / name


_TIFF_MAGIC: Final = (b"II*\x00", b"MM\x00*")


def _image_magic(head: bytes) -> bool:
    """The first bytes are those of a JPEG, PNG, BMP, GIF, WebP, TIFF or PNM file."""
    return (
        _is_jpeg(head)
        or head.startswith((b"\x89PNG\r\n\x1a\n", b"BM", b"GIF87a", b"GIF89a"))
        or (head.startswith(b"RIFF") and head[8:12] == b"WEBP")
        or head[:4] in _TIFF_MAGIC
        or (len(head) >= 2 and head[0:1] == b"P" and head[1:2] in b"123456")
    )


def image_size(data: bytes | bytearray | memoryview) -> tuple[int, int] | None:
    """(width, height) declared by a JPEG, PNG, BMP, GIF, WebP, TIFF or PNM header, without
    decoding.

    The JPEG size is the stored one (before EXIF orientation). None for other formats or an
    unreadable header.
    """
    head = bytes(data[:32])
    try:
        if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
            return struct.unpack(">II", head[16:24])
        if _is_jpeg(head):
            return _jpeg_size(data)
        if head.startswith(b"BM") and len(head) >= 26:
            w, h = struct.unpack("<ii", head[18:26])
            return w, abs(h)
        if head[:6] in (b"GIF87a", b"GIF89a"):
            return struct.unpack("<HH", head[6:10])
        if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
            return _webp_size(bytes(data[:40]))
        if head[:4] in _TIFF_MAGIC:
            return _tiff_size(data)
        if len(head) >= 2 and head[0:1] == b"P" and head[1:2] in b"123456":
            return _pnm_size(bytes(data[:1024]))
    except (struct.error, ValueError, IndexError):
        return None
    return None


def _tiff_size(data: bytes | bytearray | memoryview) -> tuple[int, int] | None:
    """(width, height) of a TIFF's first image: tags ImageWidth (256) and ImageLength (257)
    of its first IFD (TIFF 6.0, section 2)."""
    order = "<" if bytes(data[:2]) == b"II" else ">"
    (offset,) = struct.unpack(order + "I", bytes(data[4:8]))
    (count,) = struct.unpack(order + "H", bytes(data[offset : offset + 2]))
    size: dict[int, int] = {}
    for k in range(min(count, 512)):
        entry = bytes(data[offset + 2 + 12 * k : offset + 14 + 12 * k])
        tag, kind = struct.unpack(order + "HH", entry[:4])
        if tag in (256, 257):
            fmt = order + ("H" if kind == 3 else "I")
            size[tag] = struct.unpack(fmt, entry[8 : 8 + struct.calcsize(fmt)])[0]
    if 256 in size and 257 in size:
        return size[256], size[257]
    return None


def _pnm_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) of a PBM/PGM/PPM header: magic, then width and height as ASCII
    numbers separated by whitespace, with ``#`` comments allowed."""
    fields: list[int] = []
    for line in head[2:].split(b"\n"):
        for token in line.split(b"#", 1)[0].split():
            fields.append(int(token))
            if len(fields) == 2:
                return fields[0], fields[1]
    return None


# --------------------------------------------------------------------------------------------


def _read(source: ImageSource, max_bytes: int) -> tuple[bytes | memoryview, str]:
    if isinstance(source, bytes | bytearray | memoryview):
        if len(source) > max_bytes:
            raise SetVisionError(f"image data is {len(source)} bytes, over the limit {max_bytes}")
        return memoryview(source).cast("B"), "the image data"
    path = Path(source)
    if not path.exists():
        if path.is_symlink():
            target = os.readlink(path)
            try:
                os.stat(path)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise SetVisionError(
                        f"{path} is a symbolic link that leads back to itself ({target})"
                    ) from None
            raise FileNotFoundError(f"{path} is a link to a file that is gone ({target})")
        raise FileNotFoundError(f"image not found: {path}")
    if path.is_dir():
        raise SetVisionError(f"{path} is a folder, not a photo; pass an image file")
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        # A device (/dev/zero never ends: reading it filled memory), a pipe (blocks without a
        # writer, and the pipeline opens the path twice) or a socket: not a photo file.
        raise SetVisionError(
            f"{path} is not a regular file (a device, pipe or socket); save the photo to a file"
        )
    size = info.st_size
    if size > max_bytes:
        raise SetVisionError(
            f"{path} is {size / 2**20:.0f} MiB, too large for a photo (limit "
            f"{max_bytes / 2**20:.0f} MiB)"
        )
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise SetVisionError(f"{path} could not be read: {exc.strerror or exc}") from exc


def _megapixels(pixels: int) -> str:
    """``pixels`` in MP for a message: whole above 10 MP, else 3 significant digits."""
    mp = pixels / 1e6
    return f"{mp:.0f}" if mp >= 10 else f"{mp:.3g}"


def _is_jpeg(head: bytes) -> bool:
    return head[:3] == b"\xff\xd8\xff"


def _jpeg_size(data: bytes | memoryview) -> tuple[int, int] | None:
    """Size from the first SOF marker; None if the markers cannot be followed."""
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD9)):  # no length
            i += 2
            continue
        (length,) = struct.unpack(">H", bytes(data[i + 2 : i + 4]))
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 9 > n:
                return None
            h, w = struct.unpack(">HH", bytes(data[i + 5 : i + 9]))
            return w, h
        if marker == 0xDA:  # start of scan before any frame header
            return None
        i += 2 + length
    return None


def _jpeg_truncated(data: bytes | memoryview) -> bool:
    """True if no end-of-image marker follows the last start-of-scan marker.

    An EXIF thumbnail has its own end marker near the start of the file, so only an end marker
    after the main image's last scan counts.
    """
    raw = bytes(data) if isinstance(data, memoryview) else data
    sos = raw.rfind(b"\xff\xda")
    eoi = raw.rfind(b"\xff\xd9")
    return sos < 0 or eoi < sos


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        w, h = struct.unpack("<HH", head[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _has_alpha(data: bytes | memoryview) -> bool:
    """True for a PNG of colour type 4/6 or with a tRNS chunk, or a WebP with alpha."""
    head = bytes(data[:64])
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 26:
        if head[25] in (4, 6):
            return True
        idat = bytes(data[: 1 << 16]).find(b"IDAT")
        trns = bytes(data[: 1 << 16]).find(b"tRNS")
        return 0 <= trns < idat if idat >= 0 else trns >= 0
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP" and head[12:16] == b"VP8X":
        return bool(head[20] & 0x10)
    return False


def _decode_alpha(buffer: npt.NDArray[np.uint8], name: str) -> npt.NDArray[np.uint8] | None:
    """Decode with alpha and composite over white (8-bit BGR).

    Raises:
        SetVisionError: if the alpha channel hides every pixel (a blank white frame would
            only say "no cards found")."""
    image = cv2.imdecode(buffer, cv2.IMREAD_UNCHANGED)
    if image is None:
        return None
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif image.dtype.kind == "f" and float(image.min()) >= 0.0 and float(image.max()) <= 1.0:
        image = (image * 255.0 + 0.5).astype(np.uint8)  # floating point: 0 black, 1 white
    elif image.dtype != np.uint8:
        image = cv2.normalize(image, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 3:
        return image
    if image.shape[2] == 2:  # grey + alpha
        grey, alpha = image[..., 0], image[..., 1]
        colour = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    else:
        colour, alpha = image[..., :3], image[..., 3]
    if not alpha.any():
        raise SetVisionError(f"{name} is fully transparent (its alpha channel hides every pixel)")
    a = alpha.astype(np.float32)[..., None] / 255.0
    return (colour.astype(np.float32) * a + 255.0 * (1.0 - a) + 0.5).astype(np.uint8)
