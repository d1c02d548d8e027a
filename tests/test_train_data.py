"""``--data DATASET_DIR`` of the training scripts: a dataset made by ``setvision label`` adds the
photos a person checked there (a user's own deck) to what the classifier and the detector train
on; a folder that is no dataset, or has nothing checked, is one line before any work. No
PyTorch: training is replaced by a recorder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._scripts import load_script
from vision.cards import parse_card
from vision.dataset.records import LabelledCard, LabelledPhoto
from vision.dataset.store import save_photos


@pytest.fixture(scope="module")
def classifier_script():
    return load_script("train_classifier")


@pytest.fixture(scope="module")
def detector_script():
    return load_script("train_detector")


def dataset(folder: Path, checked: bool) -> Path:
    folder.mkdir()
    card = LabelledCard([[10, 10], [74, 10], [74, 110], [10, 110]], parse_card("2 red open ovals"))
    save_photos(folder, [LabelledPhoto("../photo.jpg", 200, 150, (card,), checked=checked)])
    return folder


def test_classifier_trains_on_a_datasets_checked_cards(
    classifier_script, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    got: list = []
    monkeypatch.setattr(classifier_script, "DATA_DIRS", [])
    monkeypatch.setattr(classifier_script, "train_ensemble", lambda args, argv: got.append(args))
    monkeypatch.setenv("SETVISION_CACHE", str(tmp_path / "cache"))
    mine = dataset(tmp_path / "mine", checked=True)
    before = classifier_script.labels_digest()
    classifier_script.main(["--data", str(mine), "--out", str(tmp_path / "m.onnx")])
    (args,) = got
    assert [mine.resolve()] == classifier_script.DATA_DIRS
    photos = classifier_script._annotated_photos()
    assert photos[-1].path == str(tmp_path.resolve() / "photo.jpg")
    assert photos[-1].source == "data:mine" and photos[-1].cards[0].attributes["count"] == 2
    assert ["--data", str(mine.resolve())] == classifier_script.member_command((), args, 1)[-2:]
    assert classifier_script.labels_digest() != before  # models trained before are not reused


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p, "no such dataset folder"),
        (lambda p: dataset(p, checked=False), "no photo there is checked yet"),
        (lambda p: (p.write_text("x"), p)[1], "is a file"),
    ],
)
@pytest.mark.parametrize("script", ["classifier_script", "detector_script"])
def test_data_that_is_no_dataset_is_one_line(
    request, script: str, make, message: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    module = request.getfixturevalue(script)
    folder = make(tmp_path / "set")
    monkeypatch.setattr(module, "train", lambda args: pytest.fail("trained"))
    argv = ["--data", str(folder), "--out", str(tmp_path / "m.onnx")]
    with pytest.raises(SystemExit) as stop:
        if script == "classifier_script":
            monkeypatch.setattr(module, "DATA_DIRS", [])
            module.main(argv)
        else:
            monkeypatch.setattr("sys.argv", ["train_detector.py", *argv])
            module.main()
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--data" in err and message in err


def test_detector_reads_a_datasets_checked_photos(
    detector_script, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import numpy as np

    mine = dataset(tmp_path / "mine", checked=True)
    read: list = []

    def load_image(path):
        read.append(Path(path))
        return np.zeros((150, 200, 3), np.uint8)

    monkeypatch.setattr(detector_script, "load_image", load_image)
    monkeypatch.setattr(detector_script, "load_annotations", lambda folder: [])
    monkeypatch.setenv("SETVISION_DATA", str(tmp_path))
    (tmp_path / "tables.csv").write_text("path,source,width,height,cards,labels,note\n")
    ((frame, corners),) = detector_script.real_photos(set(), (mine,))
    assert read == [tmp_path.resolve() / "photo.jpg"]
    assert corners.shape == (1, 4, 2) and frame.shape == (150, 200, 3)
