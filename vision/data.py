"""Where the shared development photos live, and readers for their CSV indexes.

The photos are read in place from ``../shared/datasets`` relative to the repository root (see
``../shared/datasets/README.md``); set ``SETVISION_DATA`` to point elsewhere. They are never
copied into the project.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from vision.errors import SetVisionError

__all__ = ["REPO_ROOT", "shared_datasets", "read_csv"]

#: The repository root (the folder holding ``pyproject.toml``) for a source checkout.
REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_datasets(required: bool = True) -> Path | None:
    """The shared datasets folder: ``$SETVISION_DATA``, else ``<repo>/../shared/datasets``.

    Raises:
        SetVisionError: if ``required`` and the folder does not exist.
    """
    env = os.environ.get("SETVISION_DATA")
    path = Path(env) if env else REPO_ROOT.parent / "shared" / "datasets"
    if path.is_dir():
        return path
    if required:
        raise SetVisionError(
            f"shared datasets not found at {path}; set SETVISION_DATA to the datasets folder"
        )
    return None


def read_csv(name: str) -> list[dict[str, str]]:
    """Rows of a CSV index in the shared datasets folder (e.g. ``"tables.csv"``) as dicts."""
    root = shared_datasets()
    assert root is not None
    with open(root / name, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
