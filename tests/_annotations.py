"""The project's reviewed card annotations (``datasets/detection``), for real-photo tests."""

from __future__ import annotations

from vision.data import REPO_ROOT
from vision.evaluation import PhotoTruth, load_annotations

ANNOTATIONS = REPO_ROOT / "datasets" / "detection"


def annotated_photo(path: str) -> PhotoTruth:
    """The reviewed annotation of the shared photo ``path`` (relative to the shared datasets
    folder, e.g. ``"tables/koff/images/IMG03.jpg"``).

    Raises:
        ValueError: if no reviewed annotation, or more than one, names that photo.
    """
    (photo,) = [p for p in load_annotations(ANNOTATIONS, reviewed_only=True) if p.path == path]
    return photo
