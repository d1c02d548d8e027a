"""Find the project's model files in one place and check them before use.

Search order for a model (``card_classifier`` unless said otherwise):

1. an explicit path given by the caller (``CardClassifier(path=...)``, a CLI option);
2. the environment variable ``SETVISION_MODEL`` (a path to the ``.onnx`` file);
3. the packaged file: ``setvision_models/<name>.onnx`` inside an installed wheel (the repo's
   ``models/`` folder is mapped to that package in ``pyproject.toml``), which for a source or
   editable checkout is ``<repo>/models/<name>.onnx``.

Each ``.onnx`` has a JSON beside it (same stem) giving label order, input size, channel order,
normalisation and the file's sha256; the checksum is verified on load.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

from vision.errors import SetVisionError

__all__ = [
    "DEFAULT_MODEL",
    "DETECTOR_MODEL",
    "detector_path",
    "ENV_VAR",
    "ModelInfo",
    "load_model_info",
    "model_path",
    "sha256_file",
]

#: Stem of the shipped card classifier (``models/card_classifier.onnx``).
DEFAULT_MODEL: Final = "card_classifier"
#: Stem of the shipped learned card detector (``models/card_detector.onnx``).
DETECTOR_MODEL: Final = "card_detector"
#: Environment variable that overrides the packaged model (a path to an ``.onnx`` file).
ENV_VAR: Final = "SETVISION_MODEL"
_PACKAGE: Final = "setvision_models"
_REPO_MODELS: Final = Path(__file__).resolve().parent.parent / "models"


@dataclass(frozen=True)
class ModelInfo:
    """A located, checksum-verified model.

    Attributes:
        onnx_path: the ``.onnx`` file.
        json_path: its metadata JSON (same folder and stem).
        meta: the parsed JSON (labels, input_height, input_width, channel_order, mean, std,
            sha256, training description, command).
    """

    onnx_path: Path
    json_path: Path
    meta: dict[str, Any]


def _packaged(name: str) -> Path | None:
    try:
        candidate = resources.files(_PACKAGE) / f"{name}.onnx"
    except ModuleNotFoundError:
        candidate = None
    if candidate is not None and candidate.is_file():
        return Path(str(candidate))
    source = _REPO_MODELS / f"{name}.onnx"
    return source if source.is_file() else None


def model_path(path: str | os.PathLike[str] | None = None, name: str = DEFAULT_MODEL) -> Path:
    """Where the model is: ``path``, else ``$SETVISION_MODEL``, else the packaged file.

    Raises:
        SetVisionError: if the chosen file does not exist (the message says which source
            chose it and how to fix it).
    """
    if path is not None:
        chosen, how = Path(path), "the given path"
    elif os.environ.get(ENV_VAR):
        chosen, how = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    else:
        found = _packaged(name)
        if found is None:
            raise SetVisionError(
                f"the packaged model {name}.onnx is missing (looked in the {_PACKAGE} package "
                f"and {_REPO_MODELS}); reinstall setvision, or set {ENV_VAR} to an .onnx file"
            )
        return found
    if chosen.is_dir():
        raise SetVisionError(f"model {chosen} (from {how}) is a folder; give the .onnx file")
    if not chosen.is_file():
        raise SetVisionError(f"model file {chosen} (from {how}) does not exist")
    if chosen.suffix.lower() != ".onnx":
        raise SetVisionError(f"model {chosen} (from {how}) is not an .onnx file")
    return chosen


def detector_path() -> Path:
    """The packaged learned card detector (:data:`DETECTOR_MODEL`; ``$SETVISION_MODEL`` names
    the classifier, not this).

    Raises:
        SetVisionError: if it is missing.
    """
    found = _packaged(DETECTOR_MODEL)
    if found is None:
        raise SetVisionError(
            f"the packaged card detector {DETECTOR_MODEL}.onnx is missing (looked in the "
            f"{_PACKAGE} package and {_REPO_MODELS}); reinstall setvision"
        )
    return found


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=8)
def _verified(onnx_path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    json_path = onnx_path.with_suffix(".json")
    if not json_path.is_file():
        raise SetVisionError(
            f"model metadata {json_path} is missing; every .onnx needs its JSON beside it"
        )
    try:
        meta = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SetVisionError(f"model metadata {json_path} is unreadable: {error}") from error
    expected = meta.get("sha256") if isinstance(meta, dict) else None
    if not isinstance(expected, str):
        raise SetVisionError(f"model metadata {json_path} has no sha256 for the model")
    got = sha256_file(onnx_path)
    if got != expected:
        raise SetVisionError(
            f"model file {onnx_path} is corrupt or was replaced: sha256 {got[:16]}..., expected "
            f"{expected[:16]}... from {json_path.name}; reinstall setvision if it is the packaged "
            "model, or put the .json written with this .onnx beside it"
        )
    return meta


def load_model_info(
    path: str | os.PathLike[str] | None = None, name: str = DEFAULT_MODEL
) -> ModelInfo:
    """Locate a model (see :func:`model_path`), read its JSON and verify its checksum.

    Raises:
        SetVisionError: if the model or its JSON is missing, unreadable, or the checksum
            does not match.
    """
    onnx_path = model_path(path, name).resolve()
    stat = onnx_path.stat()
    meta = _verified(onnx_path, stat.st_mtime_ns, stat.st_size)
    return ModelInfo(onnx_path=onnx_path, json_path=onnx_path.with_suffix(".json"), meta=meta)
