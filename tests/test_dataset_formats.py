"""vision.dataset: COCO, Label Studio (a recorded export, round trip), YOLO, crops, the project's
annotations, and the dataset folder's refusals. Photos are small rendered or drawn tables."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.cards import Card, parse_card
from vision.dataset.coco import UNREAD_CATEGORY, from_coco, to_coco
from vision.dataset.crops import class_folder, export_crops
from vision.dataset.labelstudio import LABEL_CONFIG, from_export, to_tasks
from vision.dataset.project import dataset_truths, photos_from_truths, truths_from_photos
from vision.dataset.records import LabelledCard, LabelledPhoto, merge_photos, portrait_order
from vision.dataset.store import (
    ANNOTATIONS_FILE,
    dataset_folder,
    import_label_studio,
    load_photos,
    save_photos,
)
from vision.dataset.yolo import YoloKind, export_yolo, yolo_lines
from vision.errors import SetVisionError
from vision.evaluation import PhotoTruth, load_annotation_file

EXPORT = Path(__file__).parent / "data" / "labelstudio_export.json"
RED_OVAL = parse_card("1 red solid oval")


def quad(x: float, y: float, w: float = 100.0, h: float = 156.0) -> list[list[float]]:
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]


def sample_photos() -> list[LabelledPhoto]:
    """Three photos: pre-labels, a checked one with a partial unread card, an empty one."""
    first = LabelledPhoto(
        "photos/a.jpg",
        640,
        480,
        (
            LabelledCard(quad(10.25, 20), RED_OVAL, confidence=0.97),
            LabelledCard(quad(200, 20), parse_card("3 purple open squiggles"), confidence=0.5),
        ),
    )
    second = LabelledPhoto(
        "photos/b.png",
        640,
        480,
        (
            LabelledCard(quad(100, 100), parse_card("2 green striped diamonds"), checked=True),
            LabelledCard(quad(590, 400), None, partial=True, checked=True),  # cut by the edges
        ),
        checked=True,
    )
    return [first, second, LabelledPhoto("/elsewhere/c.jpg", 320, 240)]


# --------------------------------------------------------------------------- records


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (quad(0, 0), quad(0, 0)),  # portrait, clockwise: kept
        (quad(0, 0)[2:] + quad(0, 0)[:2], quad(0, 0)[2:] + quad(0, 0)[:2]),  # turned 180: kept
        (quad(0, 0)[::-1], quad(0, 0)),  # counter-clockwise: canonical
        ([[0, 0], [156, 0], [156, 100], [0, 100]], [[0, 100], [0, 0], [156, 0], [156, 100]]),
    ],
)
def test_portrait_order(given: list, expected: list) -> None:
    assert portrait_order(given).tolist() == expected


@pytest.mark.parametrize(
    "corners", [[[0, 0]] * 4, [[0, 0], [1, 0], [1, 1]], [[0, 0], [np.nan, 0], [1, 1], [0, 1]]]
)
def test_a_card_without_four_corners_is_refused(corners: list) -> None:
    with pytest.raises(ValueError, match="corners"):
        LabelledCard(corners, None)


@pytest.mark.parametrize(
    ("touched", "replace", "kept"),
    [(False, False, True), (False, True, False), (True, True, True)],
)
def test_merge_never_loses_a_check(touched: bool, replace: bool, kept: bool) -> None:
    old = LabelledPhoto("a.jpg", 10, 10, (LabelledCard(quad(0, 0, 4, 6), None, checked=touched),))
    new = LabelledPhoto("a.jpg", 10, 10, ())
    other = LabelledPhoto("b.jpg", 10, 10)
    photos, skipped = merge_photos([old], [new, other], replace_unchecked=replace)
    assert photos == [old if kept else new, other]
    assert skipped == (["a.jpg"] if kept else [])


# --------------------------------------------------------------------------- COCO


def test_coco_round_trip_and_layout() -> None:
    photos = sample_photos()
    coco = json.loads(json.dumps(to_coco(photos)))
    assert from_coco(coco) == photos
    assert [c["id"] for c in coco["categories"]] == list(range(1, 83))
    assert coco["categories"][RED_OVAL.index]["name"] == "1 red solid oval"
    first, *_, partial = coco["annotations"]
    assert first["category_id"] == RED_OVAL.index + 1
    assert first["keypoints"][:3] == [10.25, 20.0, 2] and first["num_keypoints"] == 4
    assert first["bbox"] == [10.25, 20.0, 100.0, 156.0] and first["area"] == 15600.0
    assert first["segmentation"] == [[10.25, 20.0, 110.25, 20.0, 110.25, 176.0, 10.25, 176.0]]
    assert first["attributes"] == {
        "count": 1, "colour": "red", "shape": "oval", "fill": "solid", "partial": False
    }  # fmt: skip
    assert (first["score"], first["checked"]) == (0.97, False)
    # A card cut by the photo's edges: box and area inside the photo, outside corners seen 1.
    assert partial["category_id"] == UNREAD_CATEGORY
    assert partial["bbox"] == [590.0, 400.0, 50.0, 80.0] and partial["area"] == 4000.0
    assert [partial["keypoints"][k] for k in (2, 5, 8, 11)] == [2, 1, 1, 1]
    assert [i["checked"] for i in coco["images"]] == [False, True, False]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pycocotools' own, under numpy 2
def test_coco_loads_with_pycocotools(tmp_path: Path) -> None:
    coco_api = pytest.importorskip("pycocotools.coco")
    save_photos(tmp_path, sample_photos())
    coco = coco_api.COCO(str(tmp_path / ANNOTATIONS_FILE))
    annotations = coco.loadAnns(coco.getAnnIds())
    assert len(annotations) == 4
    assert all(len(a["keypoints"]) == 12 and a["num_keypoints"] == 4 for a in annotations)
    mask = coco.annToMask(annotations[0])
    assert mask.shape == (480, 640) and abs(int(mask.sum()) - 15600) < 400


# --------------------------------------------------------------------------- Label Studio


def _regions(result: list[dict]) -> list[tuple]:
    """Each card of a Label Studio result as (its corners in %, {choice: value}), in order."""
    choices: dict[str, dict] = {}
    for item in result:
        if item["type"] == "choices":
            choices.setdefault(item["id"], {})[item["from_name"]] = item["value"]["choices"]
    return [
        (np.round(item["value"]["points"], 9).tolist(), choices.get(item["id"], {}))
        for item in result
        if item["type"] == "polygonlabels"
    ]


def _known() -> dict[str, LabelledPhoto]:
    # The dataset that wrote the tasks: the photos' pre-labels (sizes known from it).
    files = ("photos/table1.jpg", "photos/empty.jpg", "photos/later.jpg", "photos/unseen.jpg")
    return {f: LabelledPhoto(f, 1600, 1200) for f in files}


def _import(tasks: list, known: dict[str, LabelledPhoto]) -> list[LabelledPhoto]:
    def no_size(file: str) -> tuple[int, int]:
        raise AssertionError(f"size of {file} asked for")

    return from_export(tasks, known, lambda url: pytest.fail(url), no_size)


def test_label_studio_export_imports_what_the_person_decided() -> None:
    photos = _import(json.loads(EXPORT.read_text()), _known())
    # The skipped task and the one never opened change nothing; the empty table is checked.
    assert [p.file for p in photos] == ["photos/table1.jpg", "photos/empty.jpg"]
    table, empty = photos
    assert table.checked and empty.checked and empty.cards == ()
    assert [c.card.label for c in table.cards if c.card] == [
        "1 red solid oval", "2 green open diamonds", "3 purple open squiggles",
        "3 red open diamonds",
    ]  # fmt: skip
    assert [c.partial for c in table.cards] == [False, False, True, False]
    assert table.cards[0].corners.tolist() == [
        [100.5, 200.25],
        [300, 210],
        [290, 520.75],
        [95, 510],
    ]
    assert all(c.checked for c in table.cards)


def test_label_studio_round_trip_is_lossless() -> None:
    export = json.loads(EXPORT.read_text())
    photos = _import(export, _known())
    # Written again as tasks (checked photos: annotations), the regions are the export's.
    tasks = to_tasks(photos, lambda p: f"/data/local-files/?d={p.file}")
    assert "predictions" not in tasks[0]
    assert _regions(tasks[0]["annotations"][0]["result"]) == _regions(
        export[0]["annotations"][0]["result"]
    )
    # And that export read back gives the same dataset, card for card.
    again = _import(tasks, {p.file: p for p in photos})
    assert again == photos


def test_label_studio_keeps_the_models_confidence_of_a_reading_left_as_it_was() -> None:
    pre = sample_photos()[0]
    tasks = to_tasks([pre], lambda p: "x")
    result = tasks[0]["predictions"][0]["result"]
    assert result[0]["score"] == 0.97 and tasks[0]["predictions"][0]["score"] == 0.5
    # A person submits the prediction with the second card's colour changed.
    for item in result:
        if item["id"] == "card1" and item["from_name"] == "colour":
            item["value"]["choices"] = ["green"]
    submitted = [{"data": tasks[0]["data"], "annotations": [{"result": result}]}]
    (photo,) = _import(submitted, {pre.file: pre})
    assert [c.confidence for c in photo.cards] == [0.97, None]
    assert photo.cards[1].card == parse_card("3 green open squiggles")


def test_label_config_names_every_attribute() -> None:
    for name in ("card", "count", "colour", "shape", "fill", "partial", "squiggle", "purple"):
        assert f'"{name}"' in LABEL_CONFIG


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.__setitem__(0, "nonsense"), "task 1"),
        (lambda t: t[0]["annotations"][0]["result"][0]["value"]["points"].pop(), "4 corners"),
        (
            lambda t: t[0]["annotations"][0]["result"][1]["value"].__setitem__("choices", ["7"]),
            "count '7'",
        ),  # fmt: skip
        (lambda t: t[0]["annotations"][0]["result"][0].__setitem__("type", "brushlabels"), "brush"),
    ],
)
def test_label_studio_export_errors_say_the_task(change, message: str) -> None:
    export = json.loads(EXPORT.read_text())
    change(export)
    with pytest.raises(ValueError, match=message):
        _import(export, _known())


# --------------------------------------------------------------------------- YOLO


@pytest.mark.parametrize(
    ("kind", "numbers"),
    [(YoloKind.BOXES, 5), (YoloKind.POSE, 5 + 4 * 3)],
)
def test_yolo_lines_follow_the_documented_layout(kind: YoloKind, numbers: int) -> None:
    # https://docs.ultralytics.com/datasets/detect/ : "class x_center y_center width height",
    # normalised 0..1; /datasets/pose/ : then "px py visibility" per keypoint.
    photo = sample_photos()[1]
    lines = yolo_lines(photo, kind)
    assert len(lines) == 2
    for line in lines:
        values = line.split()
        assert len(values) == numbers and values[0] == "0"
        assert all(0.0 <= float(v) <= 2.0 for v in values[1:])
        assert all(0.0 <= float(v) <= 1.0 for v in values[1:5])
    first = [float(v) for v in lines[0].split()[1:5]]
    assert np.allclose(first, [150 / 640, 178 / 480, 100 / 640, 156 / 480])
    if kind is YoloKind.POSE:
        partial = lines[1].split()[5:]
        assert partial[2] == "2" and partial[3:] == ["0"] * 9  # corners outside: not labelled


@pytest.mark.parametrize("kind", list(YoloKind))
def test_yolo_export_folder(tmp_path: Path, kind: YoloKind) -> None:
    photos = sample_photos() * 2
    paths = []
    for n, photo in enumerate(photos):
        paths.append(tmp_path / f"p{n}" / Path(photo.file).name)
        paths[-1].parent.mkdir()
        paths[-1].write_bytes(b"photo")
    assert export_yolo(photos, paths, tmp_path / "yolo", kind) == 6
    yaml = (tmp_path / "yolo" / "data.yaml").read_text()
    assert "train: images/train" in yaml and "val: images/val" in yaml and "0: card" in yaml
    assert ("kpt_shape: [4, 3]" in yaml) == (kind is YoloKind.POSE)
    # Same names from two folders are told apart; one photo in five is for validation.
    train = sorted(p.name for p in (tmp_path / "yolo" / "images" / "train").iterdir())
    assert train == ["a-2.jpg", "a.jpg", "b.png", "c-2.jpg", "c.jpg"]
    assert [p.name for p in (tmp_path / "yolo" / "labels" / "val").iterdir()] == ["b-2.txt"]
    assert (tmp_path / "yolo" / "images" / "train" / "a.jpg").read_bytes() == b"photo"
    # Exported again with fewer photos: the photos left out leave nothing behind.
    export_yolo(photos[:1], paths[:1], tmp_path / "yolo", kind)
    assert sorted(p.name for p in (tmp_path / "yolo").rglob("*") if p.is_file()) == [
        "a.jpg", "a.txt", "data.yaml"
    ]  # fmt: skip


# --------------------------------------------------------------------------- crops


def test_crops_in_imagefolder_layout(tmp_path: Path) -> None:
    from ._pipeline_fakes import table_frame

    cards = [RED_OVAL, parse_card("2 green solid ovals")]
    frame, corners = table_frame(cards, width=640, height=360)
    path = tmp_path / "t.png"
    cv2.imwrite(str(path), frame)
    photo = LabelledPhoto(
        "t.png",
        640,
        360,
        tuple(LabelledCard(q, c) for q, c in zip(corners, cards))
        + (LabelledCard(corners[0], None, partial=True),),
    )
    assert export_crops([photo], [path], tmp_path / "crops") == 2
    folder = tmp_path / "crops" / class_folder(RED_OVAL)
    assert class_folder(RED_OVAL) == "00-1-red-solid-oval"
    (crop,) = folder.iterdir()
    image = cv2.imread(str(crop))
    assert image.shape[0] > image.shape[1]  # portrait
    assert sorted(p.name for p in (tmp_path / "crops").iterdir()) == [
        "00-1-red-solid-oval", "36-2-green-solid-oval"
    ]  # fmt: skip


# --------------------------------------------------------------------------- project files


def test_project_annotations_convert_both_ways(tmp_path: Path) -> None:
    source = Path(__file__).parents[1] / "datasets" / "detection" / "koff.json"
    truths = load_annotation_file(source)[:2]
    data = tmp_path / "data"
    folder = tmp_path / "set"
    photos = photos_from_truths(truths, folder, data)
    assert photos[0].file == "../data/tables/koff/images/IMG01.jpg"
    assert all(p.checked and all(c.checked for c in p.cards) for p in photos)
    back = truths_from_photos(photos, folder, data, "koff")
    assert [t.to_json() for t in back] == [t.to_json() for t in truths]


def test_dataset_checked_photos_as_training_truth(tmp_path: Path) -> None:
    save_photos(tmp_path, sample_photos())
    (truth,) = dataset_truths(tmp_path)
    assert isinstance(truth, PhotoTruth) and truth.reviewed
    assert Path(truth.path) == tmp_path.resolve() / "photos" / "b.png"
    assert truth.source == f"data:{tmp_path.name}"
    assert truth.cards[0].attributes == {
        "count": 2, "colour": "green", "shape": "diamond", "fill": "striped"
    }  # fmt: skip


# --------------------------------------------------------------------------- the folder


def test_a_dataset_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "set"
    path.write_text("mine")
    with pytest.raises(SetVisionError, match="is a file"):
        dataset_folder(path, create=True)
    assert path.read_text() == "mine"


@pytest.mark.parametrize(
    "text",
    [
        "{",
        '{"images": 3}',
        '{"images": [{"id": 1}]}',
        "\xff",
        '{"images": [], "info": {"setvision_format": 99}}',
    ],  # fmt: skip
)
def test_a_corrupt_annotations_file_is_said_and_left_alone(tmp_path: Path, text: str) -> None:
    path = tmp_path / ANNOTATIONS_FILE
    path.write_text(text, encoding="latin-1")
    before = path.read_bytes()
    with pytest.raises(SetVisionError, match="annotations.json: (not a dataset|cannot be read)"):
        import_label_studio(tmp_path, EXPORT)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        ANNOTATIONS_FILE
    ]


def test_import_into_a_dataset(tmp_path: Path) -> None:
    save_photos(tmp_path, list(_known().values()))
    shutil.copy(EXPORT, tmp_path / "export.json")
    assert import_label_studio(tmp_path, tmp_path / "export.json") == (2, 0)
    photos = load_photos(tmp_path)
    assert [p.checked for p in photos] == [True, True, False, False]
    assert len(photos[0].cards) == 4
    tasks = json.loads((tmp_path / "labelstudio_tasks.json").read_text())
    assert [("annotations" in t, "predictions" in t) for t in tasks] == [
        (True, False), (True, False), (False, True), (False, True)
    ]  # fmt: skip


def test_card_identity_is_a_category() -> None:
    coco = to_coco([LabelledPhoto("x.jpg", 99, 99, (LabelledCard(quad(1, 1, 9, 14), None),))])
    coco["annotations"][0]["attributes"] = {}
    coco["annotations"][0]["category_id"] = Card.from_index(80).index + 1
    (photo,) = from_coco(coco)
    assert photo.cards[0].card == Card.from_index(80)
