"""vision.photo_warnings: what is said about a photo's file and its reading, table-driven."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.photo_warnings import LOW_JPEG_QUALITY, file_warnings, reading_warnings


def _texture() -> np.ndarray:
    rng = np.random.default_rng(0)
    return cv2.GaussianBlur(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8), (0, 0), 2)


@pytest.mark.parametrize(
    ("name", "params", "said"),
    [
        ("fine.jpg", [cv2.IMWRITE_JPEG_QUALITY, 90], None),
        ("squashed.jpg", [cv2.IMWRITE_JPEG_QUALITY, LOW_JPEG_QUALITY - 15], "heavily compressed"),
        ("lossless.png", [], None),
    ],
)
def test_file_warnings_name_the_file_and_the_reason(
    tmp_path: Path, name: str, params: list[int], said: str | None
) -> None:
    path = tmp_path / name
    assert cv2.imwrite(str(path), _texture(), params)
    warnings = file_warnings(path)
    if said is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warnings[0].startswith(str(path)) and said in warnings[0]


def test_a_gif_is_said_to_hold_256_colours_at_most(tmp_path: Path) -> None:
    path = tmp_path / "table.gif"
    if not cv2.imwrite(str(path), _texture()):
        pytest.skip("this OpenCV cannot write GIFs")
    (warning,) = file_warnings(path)
    assert "256 colours" in warning


@pytest.mark.parametrize(
    ("result", "count"),
    [
        ({"width": 1600, "height": 1200, "cards": []}, 0),
        ({"width": 160, "height": 90, "cards": []}, 1),  # too small to find cards in
        ({"width": 1600, "height": 1200,
          "cards": [{"burnt_out": True, "corners": [[0, 0], [60, 0], [60, 90], [0, 90]]}] * 3},
         1),  # overexposed
    ],
)  # fmt: skip
def test_reading_warnings_start_with_the_photo(result: dict, count: int) -> None:
    warnings = reading_warnings("a.jpg", result)
    assert len(warnings) == count and all(w.startswith("a.jpg: ") for w in warnings)
