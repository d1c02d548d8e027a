"""Model location and checksum verification (vision.models)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vision.errors import SetVisionError
from vision.models import ENV_VAR, load_model_info, model_path, sha256_file


@pytest.fixture()
def packaged() -> Path:
    return model_path()


def _copy(src: Path, folder: Path) -> Path:
    dst = folder / src.name
    shutil.copyfile(src, dst)
    shutil.copyfile(src.with_suffix(".json"), dst.with_suffix(".json"))
    return dst


def test_packaged_model_is_found_and_verified(packaged: Path, monkeypatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    info = load_model_info()
    assert info.onnx_path == packaged.resolve()
    assert info.meta["sha256"] == sha256_file(packaged)
    assert info.json_path.is_file()


def test_explicit_path_beats_environment(packaged: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nowhere.onnx"))
    copy = _copy(packaged, tmp_path)
    assert model_path(copy) == copy
    with pytest.raises(SetVisionError, match=ENV_VAR):
        model_path()


def test_environment_variable_is_used(packaged: Path, tmp_path: Path, monkeypatch) -> None:
    copy = _copy(packaged, tmp_path)
    monkeypatch.setenv(ENV_VAR, str(copy))
    assert load_model_info().onnx_path == copy.resolve()


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SetVisionError, match="does not exist"):
        load_model_info(tmp_path / "card_classifier.onnx")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "is a folder; give the .onnx file"),
        (lambda d: d / "notes.txt", "is not an .onnx file"),
    ],
)
def test_a_folder_or_another_file_is_named_as_such(tmp_path: Path, make, message: str) -> None:
    target = make(tmp_path)
    if not target.exists():
        target.write_text("my notes\n")
    with pytest.raises(SetVisionError, match=message):
        load_model_info(target)


def test_checksum_mismatch_is_refused(packaged: Path, tmp_path: Path) -> None:
    copy = _copy(packaged, tmp_path)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(SetVisionError, match="corrupt"):
        load_model_info(copy)


def test_missing_or_bad_json_is_refused(packaged: Path, tmp_path: Path) -> None:
    copy = _copy(packaged, tmp_path)
    meta = copy.with_suffix(".json")
    meta.write_text("{not json")
    with pytest.raises(SetVisionError, match="unreadable"):
        load_model_info(copy)
    meta.write_text(json.dumps({"labels": {}}))
    with pytest.raises(SetVisionError, match="sha256"):
        load_model_info(copy)
    meta.unlink()
    with pytest.raises(SetVisionError, match="missing"):
        load_model_info(copy)
