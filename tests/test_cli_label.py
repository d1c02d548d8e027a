"""``setvision label``: pre-labels into a dataset folder (the shipped models on a rendered 12-card
table), never over a person's checks; bad input said in one line with nothing lost; the Label
Studio round trip through the files it writes; exports; the review page's HTTP API."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from vision.cards import full_deck
from vision.dataset.records import LabelledPhoto
from vision.dataset.review_server import make_server
from vision.dataset.store import ANNOTATIONS_FILE, LABEL_STUDIO_TASKS, load_photos, save_photos

runner = CliRunner()


def label(*args: str):
    from vision.cli import app

    return runner.invoke(app, ["label", *args])


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two rendered tables of 12 cards (the second half as large)."""
    from vision.render import render_table

    folder = tmp_path_factory.mktemp("photos")
    rng = np.random.default_rng(36)
    deck = list(full_deck())
    for name, size in (("one.jpg", (960, 720)), ("two.jpg", (720, 540))):
        cards = [deck[i] for i in rng.choice(81, 12, replace=False)]
        frame, _ = render_table(cards, rng, background="wood", size=size, strength=0.2)
        cv2.imwrite(str(folder / name), frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return folder


@pytest.fixture(scope="module")
def made(photos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset pre-labelled from ``one.jpg`` (read-only for the tests: copy it to change it)."""
    out = tmp_path_factory.mktemp("made") / "set"
    result = label(str(photos / "one.jpg"), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def copy_dataset(made: Path, where: Path) -> Path:
    where.mkdir()
    for name in (ANNOTATIONS_FILE, LABEL_STUDIO_TASKS):  # both two folders below the base
        (where / name).write_bytes((made / name).read_bytes())  # temp: the same relative paths
    return where


def test_prelabels_make_a_dataset(made: Path, photos: Path) -> None:
    (photo,) = load_photos(made)
    assert photo.file == f"../../{photos.name}/one.jpg"
    assert (photo.width, photo.height, photo.checked) == (960, 720, False)
    assert len(photo.cards) == 12
    assert all(c.card is not None and 0.5 < c.confidence <= 1 for c in photo.cards)
    tasks = json.loads((made / LABEL_STUDIO_TASKS).read_text())
    assert len(tasks[0]["predictions"][0]["result"]) == 12 * 5  # polygon + 4 choices per card
    assert (made / "labelstudio_config.xml").is_file()


def test_adding_photos_keeps_what_was_there(made: Path, photos: Path, tmp_path: Path) -> None:
    out = copy_dataset(made, tmp_path / "set")
    (first,) = load_photos(out)
    save_photos(out, [first.accepted()])
    checked = (out / ANNOTATIONS_FILE).read_text()
    result = label(str(photos), "--out", str(out), "--relabel")
    assert result.exit_code == 0, result.output
    assert "1 of 2 photos already in" in result.output
    kept, second = load_photos(out)
    assert kept == first.accepted() and second.file.endswith("two.jpg")
    assert (
        json.loads(checked)["annotations"]
        == json.loads((out / ANNOTATIONS_FILE).read_text())["annotations"][:12]
    )


def test_a_dataset_in_the_photos_folder_does_not_label_its_exports(
    photos: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "one.jpg").write_bytes((photos / "one.jpg").read_bytes())
    assert label(str(folder), "--out", str(folder / "set"), "--crops").exit_code == 0
    result = label(str(folder), "-r", "--out", str(folder / "set"))
    assert result.exit_code == 0, result.output
    assert "12 files inside" in result.output and "left out" in result.output
    assert len(load_photos(folder / "set")) == 1


def _corrupt(folder: Path) -> Path:
    folder.mkdir()
    (folder / ANNOTATIONS_FILE).write_text('{"images": [')
    return folder


def _a_file(folder: Path) -> Path:
    folder.write_text("not a folder")
    return folder


@pytest.mark.parametrize(
    ("make", "photo", "message"),
    [
        (_a_file, "one.jpg", "is a file, not a dataset folder"),
        (_corrupt, "one.jpg", "annotations.json: not a dataset's annotations"),
        (Path.mkdir, "broken.jpg", "broken.jpg"),
        (Path.mkdir, "missing.jpg", "missing.jpg: no such file"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_lost(
    photos: Path, tmp_path: Path, make, photo: str, message: str
) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8 not a photo")
    where = tmp_path / "set"
    make(where)
    before = {p: p.read_bytes() for p in [where, *where.rglob("*")] if p.is_file()}
    source = broken if photo == "broken.jpg" else photos / photo
    result = label(str(source), "--out", str(where))
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("setvision: error: ") and message in errors[0]
    assert {p: p.read_bytes() for p in before} == before


def test_label_studio_round_trip_through_the_files(made: Path, tmp_path: Path) -> None:
    out = copy_dataset(made, tmp_path / "set")
    (before,) = load_photos(out)
    tasks = json.loads((out / LABEL_STUDIO_TASKS).read_text())
    # A person accepts the predictions as they are: Label Studio's export holds them as the
    # task's annotation (predictions listed by id).
    export = [
        {"id": 1, "data": task["data"], "predictions": [1],
         "annotations": [{"id": 1, "result": task["predictions"][0]["result"],
                          "was_cancelled": False}]}
        for task in tasks
    ]  # fmt: skip
    (tmp_path / "export.json").write_text(json.dumps(export))
    result = label("import", str(tmp_path / "export.json"), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "1 checked photo taken" in result.output
    (after,) = load_photos(out)
    assert after == before.accepted()


def test_export_yolo_and_crops(made: Path, tmp_path: Path) -> None:
    out = copy_dataset(made, tmp_path / "set")
    result = label("export", str(out), "--yolo", "pose", "--crops")
    assert result.exit_code == 0, result.output
    assert "1 photos no person checked are left out" in result.output
    result = label("export", str(out), "--yolo", "POSE", "--crops", "--unchecked")
    assert result.exit_code == 0, result.output
    lines = (out / "yolo" / "labels" / "train" / "one.txt").read_text().splitlines()
    assert len(lines) == 12 and all(len(line.split()) == 17 for line in lines)
    assert len(list((out / "crops").rglob("*.png"))) == 12
    result = label("export", str(out), "--yolo", "masks")
    assert result.exit_code == 2 and "expected boxes or pose" in result.output


def test_label_help_and_subcommands() -> None:
    result = label("--help")
    assert result.exit_code == 0
    for word in ("review", "import", "export", "photos", "DATASET_DIR"):
        assert word in result.output


# --------------------------------------------------------------------------- the review page


@pytest.fixture
def server(made: Path, tmp_path: Path) -> Iterator[str]:
    out = copy_dataset(made, tmp_path / "set")
    httpd = make_server(out, port=0)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read()


def post(url: str, value) -> tuple[int, dict]:
    data = json.dumps(value).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_review_page_edits_are_saved_at_once(server: str, made: Path, tmp_path: Path) -> None:
    page = get(server).decode()
    assert "<canvas" in page and '"Enter"' in page  # one key accepts a photo
    (photo,) = json.loads(get(server + "api/photos"))["photos"]
    image = cv2.imdecode(np.frombuffer(get(server + "api/photos/0/image"), np.uint8), 1)
    assert image.shape == (720, 960, 3)
    # Drag a corner of card 1, set card 2 to "3 purple open squiggles", delete card 3.
    photo["cards"][0]["corners"][0][0] -= 5
    photo["cards"][0]["checked"] = True
    photo["cards"][1].update(count=3, colour="purple", fill="open", shape="squiggle",
                             confidence=None, checked=True)  # fmt: skip
    del photo["cards"][2]
    status, answer = post(server + "api/photos/0", photo)
    assert status == 200, answer
    (saved,) = load_photos(tmp_path / "set")
    assert len(saved.cards) == 11 and not saved.checked
    assert saved.cards[1].card.label == "3 purple open squiggles"
    assert saved.cards[1].confidence is None and saved.cards[1].checked
    assert saved.cards[2].confidence is not None and not saved.cards[2].checked
    # Enter: the photo and every card checked.
    photo = answer["photo"]
    photo["checked"] = True
    for card in photo["cards"]:
        card["checked"] = True
    assert post(server + "api/photos/0", photo)[0] == 200
    (saved,) = load_photos(tmp_path / "set")
    assert saved.checked and all(c.checked for c in saved.cards)


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("api/photos/0", {"cards": [{"corners": [[0, 0]]}]}, 400, "card 1: corners"),
        (
            "api/photos/0",
            {"cards": [{"corners": [[0, 0], [9, 0], [9, 14], [0, 14]], "count": 4}]},
            400,
            "card 1",
        ),  # fmt: skip
        ("api/photos/0", {"file": "other.jpg", "cards": []}, 400, "reload the page"),
        ("api/photos/0", "nonsense", 400, "expected a photo"),
        ("api/photos/5", {"cards": []}, 404, "no photo 5"),
        ("api/nothing", {}, 404, "no such page"),
    ],
)
def test_review_page_refuses_bad_edits(
    server: str, tmp_path: Path, path: str, body, status: int, message: str
) -> None:
    before = (tmp_path / "set" / ANNOTATIONS_FILE).read_bytes()
    got, answer = post(server + path, body)
    assert got == status and message in answer["error"]
    assert (tmp_path / "set" / ANNOTATIONS_FILE).read_bytes() == before


def test_review_page_takes_json_only(server: str, tmp_path: Path) -> None:
    # A form another web page posts (text/plain needs no CORS preflight) changes nothing.
    before = (tmp_path / "set" / ANNOTATIONS_FILE).read_bytes()
    request = urllib.request.Request(server + "api/photos/0", b'{"cards": []}',
                                     {"Content-Type": "text/plain"})  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    assert error.value.code == 415
    assert (tmp_path / "set" / ANNOTATIONS_FILE).read_bytes() == before


def test_review_page_snaps_a_rough_card(server: str, tmp_path: Path) -> None:
    (photo,) = load_photos(tmp_path / "set")
    true = photo.cards[0].corners
    rough = true + np.array([[-4, 3], [3, 4], [4, -3], [-3, -4]])
    status, answer = post(server + "api/photos/0/snap", {"corners": rough.tolist()})
    assert status == 200, answer
    snapped = np.array(answer["corners"])
    assert np.abs(snapped - true).max() < np.abs(rough - true).max()


def test_dataset_without_photos_reviews_empty(tmp_path: Path) -> None:
    save_photos(tmp_path, [LabelledPhoto("x.jpg", 10, 10)])
    httpd = make_server(tmp_path, port=0)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/api/photos/0/image"
        with pytest.raises(urllib.error.HTTPError) as error:
            get(url)
        assert error.value.code == 400
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_review_on_a_port_in_use_is_one_line(made: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = label("review", str(made), "--no-browser", "--port", port)
    assert result.exit_code == 2
    assert f"port {port} is in use" in result.output and "--port 0" in result.output
