"""scripts/label.py to-dataset / from-dataset: the project's annotations as a setvision label
dataset and back, the same to 0.1 px."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests._scripts import load_script
from vision.dataset.store import load_photos, save_photos
from vision.evaluation import CardTruth, PhotoTruth, dump_annotation_file, load_annotation_file

label = load_script("label", "label_tool_dataset")
runner = CliRunner()

CARD = [[200.0, 100.0], [345.0, 131.0], [297.0, 358.0], [152.0, 327.0]]
ATTRIBUTES = {"count": 2, "colour": "red", "shape": "oval", "fill": "open"}


def test_annotations_to_a_dataset_and_back(tmp_path: Path) -> None:
    data, ann, out = tmp_path / "data", tmp_path / "ann", tmp_path / "set"
    (data / "tables" / "synth").mkdir(parents=True)
    ann.mkdir()
    photos = [
        PhotoTruth("tables/synth/a.png", 640, 480, (CardTruth(CARD, False, ATTRIBUTES),), True),
        PhotoTruth("tables/synth/b.png", 640, 480, (CardTruth(CARD, True),), False, note="cut"),
    ]
    dump_annotation_file(ann / "synth.json", photos, "synth")
    common = ["--annotations", str(ann), "--data", str(data)]
    result = runner.invoke(label.app, ["to-dataset", "synth", "--out", str(out), *common])
    assert result.exit_code == 0, result.output
    first, second = load_photos(out)
    assert first.file == "../data/tables/synth/a.png" and first.checked
    assert first.cards[0].card is not None and first.cards[0].card.label == "2 red open ovals"
    assert not second.checked and second.cards[0].partial and second.note == "cut"
    # Checked in the review, written back: only the reviewed flag changes.
    save_photos(out, [first, second.accepted()])
    result = runner.invoke(label.app, ["from-dataset", str(out), *common])
    assert result.exit_code == 0, result.output
    back = load_annotation_file(ann / "synth.json")
    assert [p.reviewed for p in back] == [True, True]
    assert [c.to_json() for p in back for c in p.cards] == [
        c.to_json() for p in photos for c in p.cards
    ]


def test_to_dataset_of_an_unknown_source_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "ann").mkdir()
    (tmp_path / "data").mkdir()
    result = runner.invoke(
        label.app,
        ["to-dataset", "nope", "--out", str(tmp_path / "set"), "--annotations",
         str(tmp_path / "ann"), "--data", str(tmp_path / "data")],
    )  # fmt: skip
    assert result.exit_code == 2 and "no annotations of nope" in result.output
    assert not (tmp_path / "set").exists()


def test_the_checked_webrew_photos_are_a_portable_dataset() -> None:
    """datasets/labels/webrew: 20 webrew tables checked in the review page (README "setvision
    label"): every photo and card checked and read, 20 distinct cards a photo (one deck), the
    photos named relative to the folder, so that a clone with ../shared beside it finds them."""
    from vision.dataset.store import photo_path

    root = Path(__file__).resolve().parents[1]
    folder = root / "datasets" / "labels" / "webrew"
    photos = load_photos(folder)
    assert len(photos) == 20
    for photo in photos:
        assert photo.file.startswith("../../../../shared/datasets/tables/webrew/tables/")
        assert photo.checked and all(c.checked and c.card is not None for c in photo.cards)
        assert len({c.card for c in photo.cards}) == len(photo.cards) == 20
    if (root.parent / "shared" / "datasets").is_dir():
        assert all(photo_path(folder, p.file).is_file() for p in photos)
