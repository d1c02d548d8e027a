"""Photo loading: orientation, formats, and errors for bad files."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.errors import SetVisionError
from vision.io import frame_count, image_size, list_images, load_image


def half_red(h=40, w=60) -> np.ndarray:
    img = np.full((h, w, 3), 255, np.uint8)
    img[:, : w // 2] = (0, 0, 255)  # left half red (BGR)
    return img


def encode(img: np.ndarray, ext: str = ".jpg") -> bytes:
    ok, buf = cv2.imencode(ext, img)
    assert ok
    return buf.tobytes()


def with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """Insert a minimal EXIF APP1 block (one IFD entry: Orientation) after the SOI marker."""
    ifd = struct.pack("<H", 1) + struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff = b"II*\x00" + struct.pack("<I", 8) + ifd + struct.pack("<I", 0)
    app1 = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:]


def is_red(px) -> bool:
    return px[2] > 180 and px[0] < 80 and px[1] < 80


def test_jpeg_from_path_and_bytes(tmp_path: Path):
    data = encode(half_red())
    path = tmp_path / "photo.jpg"
    path.write_bytes(data)
    for src in (path, str(path), data, bytearray(data), memoryview(data)):
        img = load_image(src)
        assert img.shape == (40, 60, 3) and img.dtype == np.uint8
        assert is_red(img[20, 5]) and not is_red(img[20, 55])


@pytest.mark.parametrize(
    ("orientation", "shape", "red_at"),
    [
        (1, (40, 60), (20, 5)),
        (3, (40, 60), (20, 55)),
        (6, (60, 40), (5, 20)),
        (8, (60, 40), (55, 20)),
    ],
)
def test_exif_orientation_applied(orientation, shape, red_at):
    img = load_image(with_exif_orientation(encode(half_red()), orientation))
    assert img.shape[:2] == shape
    assert is_red(img[red_at])


def test_png_alpha_composited_on_white():
    rgba = np.zeros((10, 12, 4), np.uint8)
    rgba[..., 2] = 255  # red where opaque
    rgba[:, 6:, 3] = 255
    img = load_image(encode(rgba, ".png"))
    assert img.shape == (10, 12, 3)
    assert (img[:, :6] == 255).all()  # transparent: white, as a viewer shows it
    assert is_red(img[5, 9])
    rgba[..., 3] = 0  # nothing shows: said so, instead of "no cards found" on a white frame
    with pytest.raises(SetVisionError, match="fully transparent"):
        load_image(encode(rgba, ".png"))


def test_png_16bit_and_greyscale():
    grey16 = np.full((8, 9), 40000, np.uint16)
    img = load_image(encode(grey16, ".png"))
    assert img.shape == (8, 9, 3) and img.dtype == np.uint8
    assert abs(int(img[0, 0, 0]) - 40000 // 256) <= 1
    grey8 = np.full((8, 9), 77, np.uint8)
    img = load_image(encode(grey8, ".png"))
    assert img.shape == (8, 9, 3) and (img == 77).all()
    bgr16 = np.zeros((5, 5, 3), np.uint16)
    bgr16[..., 2] = 65535
    assert is_red(load_image(encode(bgr16, ".png"))[2, 2])


def test_missing_file(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_image(tmp_path / "nope.jpg")


def test_directory(tmp_path: Path):
    with pytest.raises(SetVisionError, match="folder"):
        load_image(tmp_path)


def test_empty_file(tmp_path: Path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    with pytest.raises(SetVisionError, match="empty"):
        load_image(path)
    with pytest.raises(SetVisionError, match="empty"):
        load_image(b"")


def test_truncated_jpeg(tmp_path: Path):
    data = encode(np.random.default_rng(0).integers(0, 255, (200, 300, 3), dtype=np.uint8))
    path = tmp_path / "cut.jpg"
    for keep in (len(data) // 2, len(data) - 2):
        path.write_bytes(data[:keep])
        with pytest.raises(SetVisionError, match="truncated"):
            load_image(path)


def test_truncated_png():
    data = encode(half_red(), ".png")
    with pytest.raises(SetVisionError, match="truncated or corrupt"):
        load_image(data[: len(data) // 2])


def test_text_renamed_jpg(tmp_path: Path):
    path = tmp_path / "notes.jpg"
    path.write_text("these are my notes, not a photo\n" * 10)
    with pytest.raises(SetVisionError, match="not an image"):
        load_image(path)


@pytest.mark.parametrize(
    ("name", "head", "message"),
    [
        ("IMG_0001.HEIC", b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic", "HEIC"),
        ("game.mkv", b"\x1aE\xdf\xa3\x9fB\x86\x81\x01", "is a video"),  # Matroska/WebM
    ],
)
def test_a_container_is_named_by_its_first_bytes(
    tmp_path: Path, name: str, head: bytes, message: str
):
    path = tmp_path / name
    path.write_bytes(head + b"\x00" * 64)
    with pytest.raises(SetVisionError, match=message):
        load_image(path)


@pytest.mark.parametrize(("suffix", "fourcc"), [(".mp4", "mp4v"), (".avi", "MJPG")])
def test_a_video_is_named_as_such(tmp_path: Path, suffix: str, fourcc: str):
    path = tmp_path / f"game{suffix}"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), 10, (64, 48))
    assert writer.isOpened()
    for _ in range(3):
        writer.write(np.full((48, 64, 3), 200, np.uint8))
    writer.release()
    with pytest.raises(SetVisionError, match="is a video, not a photo"):
        load_image(path)


def test_decompression_bomb_refused_before_decoding():
    # A valid small PNG whose header is rewritten to declare 60000 x 60000 pixels.
    data = bytearray(encode(half_red(), ".png"))
    data[16:24] = struct.pack(">II", 60000, 60000)
    with pytest.raises(SetVisionError, match="3600 MP"):
        load_image(bytes(data))
    # Same for JPEG: patch the SOF0 height/width.
    jpeg = bytearray(encode(half_red()))
    sof = jpeg.find(b"\xff\xc0")
    jpeg[sof + 5 : sof + 9] = struct.pack(">HH", 65000, 65000)
    with pytest.raises(SetVisionError, match="MP limit"):
        load_image(bytes(jpeg))
    # A real image over a caller's lower limit.
    with pytest.raises(SetVisionError, match="limit") as caught:
        load_image(encode(half_red()), max_pixels=1000)
    assert "--max-pixels" in str(caught.value)  # the message names the option that raises it
    assert "0.001 MP limit" in str(caught.value)  # a small limit is not shown as "0 MP"


def test_too_many_bytes(tmp_path: Path):
    path = tmp_path / "big.jpg"
    path.write_bytes(encode(half_red()))
    with pytest.raises(SetVisionError, match="too large"):
        load_image(path, max_bytes=100)


def test_image_size_headers():
    img = half_red(33, 71)
    for ext in (".png", ".jpg", ".bmp", ".webp"):
        assert image_size(encode(img, ext)) == (71, 33), ext
    assert image_size(b"plain text") is None


def test_list_images(tmp_path: Path):
    for name in ("b.JPG", "a.png", "c.txt", ".hidden.jpg", "d.jpeg"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "e.webp").write_bytes(b"x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "f.png").write_bytes(b"x")  # hidden folders are not searched
    assert [p.name for p in list_images(tmp_path)] == ["a.png", "b.JPG", "d.jpeg"]
    assert [p.name for p in list_images(tmp_path, recursive=True)] == [
        "a.png", "b.JPG", "d.jpeg", "e.webp"
    ]  # fmt: skip
    with pytest.raises(FileNotFoundError):
        list_images(tmp_path / "missing")
    with pytest.raises(SetVisionError, match="not a folder"):
        list_images(tmp_path / "a.png")


@pytest.mark.parametrize("ext", ["tif", "pgm", "ppm"])
def test_size_guard_reads_tiff_and_pnm_headers(tmp_path, ext) -> None:
    # A decompression bomb in a format whose header the guard did not read got decoded
    # (a 900 MP TIFF took 5.4 GB): these headers are read too.
    shape = (600, 900) if ext == "pgm" else (600, 900, 3)
    path = tmp_path / f"big.{ext}"
    cv2.imwrite(str(path), np.zeros(shape, np.uint8))
    assert image_size(path.read_bytes()) == (900, 600)
    with pytest.raises(SetVisionError, match="more than the"):
        load_image(path, max_pixels=900 * 600 - 1)
    assert load_image(path).shape[:2] == (600, 900)


def test_damaged_jpeg_is_refused_without_library_noise(tmp_path, capfd) -> None:
    # Garbage in the middle of the data: libjpeg fills in grey blocks and prints "Corrupt JPEG
    # data" to stderr. One clear error instead, and nothing from the library reaches the user.
    from vision.data import REPO_ROOT

    data = bytearray((REPO_ROOT / "datasets" / "samples" / "table.jpg").read_bytes())
    mid = len(data) // 2
    data[mid : mid + 2000] = b"\xff\xd9" * 1000
    path = tmp_path / "damaged.jpg"
    path.write_bytes(bytes(data))
    with pytest.raises(SetVisionError, match="is damaged"):
        load_image(path)
    assert capfd.readouterr().err == ""


def test_a_raised_limit_still_stops_at_what_opencv_decodes() -> None:
    """``--max-pixels`` above OpenCV's own limit (2^30 pixels unless
    OPENCV_IO_MAX_IMAGE_PIXELS says otherwise): the header check says so in words, instead of
    OpenCV's assertion text."""
    data = bytearray(encode(half_red(), ".png"))
    data[16:24] = struct.pack(">II", 40000, 40000)
    with pytest.raises(SetVisionError) as caught:
        load_image(bytes(data), max_pixels=2_000_000_000)
    message = str(caught.value)
    assert "more than OpenCV decodes (1074 MP" in message
    assert "OPENCV_IO_MAX_IMAGE_PIXELS" in message
    assert "Assertion" not in message


def test_limit_message_tells_a_near_limit_apart() -> None:
    # 1,920,000 pixels against a limit of 1,919,999: both round to 1.92 MP, so the message
    # gives the exact counts instead of "1.92 MP ... more than the 1.92 MP limit".
    data = encode(np.zeros((1200, 1600, 3), np.uint8))
    with pytest.raises(SetVisionError) as caught:
        load_image(data, max_pixels=1_919_999)
    assert "1,920,000 pixels" in str(caught.value) and "1,919,999-pixel limit" in str(caught.value)
    with pytest.raises(SetVisionError) as tiny:
        load_image(data, max_pixels=1)
    assert "e-0" not in str(tiny.value) and "1-pixel limit" in str(tiny.value)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_refused_without_reading_it() -> None:
    # /dev/zero reports size 0 and never ends: reading it used to fill memory (15 GB in 15 s).
    with pytest.raises(SetVisionError, match="not a regular file"):
        load_image("/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    # Opening a pipe with no writer blocks for ever; it is refused from its mode instead.
    fifo = tmp_path / "photo.jpg"
    os.mkfifo(fifo)
    with pytest.raises(SetVisionError, match="not a regular file"):
        load_image(fifo)


@pytest.mark.parametrize(
    ("name", "frames", "expected"),
    [
        ("animation.gif", 3, 3),
        ("scan.tiff", 2, 2),
        ("single.tif", 1, 1),
        ("single.png", 1, 1),
        ("photo.jpg", 1, 1),
    ],
)
def test_frame_count(tmp_path, name: str, frames: int, expected: int) -> None:
    images = [half_red() // (i + 1) for i in range(frames)]
    path = tmp_path / name
    if frames > 1:
        assert cv2.imwritemulti(str(path), images)
    else:
        assert cv2.imwrite(str(path), images[0])
    assert frame_count(path) == expected
    assert load_image(path).shape == (40, 60, 3)  # the first frame is what is read


def test_frame_count_of_what_cannot_be_counted_is_one(tmp_path, capfd) -> None:
    broken = tmp_path / "broken.gif"
    broken.write_bytes(b"GIF89a not really")
    assert frame_count(broken) == 1
    assert frame_count(tmp_path / "missing.tiff") == 1
    assert capfd.readouterr().err == ""  # OpenCV's own complaint does not reach the user


def test_floating_point_tiff_is_read_and_a_truncated_tiff_called_so():
    """OpenCV reads a 32-bit float TIFF only as stored (its colour decode gave nothing, and
    the photo was called "truncated or corrupt"); a truncated TIFF, whose size cannot be read,
    was called "not an image" with the list of formats, TIFF among them."""
    rng = np.random.default_rng(0)
    colour = rng.integers(60, 200, (24, 32, 3)).astype(np.uint8)  # kept as it is, not stretched
    data = encode(colour.astype(np.float32) / 255.0, ".tiff")
    img = load_image(data)
    assert img.shape == (24, 32, 3) and img.dtype == np.uint8
    assert np.abs(img.astype(int) - colour.astype(int)).max() <= 2
    whole = encode(colour, ".tiff")
    with pytest.raises(SetVisionError, match="truncated or corrupt") as info:
        load_image(whole[: len(whole) // 3])
    assert "supported formats" not in str(info.value)


@pytest.mark.parametrize("quality", [5, 10, 15, 29, 30, 50, 75, 90, 95])
def test_jpeg_quality_is_read_back_from_the_quantization_table(tmp_path, quality: int) -> None:
    import cv2

    from vision.io import jpeg_quality

    image = np.random.default_rng(quality).integers(0, 256, (64, 96, 3), dtype=np.uint8)
    path = tmp_path / "q.jpg"
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert jpeg_quality(path) == quality


def test_jpeg_quality_of_what_is_not_a_jpeg_is_none(tmp_path) -> None:
    import cv2

    from vision.io import jpeg_quality

    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((8, 8, 3), np.uint8))
    (tmp_path / "cut.jpg").write_bytes(b"\xff\xd8\xff\xdb\x00\x43\x00" + bytes(10))  # cut short
    (tmp_path / "empty.jpg").write_bytes(b"")
    for name in ("a.png", "cut.jpg", "empty.jpg", "missing.jpg"):
        assert jpeg_quality(tmp_path / name) is None
