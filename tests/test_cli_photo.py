"""``setvision photo`` through typer's CliRunner, with a fake classifier and detector.

The photos are synthetic tables (:func:`tests._pipeline_fakes.table_frame`) written as JPEG; the
classifier reads them from their ink (:class:`~tests._pipeline_fakes.InkReader`) and the detector
finds their white rectangles, so these tests exercise loading, the pipeline, drawing, file
handling, output formats and exit codes, not the model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

import vision.batch
import vision.pipeline
from vision.cards import parse_card
from vision.cli import app

from ._pipeline_fakes import InkReader, box_detector, table_frame

pytest.importorskip("vision.io", reason="vision.io (load_image) not there yet")

SET_CARDS = [parse_card(t) for t in (
    "1 red solid oval", "2 green solid ovals", "3 purple solid ovals", "2 red solid ovals",
)]  # fmt: skip
NO_SET = [parse_card(t) for t in ("1 red solid oval", "2 red solid ovals", "1 green solid oval")]

runner = CliRunner()


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    def init(model: str | None, options: dict) -> None:
        vision.batch._WORKER["classifier"] = InkReader()
        vision.batch._WORKER["options"] = options

    monkeypatch.setattr(vision.batch, "_init_worker", init)
    monkeypatch.setattr(vision.batch, "_check_model", lambda model: None)
    monkeypatch.setattr(vision.pipeline, "_default_detector", lambda: box_detector)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


def photo(path: Path, cards: list = SET_CARDS) -> Path:
    frame, _ = table_frame(cards, width=960, height=540)
    cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 95])
    return path


def run(*args: str):
    return runner.invoke(app, ["photo", *args])


def test_text_output_and_annotated_copy(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "4 cards, 1 SET" in out
    assert "2 green solid ovals" in out and "row 1, col 2" in out
    assert "SET 1: #1 1 red solid oval + #2 2 green solid ovals + #3 3 purple solid ovals" in out
    written = tmp_path / "table.sets.jpg"
    assert written.is_file() and f"annotated copy: {written}" in out
    image = cv2.imread(str(written))
    assert image.shape == (540, 960, 3)


def test_never_overwrites_without_force(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    assert run(str(src)).exit_code == 0
    before = (tmp_path / "table.sets.jpg").stat().st_mtime_ns
    again = run(str(src))
    assert again.exit_code == 2
    assert "exists; use --force" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert "4 cards, 1 SET" in again.stdout  # the readings are still reported
    assert (tmp_path / "table.sets.jpg").stat().st_mtime_ns == before
    assert "--force to overwrite, --out or --no-image" in again.stderr
    # Where --out named the file already, the advice is another --out.
    named = run(str(src), "--out", str(tmp_path / "table.sets.jpg"))
    assert "--force to overwrite, another --out or --no-image" in named.stderr
    assert run(str(src), "--force").exit_code == 0


def test_no_copy_written_into_a_read_only_folder(tmp_path: Path) -> None:
    # A dataset folder marked read-only: nothing is written beside its photos by default,
    # even by a process (root) that could; the readings are reported all the same.
    folder = tmp_path / "dataset"
    folder.mkdir()
    src = photo(folder / "table.jpg")
    photo(folder / "other.jpg")
    folder.chmod(0o555)
    try:
        result = run(str(src))
        assert result.exit_code == 2
        assert "read-only folder" in result.stderr
        assert "4 cards, 1 SET" in result.stdout
        assert sorted(p.name for p in folder.iterdir()) == ["other.jpg", "table.jpg"]
        # The whole folder: the refusal, the same for each photo, is said once.
        both = run(str(folder))
        assert both.exit_code == 2
        assert len(both.stderr.strip().splitlines()) == 1
        assert "no annotated copy written for 2" in both.stdout
        out = tmp_path / "out"
        assert run(str(src), "--out", str(out)).exit_code == 0
        assert (out / "table.sets.jpg").exists()
    finally:
        folder.chmod(0o755)


def test_a_copy_name_too_long_for_the_file_system_is_one_refusal(tmp_path: Path) -> None:
    # A photo named near the file system's limit (255 bytes) gets a copy name over it: the
    # lookup raised, and the whole run stopped before any photo was read.
    folder = tmp_path / "photos"
    folder.mkdir()
    photo(folder / "a.jpg")
    photo(folder / ("b" * 250 + ".png"))
    result = run(str(folder))
    assert result.exit_code == 2
    assert result.stdout.count("4 cards, 1 SET") == 2
    assert (folder / "a.sets.jpg").exists()
    assert result.stderr.count("\n") == 1
    assert "file name too long; use --out or --no-image" in result.stderr
    assert "no annotated copy written for 1" in result.stdout


def test_heic_photos_in_a_folder_are_said_not_read(tmp_path: Path) -> None:
    # A folder of iPhone photos said "no photos in this folder (JPEG, PNG, ...)"; beside a
    # JPEG they were passed over in silence.
    folder = tmp_path / "iphone"
    folder.mkdir()
    for name in ("IMG_2.HEIC", "IMG_3.heif"):
        (folder / name).write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(16))
    alone = run(str(folder))
    assert alone.exit_code == 2
    assert alone.stderr.strip().endswith(
        "no photos in this folder (JPEG, PNG, ...); 2 HEIC/HEIF/AVIF photos not read (OpenCV "
        "cannot read them); export them as JPEG or PNG"
    )
    photo(folder / "a.jpg")
    mixed = run(str(folder), "--no-image")
    assert mixed.exit_code == 0 and "4 cards, 1 SET" in mixed.stdout
    assert mixed.stderr == (
        f"setvision: warning: {folder}: 2 HEIC/HEIF/AVIF photos not read (OpenCV cannot read "
        "them); export them as JPEG or PNG\n"
    )
    # A video beside them was passed over in silence (trial 6), where given by name it is
    # refused ("... is a video, not a photo").
    (folder / "clip.MP4").write_bytes(b"\x00\x00\x00\x18ftypisom" + bytes(16))
    mixed = run(str(folder), "--no-image")
    assert mixed.exit_code == 0 and "4 cards, 1 SET" in mixed.stdout
    assert "; 1 video not read (setvision photo reads still images)\n" in mixed.stderr


def test_json_of_a_name_that_is_not_utf8_is_valid_unicode(tmp_path: Path) -> None:
    # A file name with the byte 0xff came out as a lone surrogate ("\udcff"): valid JSON
    # syntax, but strict parsers and UTF-8 encoders reject it.
    src = tmp_path / os.fsdecode(b"bad\xffname.jpg")
    try:  # cv2.imwrite crashes on such a name (OpenCV 5.0 here): the bytes are copied
        src.write_bytes(photo(tmp_path / "a.jpg").read_bytes())
    except (OSError, UnicodeEncodeError):  # a file system that only takes UTF-8 names
        pytest.skip("this file system does not take the name")
    result = run(str(src), "--json", "--no-image")
    assert result.exit_code == 0
    line = json.loads(result.stdout)
    assert line["image"] == str(tmp_path / "bad\\xffname.jpg")
    line["image"].encode("utf-8")  # no lone surrogate left


def test_recursive_reads_linked_folders_once_and_never_above(tmp_path: Path) -> None:
    # A subfolder that is a link to a folder of photos was skipped by --recursive without a
    # word, after the error without it had advised --recursive.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    photo(elsewhere / "a.jpg")
    top = tmp_path / "top"
    top.mkdir()
    (top / "linked").symlink_to(elsewhere)
    (top / "linked_again").symlink_to(elsewhere)  # the same folder twice: read once
    (elsewhere / "loop").symlink_to(elsewhere)  # a loop
    (elsewhere / "up").symlink_to(tmp_path)  # out of the tree, above it
    flat = run(str(top), "--no-image")
    assert flat.exit_code == 2 and "use --recursive" in flat.stderr
    deep = run(str(top), "-r", "--no-image", "--json")
    assert deep.exit_code == 0, deep.output
    images = [json.loads(line)["image"] for line in deep.stdout.splitlines()]
    assert images == [str(top / "linked" / "a.jpg")]


def test_summary_counts_photos_read_without_a_copy_as_processed(tmp_path: Path) -> None:
    # Photos read and reported whose copy could not be written were summed up as "0 of 2
    # photos processed, 2 failed" (a read-only dataset folder): they were processed.
    folder = tmp_path / "dataset"
    folder.mkdir()
    photo(folder / "a.jpg")
    photo(folder / "b.jpg", NO_SET)
    (folder / "c.jpg").write_bytes(b"\xff\xd8\xff\xe0 broken")
    folder.chmod(0o555)
    try:
        result = run(str(folder))
    finally:
        folder.chmod(0o755)
    assert result.exit_code == 2
    assert "4 cards, 1 SET" in result.stdout and "3 cards, 0 SETs" in result.stdout
    summary = result.stdout.strip().splitlines()[-1]
    assert summary == (
        "2 of 3 photos processed, 1 failed, no annotated copy written for 2 (see the errors above)"
    )


def test_a_hard_link_to_an_input_photo_is_not_written_over(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    link = tmp_path / "other.jpg"
    os.link(src, link)
    before = src.read_bytes()
    result = run(str(src), "--out", str(link), "--force")
    assert result.exit_code == 2
    assert "is an input photo" in result.stderr
    assert src.read_bytes() == before


def test_a_copy_written_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    from vision.batch import _write_image

    target = tmp_path / "r.jpg"
    target.write_bytes(b"another run's copy")
    image = np.zeros((8, 8, 3), np.uint8)
    assert "written meanwhile" in (_write_image(target, image, exclusive=True) or "")
    assert target.read_bytes() == b"another run's copy"
    assert _write_image(target, image) is None


def test_json_schema(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src), "--json", "--no-image")
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["image"] == str(src) and (obj["width"], obj["height"]) == (960, 540)
    assert not (tmp_path / "table.sets.jpg").exists()
    types = {"id": int, "count": int, "colour": str, "shape": str, "fill": str, "label": str,
             "confidence": float, "corners": list}  # fmt: skip
    for k, card in enumerate(obj["cards"], 1):
        for key, kind in types.items():
            assert isinstance(card[key], kind), key
        assert card["id"] == k and card["count"] in (1, 2, 3)
        assert card["colour"] in ("red", "green", "purple")
        assert card["shape"] in ("oval", "diamond", "squiggle")
        assert card["fill"] in ("solid", "striped", "open")
        assert np.array(card["corners"]).shape == (4, 2)
    assert [c["label"] for c in obj["cards"]] == [c.label for c in SET_CARDS]
    assert obj["sets"] == [[1, 2, 3]]
    assert {"load", "detect", "warp", "classify", "colour", "rules"} <= set(obj["timings_ms"])
    assert all(isinstance(v, float) for v in obj["timings_ms"].values())


def test_no_set_verdict(tmp_path: Path) -> None:
    """Fewer cards than any table holds (9 in the beginners' games): no deal is advised."""
    result = run(str(photo(tmp_path / "few.png", NO_SET)))
    assert result.exit_code == 0
    assert "no SET among these 3 cards" in result.stdout
    assert "deal" not in result.stdout


def test_no_set_on_a_full_table_deals_three_more(capsys: pytest.CaptureFixture[str]) -> None:
    from vision.cli_photo import _print_table

    cards = [
        {"id": i, "label": "1 red solid oval", "confidence": 0.9, "row": 1, "col": i}
        for i in range(1, 10)
    ]
    _print_table({"image": "t.jpg", "cards": cards, "sets": []}, None)
    assert "no SET on the table: deal 3 more cards" in capsys.readouterr().out


def test_no_cards_found(tmp_path: Path) -> None:
    blank = tmp_path / "blank.jpg"
    cv2.imwrite(str(blank), np.full((300, 400, 3), (40, 90, 30), np.uint8))
    result = run(str(blank))
    assert result.exit_code == 1  # read, nothing found: as grep exits 1 (bad input is 2)
    assert "no cards found" in result.stdout
    other = tmp_path / "other.jpg"
    cv2.imwrite(str(other), np.full((300, 400, 3), (200, 90, 30), np.uint8))
    both = run(str(blank), str(other), "--no-image")
    assert both.exit_code == 1 and "no cards found in 2" in both.stdout
    both = run(str(blank), str(tmp_path / "missing.jpg"), "--no-image")
    assert both.exit_code == 2  # bad input comes first


def test_unreadable_file_is_one_line_and_non_zero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"this is not a jpeg")
    result = run(str(bad))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "bad.jpg" in result.stderr
    missing = run(str(tmp_path / "nope.jpg"))
    assert missing.exit_code == 2 and "nope.jpg" in missing.stderr


def test_folder_with_one_corrupt_photo(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    photo(folder / "a.jpg")
    photo(folder / "c.png", NO_SET)
    (folder / "b.jpg").write_bytes(b"\xff\xd8\xff\xe0 broken")
    (folder / "notes.txt").write_text("not a photo")
    result = run(str(folder), "--json")
    assert result.exit_code == 2
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    # Every photo gets a line, in order: the unreadable one as {"image", "error"}.
    names = ("a.jpg", "b.jpg", "c.png")
    assert [line["image"] for line in lines] == [str(folder / n) for n in names]
    assert set(lines[1]) == {"image", "error"}
    assert lines[0]["annotated"] == str(folder / "a.sets.jpg") and "cards" in lines[2]
    assert "b.jpg" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert (folder / "a.sets.jpg").is_file() and (folder / "c.sets.jpg").is_file()
    # Running again on the folder does not read its own annotated copies.
    again = run(str(folder), "--json", "--no-image")
    assert len(again.stdout.strip().splitlines()) == 3
    assert all(json.loads(line).get("annotated") is None for line in again.stdout.splitlines())


def test_opencv_failure_on_one_photo_does_not_stop_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    for name in ("a.jpg", "b.jpg", "c.jpg"):
        photo(folder / name)
    real = vision.pipeline.process_photo

    def flaky(source, *args, **kwargs):
        if Path(source).name == "b.jpg":
            raise cv2.error("OpenCV(4.x) resize.cpp: error: (-215:Assertion failed) !dsize.empty()")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(vision.pipeline, "process_photo", flaky)
    result = run(str(folder), "--json", "--no-image")
    assert result.exit_code == 2
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    read = [x["image"] for x in lines if "cards" in x]
    assert read == [str(folder / "a.jpg"), str(folder / "c.jpg")]
    assert [x["image"] for x in lines if "error" in x] == [str(folder / "b.jpg")]
    (line,) = result.stderr.strip().splitlines()
    assert "b.jpg: could not be processed" in line and "Traceback" not in result.stderr


def test_out_file_and_folder(tmp_path: Path) -> None:
    a, b = photo(tmp_path / "a.jpg"), photo(tmp_path / "b.jpg", NO_SET)
    single = tmp_path / "mine.png"
    assert run(str(a), "--out", str(single)).exit_code == 0
    assert single.is_file()
    folder = tmp_path / "annotated"
    result = run(str(a), str(b), "--out", str(folder))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in folder.iterdir()) == ["a.sets.jpg", "b.sets.jpg"]
    assert "2 of 2 photos processed" in result.stdout


def test_show_without_display_warns_and_still_writes(tmp_path: Path) -> None:
    result = run(str(photo(tmp_path / "t.jpg")), "--show")
    assert result.exit_code == 0
    assert result.stderr.startswith("setvision: warning: --show: no display")
    assert len(result.stderr.strip().splitlines()) == 1
    assert (tmp_path / "t.sets.jpg").is_file()


def test_show_with_no_image_writes_nothing(tmp_path: Path) -> None:
    src = photo(tmp_path / "t.jpg")
    (tmp_path / "t.sets.jpg").write_bytes(b"mine")  # would block writing: not written anyway
    result = run(str(src), "--show", "--no-image")
    assert result.exit_code == 0, result.output
    assert "warning: --show: no display" in result.stderr and "--no-image" in result.stderr
    assert "4 cards, 1 SET" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jpg", "t.sets.jpg"]
    assert (tmp_path / "t.sets.jpg").read_bytes() == b"mine"


def test_show_with_no_image_shows_the_drawn_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(cv2, "imshow", lambda title, image: shown.append((title, image)))
    monkeypatch.setattr(cv2, "waitKey", lambda delay=0: -1)
    monkeypatch.setattr(cv2, "destroyWindow", lambda title: None)
    src = photo(tmp_path / "t.jpg")
    result = run(str(src), "--show", "--no-image")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert len(shown) == 1 and shown[0][1].shape == (540, 960, 3)
    assert not np.array_equal(shown[0][1], cv2.imread(str(src)))  # annotated, not the photo
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jpg"]


def test_duplicates_are_called_out(tmp_path: Path) -> None:
    twice = [SET_CARDS[0], SET_CARDS[1], SET_CARDS[0]]
    src = photo(tmp_path / "dup.jpg", twice)
    one_deck = run(str(src), "--no-image")
    assert one_deck.exit_code == 0
    label = SET_CARDS[0].label
    assert f"duplicate readings: #1 and #3 read as {label}; resolved" in one_deck.stdout
    assert "--mixed-decks" not in one_deck.stdout  # one card twice: no hint
    first = json.loads(run(str(src), "--no-image", "--json").stdout)["cards"]
    assert [c.get("first_read") for c in first] == [label, None, label]
    mixed = run(str(src), "--no-image", "--mixed-decks", "--json")
    obj = json.loads(mixed.stdout)
    assert [c["label"] for c in obj["cards"]] == [c.label for c in twice]
    assert [c["duplicate"] for c in obj["cards"]] == [True, False, True]
    text = run(str(src), "--no-image", "--mixed-decks").stdout
    assert f"(several decks): #1 and #3 are {label}" in text


def test_many_duplicates_group_by_card_and_hint_at_mixed_decks() -> None:
    """A table photographed twice side by side read 24 cards as 12 pairs; the summary named
    all 24 as if one card. Each group is named with its card, and three or more groups hint
    at --mixed-decks."""
    import vision.cli_photo as cli_photo

    labels = ["1 red solid oval", "2 green open diamonds", "3 purple striped squiggles"]
    cards = [
        {"id": i + 1, "label": "x", "duplicate": True, "first_read": labels[i % 3]}
        for i in range(6)
    ] + [{"id": 7, "label": "y", "duplicate": False}]
    lines = cli_photo._duplicate_lines(cards, mixed_decks=False)
    assert lines[0].startswith("duplicate readings: #1 and #4 read as 1 red solid oval; ")
    assert "#3 and #6 read as 3 purple striped squiggles" in lines[0]
    assert "use --mixed-decks" in lines[1]
    assert len(cli_photo._duplicate_lines(cards[:2] + cards[3:5], mixed_decks=False)) == 1
    assert cli_photo._duplicate_lines(cards[6:], mixed_decks=False) == []


def test_process_pool(tmp_path: Path) -> None:
    for name in "abc":
        photo(tmp_path / f"{name}.jpg")
    result = run(str(tmp_path), "--jobs", "2", "--json", "--no-image")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    assert [Path(o["image"]).name for o in lines] == ["a.jpg", "b.jpg", "c.jpg"]
    assert all(len(o["sets"]) == 1 for o in lines)


def test_shipped_sample_reads_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's first command: the real detector and model on datasets/samples/table.jpg."""
    monkeypatch.undo()  # the real classifier and detector
    pytest.importorskip("vision.detect")
    from vision.data import REPO_ROOT

    sample = REPO_ROOT / "datasets" / "samples" / "table.jpg"
    truth_file = sample.with_suffix(".json")
    if not sample.is_file() or not (REPO_ROOT / "models" / "card_classifier.onnx").is_file():
        pytest.skip("sample photo or model not in this checkout")
    result = run(str(sample), "--json", "--out", str(tmp_path / "out.jpg"))
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    truth = json.loads(truth_file.read_text())
    assert sorted(c["label"] for c in got["cards"]) == sorted(c["label"] for c in truth["cards"])

    def named(obj: dict) -> set:
        labels = {c["id"]: c["label"] for c in obj["cards"]}
        return {frozenset(labels[i] for i in s) for s in obj["sets"]}

    assert named(got) == named(truth)
    assert (tmp_path / "out.jpg").is_file()


def test_never_writes_over_an_input_photo(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    before = src.read_bytes()
    result = run(str(src), "--out", str(src), "--force")
    assert result.exit_code == 2
    assert "is an input photo" in result.stderr
    assert src.read_bytes() == before


def test_out_image_name_with_several_photos_is_refused(tmp_path: Path) -> None:
    a, b = photo(tmp_path / "a.jpg"), photo(tmp_path / "b.jpg")
    result = run(str(a), str(b), "--out", str(tmp_path / "both.jpg"))
    assert result.exit_code == 2
    assert "names one image file" in result.stderr
    assert not (tmp_path / "both.jpg").exists()


def test_results_are_printed_when_the_copy_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    src = photo(tmp_path / "table.jpg")

    def full_disk(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(vision.batch.tempfile, "mkstemp", full_disk)  # the copy's write
    result = run(str(src), "--out", str(tmp_path / "x.jpg"))
    assert result.exit_code == 2
    assert "no space left on device" in result.stderr.lower()
    assert "4 cards, 1 SET" in result.stdout
    assert "could not write the annotated copy" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_greyscale_photo_reports_every_colour_uncertain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A greyscale photo has no colour to read: say so per card instead of guessing."""
    monkeypatch.undo()  # the real classifier and detector
    from vision.data import REPO_ROOT

    sample = REPO_ROOT / "datasets" / "samples" / "table.jpg"
    grey = cv2.cvtColor(cv2.imread(str(sample)), cv2.COLOR_BGR2GRAY)
    path = tmp_path / "grey.jpg"
    cv2.imwrite(str(path), grey)
    result = run(str(path), "--json", "--no-image")
    assert result.exit_code == 0, result.output
    cards = json.loads(result.stdout)["cards"]
    assert len(cards) == 12
    assert all(c["uncertain"] and c["confidence"] < 0.34 for c in cards)
    assert json.loads(result.stdout)["colourless"] is True
    # No colour is made up: a new user saw every card of a faded green table printed "red".
    assert all(c["colour"] is None and "(colour?)" in c["label"] for c in cards)
    text = run(str(path), "--no-image")
    assert "no colour (greyscale" in text.stdout
    assert "rests on uncertain" in text.stdout  # each SET says it is a guess
    assert not any(word in text.stdout for word in (" red ", " green ", " purple "))
    # 2 green and 2 red solid ovals: alike without colour, but no repeat (trial 6 was told
    # "duplicate readings ... resolved by the deck").
    assert not any(c["duplicate"] for c in cards) and "duplicate" not in text.stdout


@pytest.mark.parametrize("gains", [(0.75, 0.9, 1.0), (0.94, 1.2, 1.35)])
def test_a_tinted_monochrome_photo_is_colourless_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gains: tuple[float, float, float]
) -> None:
    """A grey photo tinted by one colour (BGR gains: a sepia filter) keeps some chroma after
    each card's white balance; a new user's copy was read with confident, wrong colours
    ("1 purple open oval 99.8%" for a green card). Its inks all share one hue: colourless."""
    monkeypatch.undo()  # the real classifier and detector
    from vision.data import REPO_ROOT

    sample = REPO_ROOT / "datasets" / "samples" / "table.jpg"
    grey = cv2.cvtColor(cv2.imread(str(sample)), cv2.COLOR_BGR2GRAY).astype(np.float32)
    tinted = np.clip(np.stack([grey * g for g in gains], axis=-1), 0, 255).astype(np.uint8)
    path = tmp_path / "sepia.jpg"
    cv2.imwrite(str(path), tinted)
    result = json.loads(run(str(path), "--json", "--no-image").stdout)
    assert result["colourless"] is True
    assert all(c["uncertain"] for c in result["cards"])


def test_photos_with_the_same_stem_both_get_a_copy(tmp_path: Path) -> None:
    folder = tmp_path / "coll"
    folder.mkdir()
    photo(folder / "a.jpg")
    photo(folder / "a.png", NO_SET)
    result = run(str(folder), "--json")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) == 2
    assert (folder / "a.sets.jpg").is_file() and (folder / "a.png.sets.jpg").is_file()
    again = run(str(folder), "--json", "--no-image")  # the copies are not read as photos
    assert len(again.stdout.strip().splitlines()) == 2
    # Same names from two folders into one --out folder: numbered, none dropped.
    more = [folder / "a.jpg", folder / "a.png"]
    for name in ("b", "c"):
        (tmp_path / name).mkdir()
        more.append(photo(tmp_path / name / "a.jpg"))
    out = tmp_path / "out"
    many = run(*map(str, more), "-o", str(out))
    assert many.exit_code == 0, many.output
    names = ["a.jpg.2.sets.jpg", "a.jpg.sets.jpg", "a.png.sets.jpg", "a.sets.jpg"]
    assert sorted(p.name for p in out.iterdir()) == names


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_max_pixels_option(tmp_path: Path, jobs: str) -> None:
    a, b = photo(tmp_path / "a.jpg"), photo(tmp_path / "b.jpg")  # 960 x 540: 0.5 MP
    small = run(str(a), str(b), "--no-image", "--max-pixels", "100000", "--jobs", jobs)
    assert small.exit_code == 2
    lines = small.stderr.strip().splitlines()
    assert len(lines) == 2 and all("--max-pixels" in line for line in lines)
    enough = run(str(a), str(b), "--no-image", "--max-pixels", "600000", "--jobs", jobs, "--json")
    assert enough.exit_code == 0, enough.output
    assert all("draw" not in json.loads(line)["timings_ms"] for line in enough.stdout.splitlines())


def test_recursive_folders(tmp_path: Path) -> None:
    top = tmp_path / "games"
    (top / "day1").mkdir(parents=True)
    (top / "day2" / "late").mkdir(parents=True)
    photo(top / "day1" / "a.jpg")
    photo(top / "day2" / "late" / "b.jpg", NO_SET)
    flat = run(str(top))
    assert flat.exit_code == 2
    assert "no photos in this folder" in flat.stderr and "--recursive" in flat.stderr
    assert len(flat.stderr.strip().splitlines()) == 1
    deep = run(str(top), "-r", "--json")
    assert deep.exit_code == 0, deep.output
    images = [json.loads(line)["image"] for line in deep.stdout.strip().splitlines()]
    assert images == [str(top / "day1" / "a.jpg"), str(top / "day2" / "late" / "b.jpg")]
    assert (top / "day2" / "late" / "b.sets.jpg").is_file()
    again = run(str(top), "--recursive", "--json", "--no-image")  # copies are not read
    assert len(again.stdout.strip().splitlines()) == 2
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    nothing = run(str(empty), "-r")
    assert nothing.exit_code == 2 and "or its subfolders" in nothing.stderr
    assert "use --recursive" not in nothing.stderr


def test_out_with_no_image_warns(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src), "--no-image", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0
    assert "--out is ignored with --no-image" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_photo_named_twice_is_read_once(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src), str(tmp_path), str(src))
    assert result.exit_code == 0
    assert result.stdout.count("4 cards, 1 SET") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.jpg", "table.sets.jpg"]
    # Said, not dropped in silence (a new user's trial).
    assert f"note: {src} is given 3 times: read once" in result.stderr


def test_a_photo_and_a_link_to_it_are_read_once_under_its_own_name(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    src = photo(folder / "table.jpg")
    (folder / "alias.jpg").symlink_to(src.name)  # sorts first
    result = run(str(folder), "--no-image")
    assert result.exit_code == 0 and result.stdout.count("4 cards, 1 SET") == 1
    assert f"{src}: 4 cards" in result.stdout  # the photo, not the link (it was the link)
    given = run(str(folder / "alias.jpg"), str(src), "--no-image")
    assert given.stdout.count("4 cards, 1 SET") == 1
    assert f"note: {folder / 'alias.jpg'} is the same photo as {src}: read once" in given.stderr


def test_table_cells_are_not_wrapped_when_not_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Piped or logged, rich assumed 80 columns and wrapped the note "uncertain, duplicate
    # reading" (and long labels) over two lines. The fake rows are shorter than real ones
    # (76 characters): rich is told 60 columns here, as it assumes 80 for a pipe.
    monkeypatch.setenv("COLUMNS", "60")
    twice = [SET_CARDS[2], SET_CARDS[1], SET_CARDS[2]]
    src = photo(tmp_path / "dup.jpg", twice)
    result = run(str(src), "--no-image", "--mixed-decks", "--uncertain-below", "1")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "row 1, col" in line]
    assert len(rows) == 3
    assert all("3 purple solid ovals" in row for row in (rows[0], rows[2]))
    assert "uncertain, duplicate reading" in rows[0]
    assert max(len(line) for line in result.stdout.splitlines()) > 60


@pytest.mark.parametrize(
    ("name", "make", "message"),
    [
        ("res.txt", False, "setvision does not write .txt files"),
        ("out.gif", False, "setvision does not write .gif files"),  # an image, not one it writes
        ("notes.txt", True, "is neither a folder nor an image file name"),
        (".jpg", False, "is only an image suffix"),  # was made into a hidden folder
        (".PNG", False, "is only an image suffix"),
    ],
)
def test_out_that_is_not_an_image_name_is_refused(
    tmp_path: Path, name: str, make: bool, message: str
) -> None:
    src = photo(tmp_path / "table.jpg")
    out = tmp_path / name
    if make:
        out.write_text("keep me")
    result = run(str(src), "--out", str(out))
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (out.read_text() == "keep me") if make else not out.exists()


def test_out_folder_name_with_a_dotted_version_is_made(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src), "--out", str(tmp_path / "run.v2"))
    assert result.exit_code == 0
    assert (tmp_path / "run.v2" / "table.sets.jpg").is_file()


def test_table_lines_have_no_trailing_spaces(tmp_path: Path) -> None:
    result = run(str(photo(tmp_path / "table.jpg")), "--no-image")
    assert result.exit_code == 0
    assert all(line == line.rstrip() for line in result.stdout.splitlines())
    assert "note" not in result.stdout.splitlines()[1]  # no empty note column


def test_a_multi_frame_image_says_only_its_first_frame_is_read(tmp_path: Path) -> None:
    frame = cv2.imread(str(photo(tmp_path / "table.jpg")))
    scan = tmp_path / "pages.tiff"
    assert cv2.imwritemulti(str(scan), [frame, frame // 2])
    result = run(str(scan), "--no-image")
    assert result.exit_code == 0
    assert "SET" in result.stdout  # the first page is read as usual
    assert result.stderr.count("\n") == 1
    assert "pages.tiff holds 2 frames" in result.stderr and "only the first" in result.stderr
    single = run(str(tmp_path / "table.jpg"), "--no-image")
    assert "frames" not in single.stderr


def test_a_heavily_compressed_jpeg_is_read_with_a_warning(tmp_path: Path) -> None:
    # At quality 10 to 15 a new user saw cards misread at 97.5 to 99.9%, not flagged.
    frame, _ = table_frame(SET_CARDS, width=960, height=540)
    for quality, warned in ((15, True), (29, True), (30, False), (90, False)):
        path = tmp_path / f"q{quality}.jpg"
        cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        result = run(str(path), "--no-image", "--json")
        (line,) = [json.loads(x) for x in result.stdout.splitlines()]
        said = [w for w in line["warnings"] if "heavily compressed JPEG" in w]
        assert bool(said) == warned, (quality, line["warnings"])
        if warned:
            assert f"(quality about {quality})" in said[0]
            assert "heavily compressed JPEG" in result.stderr


def test_a_gif_is_read_with_a_warning_about_its_colours(tmp_path: Path) -> None:
    frame = cv2.imread(str(photo(tmp_path / "table.jpg")))
    gif = tmp_path / "table.gif"
    assert cv2.imwrite(str(gif), frame)
    result = run(str(gif), "--no-image")
    assert result.exit_code == 0
    assert "table.gif is a GIF (at most 256 colours)" in result.stderr
    assert result.stderr.count("\n") == 1
    assert "GIF" not in run(str(tmp_path / "table.jpg"), "--no-image").stderr


def _palette_png(path: Path, frame: np.ndarray) -> Path:
    """Write ``frame`` (BGR) as an indexed-colour PNG (colour type 3, 216 web colours), by hand:
    OpenCV writes only full-colour PNGs."""
    import struct
    import zlib

    levels = np.round(frame.astype(np.float32) / 51).astype(np.uint8)  # 0..5 per channel
    index = levels[..., 2] * 36 + levels[..., 1] * 6 + levels[..., 0]  # R, G, B digits
    palette = bytes(int(51 * d) for i in range(216) for d in (i // 36, i // 6 % 6, i % 6))
    rows = b"".join(b"\x00" + row.tobytes() for row in index.astype(np.uint8))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + kind + body + crc

    h, w = index.shape
    header = struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"PLTE", palette)
        + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    )  # fmt: skip
    return path


def test_a_palette_png_is_read_with_the_gifs_warning(tmp_path: Path) -> None:
    from vision.io import is_palette_png

    frame = cv2.imread(str(photo(tmp_path / "table.jpg")))
    indexed = _palette_png(tmp_path / "table.png", frame)
    assert cv2.imread(str(indexed)).shape == frame.shape
    assert is_palette_png(indexed) and not is_palette_png(tmp_path / "table.jpg")
    full = tmp_path / "full.png"
    cv2.imwrite(str(full), frame)
    assert not is_palette_png(full)
    result = run(str(indexed), "--no-image")
    assert result.exit_code == 0 and "table.png is a palette PNG (at most 256 colours)" in (
        result.stderr
    )
    assert "palette" not in run(str(full), "--no-image").stderr


def test_an_empty_path_is_refused_not_taken_as_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    photo(tmp_path / "table.jpg")
    monkeypatch.chdir(tmp_path)
    result = run("")  # "$PHOTO" with the variable unset
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "empty path" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.jpg"]  # nothing written


def test_a_photo_named_with_spaces_only_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("  ")  # no such file: refused, saying so
    assert result.exit_code == 2 and "only spaces, and no file has that name" in result.stderr
    photo(tmp_path / "table.jpg").rename(tmp_path / " ")  # a file named " " (a new user's
    # trial: refused as "")
    result = run(" ", "--no-image")
    assert result.exit_code == 0, result.output
    assert "4 cards" in result.stdout


@pytest.mark.parametrize("as_json", [False, True])
def test_a_missing_path_among_several_does_not_stop_the_others(
    tmp_path: Path, as_json: bool
) -> None:
    good = photo(tmp_path / "table.jpg")
    (tmp_path / "empty").mkdir()
    args = [str(tmp_path / "missing.jpg"), str(tmp_path / "empty"), str(good), "--no-image"]
    result = run(*args, *(["--json"] if as_json else []))
    assert result.exit_code == 2
    assert "missing.jpg: no such file or folder" in result.stderr
    assert "no photos in this folder" in result.stderr
    if as_json:
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        assert [("error" in line) for line in lines] == [True, True, False]
        assert lines[2]["sets"]
    else:
        assert "SET" in result.stdout and "1 of 3 photos processed, 2 failed" in result.stdout
    alone = run(str(tmp_path / "missing.jpg"))
    assert alone.exit_code == 2 and alone.stderr.count("\n") == 1


def test_links_as_out_are_not_written_through_into_other_files(tmp_path: Path) -> None:
    table = photo(tmp_path / "table.jpg")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    (tmp_path / "sym.jpg").symlink_to(notes)
    result = run(str(table), "--out", str(tmp_path / "sym.jpg"), "--force")
    assert result.exit_code == 2
    assert "which is not an image file" in result.stderr
    assert notes.read_text() == "my notes"
    (tmp_path / "dangling.jpg").symlink_to(tmp_path / "gone.jpg")
    result = run(str(table), "--out", str(tmp_path / "dangling.jpg"))
    assert result.exit_code == 2 and "broken link" in result.stderr
    assert not (tmp_path / "gone.jpg").exists()
    old = photo(tmp_path / "old.jpg")  # a link to an image may still be replaced with --force
    (tmp_path / "link.jpg").symlink_to(old)
    assert run(str(table), "--out", str(tmp_path / "link.jpg"), "--force").exit_code == 0


def test_json_says_why_no_copy_was_written(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    first = json.loads(run(str(src), "--json").stdout)
    assert first["annotated"].endswith("table.sets.jpg") and "annotated_error" not in first
    again = run(str(src), "--json")
    assert again.exit_code == 2
    line = json.loads(again.stdout)
    assert line["annotated"] is None and "exists; use --force" in line["annotated_error"]
    assert line["sets"]  # the readings are still there
    quiet = json.loads(run(str(src), "--json", "--no-image").stdout)
    assert quiet["annotated"] is None and "annotated_error" not in quiet


@pytest.mark.slow
def test_ctrl_c_with_worker_processes_is_one_line(tmp_path: Path) -> None:
    """Ctrl-C signals the whole process group; the pool workers must leave it to the parent
    (one line, exit 130) instead of each printing a KeyboardInterrupt traceback."""
    import signal
    import subprocess
    import sys
    import time

    sample = Path(__file__).resolve().parent.parent / "datasets" / "samples" / "table.jpg"
    for i in range(200):  # about 8 s of work with two workers
        (tmp_path / f"t{i:03d}.jpg").write_bytes(sample.read_bytes())
    code = "import sys; from vision.cli import run; sys.exit(run())"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "photo", str(tmp_path), "--no-image", "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None
    proc.stdout.readline()  # the first photo is done: the workers are running
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()  # not "Process ForkPoolWorker-1:" and a traceback
    assert len(lines) == 1 and lines[0].endswith("interrupted"), err


@pytest.mark.parametrize("where", ["notes.txt/x.jpg", "notes.txt/deeper/x.jpg", "notes.txt/out"])
def test_out_under_a_file_is_refused_by_name(tmp_path: Path, where: str) -> None:
    (tmp_path / "notes.txt").write_text("keep me\n")
    result = run(str(photo(tmp_path / "t.png")), "--out", str(tmp_path / where))
    assert result.exit_code == 2
    assert "notes.txt is a file, not a folder" in result.output
    assert (tmp_path / "notes.txt").read_text() == "keep me\n"


def test_a_gif_in_a_folder_is_read_too(tmp_path: Path) -> None:
    # Named on its own a GIF was read (with a warning); in a folder it was skipped unsaid.
    frame = cv2.imread(str(photo(tmp_path / "table.jpg")))
    folder = tmp_path / "f"
    folder.mkdir()
    assert cv2.imwrite(str(folder / "t.gif"), frame)
    result = run(str(folder), "--no-image")
    assert result.exit_code == 0 and "t.gif is a GIF" in result.stderr


def test_out_with_a_trailing_slash_is_a_folder_and_an_empty_out_is_refused(tmp_path: Path) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src), "--out", str(tmp_path / "new.jpg") + "/")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new.jpg" / "table.sets.jpg").is_file()
    (tmp_path / "file.jpg").write_bytes(b"x")
    result = run(str(src), "--out", str(tmp_path / "file.jpg") + "/")
    assert result.exit_code == 2 and "is a file, not a folder" in result.stderr
    result = run(str(src), "--out", "")
    assert result.exit_code == 2 and "empty path" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_out_into_a_read_only_folder_is_refused_and_the_readings_kept(tmp_path: Path) -> None:
    # As root the mode bits stop nothing: a shared dataset folder was written into by --out.
    src = photo(tmp_path / "table.jpg")
    folder = tmp_path / "dataset"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        for out in (folder / "x.jpg", folder, folder / "new" / "x.jpg"):
            result = run(str(src), "--out", str(out))
            assert result.exit_code == 2
            assert f"{folder} is a read-only folder" in result.stderr
            assert "4 cards, 1 SET" in result.stdout
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_an_input_photo_in_the_way_of_a_copy_gets_another_name(tmp_path: Path) -> None:
    # t.sets.jpg is both an input and t.jpg's copy name: t.jpg's copy is t.jpg.sets.jpg (it was
    # refused with a message naming t.sets.jpg, which read as if that photo had failed).
    src = photo(tmp_path / "t.jpg")
    copy = photo(tmp_path / "t.sets.jpg")
    before = copy.read_bytes()
    for args in ([str(copy), str(src), "--force"], [str(tmp_path), "--force"]):
        result = run(*args)
        assert result.exit_code == 0, result.output
        assert result.stdout.count("4 cards, 1 SET") == 2
        assert f"annotated copy: {tmp_path / 't.jpg.sets.jpg'}" in result.stdout
        assert copy.read_bytes() == before
        assert (tmp_path / "t.sets.sets.jpg").is_file()


@pytest.mark.parametrize("suffix", [".webp", ".png", ".bmp", ".tif"])
def test_copies_in_other_formats_are_written_without_encoder_noise(
    tmp_path: Path, suffix: str, capfd: pytest.CaptureFixture[str]
) -> None:
    src = photo(tmp_path / "table.jpg")
    result = run(str(src), "--out", str(tmp_path / f"copy{suffix}"))
    assert result.exit_code == 0
    assert cv2.imread(str(tmp_path / f"copy{suffix}")) is not None
    assert "WARN" not in capfd.readouterr().err  # OpenCV's own warnings go to the real stderr


def test_a_folder_of_annotated_copies_only_says_they_were_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    assert run(str(photo(tmp_path / "t.jpg")), "--out", str(folder) + "/").exit_code == 0
    assert [p.name for p in folder.iterdir()] == ["t.sets.jpg"]
    result = run(str(folder))
    assert result.exit_code == 2
    assert "no photos in this folder (JPEG, PNG, ...); 1 annotated copy written by setvision" in (
        result.stderr
    )


def test_the_uncertain_flag_default_is_the_decoders() -> None:
    # It was a literal 0.6 here while the decoder's default moved to the calibrated 0.9.
    import inspect

    from vision.cli_photo import photo_command
    from vision.decode import UNCERTAIN_BELOW

    default = inspect.signature(photo_command).parameters["uncertain_below"].default
    assert default == UNCERTAIN_BELOW == 0.9


def test_a_users_photo_named_like_a_copy_is_read_and_never_overwritten(tmp_path: Path) -> None:
    """A folder scan skips only the copies setvision wrote (marked inside the JPEG): a photo
    of the user's named ``a.sets.jpg`` is read like any photo, so the copy of ``a.jpg``, which
    would take its name, takes the next free one, even with --force (it was overwritten,
    unannounced)."""
    from vision.batch import is_annotated_copy

    folder = tmp_path / "clash"
    folder.mkdir()
    photo(folder / "a.jpg")
    mine = photo(folder / "a.sets.jpg", NO_SET)
    before = mine.read_bytes()
    assert not is_annotated_copy(mine)
    result = run(str(folder), "--force", "--json")
    assert mine.read_bytes() == before
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    assert [line["image"] for line in lines] == [str(folder / "a.jpg"), str(mine)]
    assert result.exit_code == 0 and result.stderr == ""
    assert [line["annotated"] for line in lines] == [
        str(folder / "a.jpg.sets.jpg"),
        str(folder / "a.sets.sets.jpg"),  # the user's photo's own copy
    ]
    assert is_annotated_copy(folder / "a.jpg.sets.jpg")


def test_json_lines_follow_the_input_order_with_missing_paths(tmp_path: Path) -> None:
    """A path that names nothing gets its --json line in its place among the photos' lines
    (it came first, before any photo was read)."""
    a, b = photo(tmp_path / "a.jpg"), photo(tmp_path / "b.jpg", NO_SET)
    gone = tmp_path / "missing.jpg"
    for order in ([a, gone, b], [gone, a, a, b], [a, b, gone]):
        result = run(*map(str, order), "--json", "--no-image")
        assert result.exit_code == 2
        lines = [json.loads(line)["image"] for line in result.stdout.strip().splitlines()]
        expected = list(dict.fromkeys(map(str, order)))  # a photo named twice is read once
        assert lines == expected, (order, lines)


def test_a_broken_link_in_a_folder_is_reported_not_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    photo(folder / "a.jpg")
    (folder / "b.jpg").symlink_to(tmp_path / "gone.jpg")
    result = run(str(folder), "--no-image")
    assert result.exit_code == 2
    assert "4 cards, 1 SET" in result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert "b.jpg is a link to a file that is gone" in line and "Traceback" not in result.stderr


def test_a_symlink_loop_is_one_error_and_the_other_photos_are_read(tmp_path: Path) -> None:
    """A link to itself in a folder, and two links to each other named directly: each gets
    its one-line error, the real photo is still read (``Path.resolve`` raised on loops)."""
    folder = tmp_path / "photos"
    folder.mkdir()
    photo(folder / "a.jpg")
    (folder / "self.jpg").symlink_to("self.jpg")
    (tmp_path / "one.jpg").symlink_to("two.jpg")
    (tmp_path / "two.jpg").symlink_to("one.jpg")
    result = run(str(folder), str(tmp_path / "one.jpg"), "--no-image")
    assert result.exit_code == 2
    assert "4 cards, 1 SET" in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in result.stderr
    assert all("symbolic link that leads back to itself" in line for line in lines)


class _Terminal:
    """A text stream that says it is a terminal (what ``_progress`` looks at)."""

    def __init__(self, tty: bool) -> None:
        import io

        self.buffer, self.tty = io.StringIO(), tty

    def write(self, text: str) -> int:
        return self.buffer.write(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty

    def getvalue(self) -> str:
        return self.buffer.getvalue()


@pytest.mark.parametrize(("stdout_tty", "bar"), [(True, False), (False, True)])
def test_progress_bar_only_when_the_readings_do_not_go_to_the_terminal(
    monkeypatch: pytest.MonkeyPatch, stdout_tty: bool, bar: bool
) -> None:
    """Readings printed to the terminal under a live bar were written over it (a new user saw
    ``photos ━━ 0/8 -:--:--/path/IMG01.jpg: 12 cards``): the bar is drawn only while the
    readings go to a file or a pipe, and error lines then pass above it, whole."""
    import vision.cli_photo as cli_photo

    err, out = _Terminal(True), _Terminal(stdout_tty)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("sys.stdout", out)
    seen = []
    for item in cli_photo._progress(iter(range(3)), 3, enabled=True):
        seen.append(item)
        cli_photo._error(f"photo {item}: bad")
    assert seen == [0, 1, 2]
    assert ("photos" in err.getvalue()) == bar
    for k in range(3):
        assert f"setvision: error: photo {k}: bad\n" in err.getvalue().replace("\r\n", "\n")
    assert out.getvalue() == ""
    assert not cli_photo._BAR  # the bar's console is dropped with the bar


def test_force_never_overwrites_a_user_photo_bearing_the_copy_name(tmp_path: Path) -> None:
    """``a.sets.jpg`` that setvision did not write (no copy mark) is the user's photo: kept
    even with --force, the copy taking the next free name (``a.jpg.sets.jpg``, as when both
    photos are read: it was refused alone and renamed in a folder run); an earlier copy is
    still replaced, and a file named by --out is replaced as asked."""
    from vision.batch import is_annotated_copy

    src = photo(tmp_path / "a.jpg")
    mine = photo(tmp_path / "a.sets.jpg", NO_SET)
    before = mine.read_bytes()
    result = run(str(src), "--force")
    assert result.exit_code == 0 and mine.read_bytes() == before
    assert f"annotated copy: {tmp_path / 'a.jpg.sets.jpg'}" in result.stdout
    assert is_annotated_copy(tmp_path / "a.jpg.sets.jpg")
    again = run(str(src))  # that copy is then replaced only with --force, as any copy
    assert again.exit_code == 2 and "a.jpg.sets.jpg exists; use --force" in again.stderr
    assert mine.read_bytes() == before
    (tmp_path / "a.jpg.sets.jpg").unlink()
    mine.unlink()
    assert run(str(src)).exit_code == 0 and is_annotated_copy(mine)
    assert run(str(src), "--force").exit_code == 0 and is_annotated_copy(mine)
    named = photo(tmp_path / "named.jpg", NO_SET)
    assert run(str(src), "--out", str(named), "--force").exit_code == 0
    assert is_annotated_copy(named)


def test_photos_in_subfolders_not_read_are_announced(tmp_path: Path) -> None:
    """A folder read without --recursive whose subfolders hold photos says so (a new user's
    folder of 5 photos read as all of it, 9 more in a subfolder unmentioned)."""
    photo(tmp_path / "a.jpg")
    (tmp_path / "more").mkdir()
    photo(tmp_path / "more" / "b.jpg")
    photo(tmp_path / "more" / "c.jpg")
    (tmp_path / ".hidden").mkdir()
    photo(tmp_path / ".hidden" / "d.jpg")
    result = run(str(tmp_path), "--no-image")
    assert result.exit_code == 0
    assert "2 photos in its subfolders not read; use --recursive" in result.stderr
    deep = run(str(tmp_path), "--no-image", "--recursive")
    assert deep.exit_code == 0 and deep.stderr == ""
    assert "3 of 3 photos processed" in deep.stdout


def test_error_lines_for_stdin_and_corrupt_files(tmp_path: Path) -> None:
    """ "-" says standard input is not read; a damaged PNG does not list the supported formats
    (its format is one), a text file named .jpg does."""
    assert "not read from standard input" in run("-").stderr
    broken = tmp_path / "broken.png"
    size = b"\x00\x00\x01\x00" * 2  # 256 x 256
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + size + b"\x08\x02\x00\x00"
    broken.write_bytes(header + b"\x00" * 40)
    result = run(str(broken), "--no-image")
    assert result.exit_code == 2
    assert "truncated or corrupt" in result.stderr and "supported formats" not in result.stderr
    text = tmp_path / "notes.jpg"
    text.write_text("not a photo")
    assert "supported formats" in run(str(text), "--no-image").stderr


def test_a_fifo_or_folder_bearing_the_copy_name_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO named ``a.sets.jpg`` hung the run (reading its head for the copy mark, or
    writing into it with --force); a folder of that name was met with "use --force"."""
    src = photo(tmp_path / "a.jpg")
    os.mkfifo(tmp_path / "a.sets.jpg")
    for flags in ((), ("--force",)):
        result = run(str(src), *flags)
        assert result.exit_code == 2
        assert "exists and is not a file" in result.stderr and "--force to" not in result.stderr
    (tmp_path / "a.sets.jpg").unlink()
    (tmp_path / "a.sets.jpg").mkdir()
    assert "exists and is not a file" in run(str(src), "--force").stderr


def test_the_subfolder_warning_leaves_out_setvisions_own_copies(tmp_path: Path) -> None:
    photo(tmp_path / "a.jpg")
    assert run(str(tmp_path / "a.jpg"), "--out", str(tmp_path / "sub") + "/").exit_code == 0
    assert (tmp_path / "sub" / "a.sets.jpg").exists()
    result = run(str(tmp_path), "--no-image")
    assert result.exit_code == 0 and "subfolders" not in result.stderr


def test_json_confidence_is_rounded_down_so_a_flagged_card_stays_under_its_threshold(
    tmp_path: Path,
) -> None:
    src = photo(tmp_path / "t.jpg")
    cards = json.loads(run(str(src), "--json", "--no-image").stdout)["cards"]
    conf = cards[0]["confidence"]
    # Just above the card's confidence (it lies in [conf, conf + 1e-4) as rounded down):
    # flagged, and its confidence shown under the threshold, never at it.
    threshold = round(conf + 1e-4, 6)
    flagged = json.loads(
        run(str(src), "--json", "--no-image", "--uncertain-below", str(threshold)).stdout
    )["cards"][0]
    assert flagged["uncertain"] and flagged["confidence"] < threshold


def test_the_subfolder_count_stops_at_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.cli_photo as cli_photo

    for i in range(4):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "x.jpg").write_bytes(b"")
    (tmp_path / "top.jpg").write_bytes(b"")
    assert cli_photo._photos_in_subfolders(tmp_path) == "4 photos"
    monkeypatch.setattr(cli_photo, "SUBFOLDER_COUNT_LIMIT", 3)
    assert cli_photo._photos_in_subfolders(tmp_path) == "3 or more photos"
    assert cli_photo._photos_in_subfolders(tmp_path / "top.jpg") == ""


def test_ctrl_c_during_a_worker_pool_is_noted_and_raised_between_results() -> None:
    # Python's own handler raises KeyboardInterrupt wherever the main thread is, and inside a
    # finaliser that is only printed and lost; while a pool runs, SIGINT is only noted.
    import signal

    from vision.batch import _ctrl_c_noted

    before = signal.getsignal(signal.SIGINT)
    with _ctrl_c_noted() as interrupted:
        assert not interrupted()
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt here
        assert interrupted()
    assert signal.getsignal(signal.SIGINT) is before


def test_folders_made_for_the_copy_are_said(tmp_path: Path) -> None:
    # A mistyped --out path made folders without a word (a new user's trial).
    src = photo(tmp_path / "table.jpg")
    first = run(str(src), "--out", str(tmp_path / "new" / "deeper" / "a.jpg"))
    assert first.exit_code == 0, first.output
    assert (
        f"created the folder {tmp_path / 'new' / 'deeper'} for the annotated copy" in first.stderr
    )
    assert (tmp_path / "new" / "deeper" / "a.jpg").is_file()
    again = run(str(src), "--out", str(tmp_path / "new" / "deeper" / "b.jpg"), "--json")
    assert again.exit_code == 0 and "created the folder" not in again.stderr
    json.loads(again.stdout)  # stdout stays one JSON object
    # Workers each making the folder for their copy: said once (trial 6 saw it twice).
    many = [str(photo(tmp_path / f"t{i}.jpg")) for i in range(4)]
    jobs = run(*many, "--jobs", "2", "--out", f"{tmp_path / 'jobs'}/")
    assert jobs.exit_code == 0, jobs.output
    assert jobs.stderr.count("created the folder") == 1, jobs.stderr


def test_a_quoted_tilde_in_out_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --out "~/x.jpg" (quoted: the shell leaves the tilde) made a folder named "~" here.
    src = photo(tmp_path / "table.jpg")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert run(str(src), "--out", "~/x.jpg").exit_code == 0
    assert (home / "x.jpg").is_file() and not (tmp_path / "~").exists()


@pytest.mark.parametrize("name", ["copy.png", "copy.jpg"])
def test_copies_named_by_out_are_not_read_back_from_their_folder(tmp_path: Path, name: str) -> None:
    # A PNG copy carried no mark, and a copy named by --out was read only by its name: a folder
    # run read the copy as a photo and wrote a copy of the copy (a new user's trial).
    from vision.batch import is_annotated_copy

    src = photo(tmp_path / "table.jpg")
    assert run(str(src), "--out", str(tmp_path / name)).exit_code == 0
    assert is_annotated_copy(tmp_path / name)
    assert cv2.imread(str(tmp_path / name)) is not None  # still an image any viewer reads
    result = run(str(tmp_path), "--json", "--no-image")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["image"] for line in result.stdout.splitlines()] == [str(src)]


def test_the_table_of_cards_has_no_trailing_spaces(tmp_path: Path) -> None:
    # The last column (the note) was padded to its widest cell on every line.
    result = run(str(photo(tmp_path / "table.jpg")), "--no-image", "--uncertain-below", "1")
    assert result.exit_code == 0, result.output
    assert "uncertain" in result.stdout  # the note column is there
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]


def _card_of(side: float, x: float = 0.0) -> dict:
    """A reading's card whose quad is ``side`` px across (portrait, 1.5 times as tall)."""
    return {"corners": [[x, 0.0], [x + side, 0.0], [x + side, 1.5 * side], [x, 1.5 * side]]}


@pytest.mark.parametrize(
    ("width", "height", "sides", "words", "paper"),
    [
        (160, 90, [], "only 160 x 90 px: cards under about 18 x 28 px are not found", False),
        (1600, 900, [], None, False),  # no cards in a photo of a good size: nothing to add
        (20000, 50, [], "only 20000 x 50 px", False),  # a strip: no card fits across it
        (144, 224, [], "if this 144 x 224 px photo is one card cropped to its edges", True),  # 7
        (1200, 800, [], None, False),  # a 3:2 photo of no card, no paper round it: a bridge
        (2400, 1600, [], None, True),  # paper round it, but too large to be a card's crop
        (4500, 3000, [], None, False),  # a 3:2 camera photo of no card: nothing to add
        (2000, 80, [], None, False),
        (200, 112, [20, 21, 19], "only about 20 px across", False),
        (400, 225, [40, 41, 39], None, False),
        (4000, 3000, [300, 310, 20], None, False),  # one far card is small: the median decides
    ],
)
def test_a_photo_too_small_for_its_cards_is_said(
    width: int, height: int, sides: list[float], words: str | None, paper: bool
) -> None:
    from vision.photo_warnings import size_warning

    cards = [_card_of(side, 50 * i) for i, side in enumerate(sides)]
    warning = size_warning({"width": width, "height": height, "cards": cards, "paper_edges": paper})
    assert (warning is None) if words is None else (words in warning)


def test_a_small_photo_copy_is_drawn_larger_and_says_so(tmp_path: Path) -> None:
    frame, _ = table_frame(SET_CARDS, width=240, height=135)
    cv2.imwrite(str(tmp_path / "small.png"), frame)
    cv2.imwrite(str(tmp_path / "big.png"), cv2.imread(str(photo(tmp_path / "big.jpg"))))
    result = run(str(tmp_path / "small.png"), str(tmp_path / "big.png"))
    assert result.exit_code == 0, result.output
    copy = cv2.imread(str(tmp_path / "small.sets.jpg"))
    k = copy.shape[0] // 135
    assert k >= 2 and copy.shape[0] == 135 * k
    assert f"(drawn {k}x the photo's size: its cards are too small for labels)" in result.stdout
    assert cv2.imread(str(tmp_path / "big.sets.jpg")).shape[:2] == (540, 960)
    assert result.stdout.count("drawn ") == 1
    again = run("--json", "--force", str(tmp_path / "small.png"), str(tmp_path / "big.png"))
    lines = [json.loads(line) for line in again.stdout.splitlines()]
    assert [line["annotated_scale"] for line in lines] == [k, 1]
    assert lines[0]["width"] == 240  # the reading stays in the photo's pixels
    alone = run("--json", "--no-image", str(tmp_path / "small.png"))
    assert json.loads(alone.stdout)["annotated_scale"] is None


def test_warnings_go_into_the_json_line_too(tmp_path: Path) -> None:
    table = photo(tmp_path / "table.jpg")
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), np.full((84, 150, 3), 90, np.uint8))  # no card, and tiny
    result = run("--json", "--no-image", str(table), str(small))
    assert result.exit_code == 1, result.output  # no card in small.png
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["warnings"] == [] and len(lines[0]["cards"]) == 4
    assert "is only 150 x 84 px" in lines[1]["warnings"][0] and not lines[1]["cards"]
    assert "setvision: warning: " in result.stderr and "150 x 84 px" in result.stderr


@pytest.mark.parametrize("suffix", [".jpg", ".png"])
@pytest.mark.parametrize("source", ["a.bmp", "tablé 日本.webp", None])
def test_an_annotated_copy_names_its_photo(tmp_path: Path, suffix: str, source: str | None) -> None:
    from vision.batch import copy_source, is_annotated_copy, mark_jpeg, mark_png

    ok, encoded = cv2.imencode(suffix, np.full((8, 8, 3), 200, np.uint8))
    mark = mark_jpeg if suffix == ".jpg" else mark_png
    data = mark(encoded.tobytes(), source)
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape == (8, 8, 3)
    path = tmp_path / f"copy{suffix}"
    path.write_bytes(data)
    assert is_annotated_copy(path)
    assert copy_source(path) == source
    assert copy_source(photo(tmp_path / "plain.jpg")) is None


def test_a_later_run_does_not_take_another_photos_copy_for_its_own(tmp_path: Path) -> None:
    # New-user trial: a.bmp read, then a.png in a later run: both copies are named a.sets.jpg,
    # and the second run said "a.sets.jpg exists; use --force", offering to destroy the copy
    # of the other photo. Copies now name their photo: the second takes the next free name.
    first = tmp_path / "a.bmp"
    frame = cv2.imread(str(photo(tmp_path / "tmp.jpg")))
    cv2.imwrite(str(first), frame)
    second = tmp_path / "a.png"
    cv2.imwrite(str(second), frame)
    assert run(str(first)).exit_code == 0
    copy = tmp_path / "a.sets.jpg"
    before = copy.read_bytes()
    result = run(str(second))
    assert result.exit_code == 0, result.output
    assert f"annotated copy: {tmp_path / 'a.png.sets.jpg'}" in result.stdout
    assert copy.read_bytes() == before
    again = run(str(first))  # its own copy: refused without --force, as before
    assert again.exit_code == 2 and "a.sets.jpg exists; use --force" in again.stderr


# --- writes that fail part-way, links, folders that cannot be listed ----------------------------
class _FullDisk:
    """A file object that takes part of a write, then fails as a full disk does."""

    def __init__(self, file) -> None:  # noqa: ANN001 - the real file object
        self.file = file

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:  # noqa: ANN002
        self.file.close()

    def write(self, data: bytes) -> int:
        import errno

        self.file.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_copy_that_fails_part_way_leaves_no_broken_file_and_the_old_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk left a truncated copy (which the next run refused to overwrite) and, with
    # --force, destroyed the file it replaced.
    src = photo(tmp_path / "t.jpg")
    out = tmp_path / "out"
    out.mkdir()
    kept = out / "x.jpg"
    kept.write_bytes(b"the user's own file")
    real_fdopen = os.fdopen
    monkeypatch.setattr(vision.batch.os, "fdopen", lambda *a, **k: _FullDisk(real_fdopen(*a, **k)))
    for args in (["--out", str(kept), "--force"], ["--out", str(out / "new.jpg")], []):
        result = run(str(src), *args)
        assert result.exit_code == 2, result.output
        assert "could not write the annotated copy (No space left on device)" in result.stderr
        assert "4 cards, 1 SET" in result.stdout  # the readings are still given
    assert kept.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in out.iterdir()) == ["x.jpg"]  # no partial or hidden file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "t.jpg"]


def test_a_copy_is_written_whole_with_the_usual_mode(tmp_path: Path) -> None:
    src = photo(tmp_path / "t.jpg")
    assert run(str(src)).exit_code == 0
    copy = tmp_path / "t.sets.jpg"
    umask = os.umask(0)
    os.umask(umask)
    assert copy.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    assert cv2.imread(str(copy)) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jpg", "t.sets.jpg"]


def test_out_through_a_link_writes_its_file_and_keeps_the_link(tmp_path: Path) -> None:
    src = photo(tmp_path / "t.jpg")
    (tmp_path / "w").mkdir()
    target = tmp_path / "w" / "x.jpg"
    target.write_bytes(b"old")
    link = tmp_path / "link.jpg"
    link.symlink_to(target)
    result = run(str(src), "--out", str(link), "--force")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and cv2.imread(str(target)) is not None


def test_out_through_a_link_into_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    # The read-only check looked at the link's folder: a file in a read-only folder was
    # overwritten through a link to it.
    src = photo(tmp_path / "t.jpg")
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "x.jpg"
    target.write_bytes(b"in a read-only folder")
    link = tmp_path / "link.jpg"
    link.symlink_to(target)
    folder.chmod(0o555)
    try:
        result = run(str(src), "--out", str(link), "--force")
        assert result.exit_code == 2
        assert f"{folder} is a read-only folder" in result.stderr
        assert target.read_bytes() == b"in a read-only folder"
    finally:
        folder.chmod(0o755)


def _locked(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make ``folder`` unlistable, as a folder without read permission is (mode bits stop
    nothing for root)."""
    import errno

    for name in ("listdir", "scandir"):
        real = getattr(os, name)

        def refuse(path=".", _real=real):  # noqa: ANN001
            if Path(os.fsdecode(path)) == folder:
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
            return _real(path)

        monkeypatch.setattr(os, name, refuse)


def test_a_folder_that_cannot_be_listed_is_one_error_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A locked folder among the paths stopped the whole run before any photo was read.
    src = photo(tmp_path / "t.jpg")
    locked = tmp_path / "locked"
    locked.mkdir()
    photo(locked / "u.jpg")
    _locked(monkeypatch, locked)
    result = run(str(locked), str(src), "--no-image")
    assert result.exit_code == 2
    assert f"setvision: error: {locked}: permission denied" in result.stderr
    assert "4 cards, 1 SET" in result.stdout
    result = run(str(locked), str(src), "--no-image", "--json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0] == {"image": str(locked), "error": f"{locked}: permission denied"}
    assert len(lines[1]["cards"]) == 4


def test_a_subfolder_that_cannot_be_listed_is_said_with_recursive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = tmp_path / "top"
    (top / "locked").mkdir(parents=True)
    photo(top / "t.jpg")
    photo(top / "locked" / "u.jpg")
    _locked(monkeypatch, top / "locked")
    result = run(str(top), "-r", "--no-image")
    assert result.exit_code == 0, result.output
    assert f"1 subfolder not read (permission denied): {top / 'locked'}" in result.stderr
    assert result.stdout.count("4 cards, 1 SET") == 1


def test_an_overexposed_photo_is_read_with_a_warning(tmp_path: Path) -> None:
    # Every pixel x 1.8: striped cards read open at 91-93% in a new user's trial, unflagged.
    frame, _ = table_frame(SET_CARDS, width=960, height=540)
    bright = np.clip(frame.astype(np.float32) * 1.8, 0, 255).astype(np.uint8)
    for image, warned in ((frame, False), (bright, True)):
        path = tmp_path / f"{'bright' if warned else 'plain'}.png"
        cv2.imwrite(str(path), image)
        result = run(str(path), "--no-image", "--json")
        (line,) = [json.loads(x) for x in result.stdout.splitlines()]
        burnt = sum(card["burnt_out"] for card in line["cards"])
        said = [w for w in line["warnings"] if "overexposed" in w]
        assert bool(said) == warned and (burnt == 4) == warned, (burnt, line["warnings"])
        if warned:
            assert "the paper of 4 of 4 cards is burnt out" in said[0]


@pytest.mark.parametrize(
    ("burnt", "cards", "warned"),
    [(0, 12, False), (1, 12, False), (1, 1, False), (2, 12, False), (3, 12, True), (2, 3, True),
     (12, 12, True)],
)  # fmt: skip
def test_overexposure_is_said_from_a_quarter_of_the_cards(burnt, cards, warned) -> None:
    from vision.photo_warnings import exposure_warning

    result = {"cards": [{"burnt_out": i < burnt} for i in range(cards)]}
    assert (exposure_warning(result) is not None) == warned


def test_a_copy_with_a_name_near_the_limit_is_written(tmp_path: Path) -> None:
    # The temporary file was named after the copy plus 15 characters: over 255, refused.
    src = photo(tmp_path / ("a" * 235 + ".jpg"))  # its copy: 244 characters
    result = run(str(src))
    assert result.exit_code == 0, result.output
    assert (tmp_path / ("a" * 235 + ".sets.jpg")).is_file()


def test_a_file_replaced_with_force_keeps_its_permissions(tmp_path: Path) -> None:
    src = photo(tmp_path / "t.jpg")
    out = tmp_path / "x.jpg"
    out.write_bytes(b"old")
    out.chmod(0o640)
    assert run(str(src), "--out", str(out), "--force").exit_code == 0
    assert out.stat().st_mode & 0o777 == 0o640 and cv2.imread(str(out)) is not None


def test_an_annotated_copy_named_as_a_photo_is_read_with_a_note(tmp_path: Path) -> None:
    # It was read like any photo, its drawn outlines and labels and all, without a word.
    src = photo(tmp_path / "t.jpg")
    assert run(str(src)).exit_code == 0
    copy = tmp_path / "t.sets.jpg"
    result = run(str(copy), "--no-image")
    assert result.exit_code in (0, 1)
    assert f"note: {copy} is an annotated copy written by setvision (of t.jpg)" in result.stderr
    assert "annotated copy written by" not in run(str(src), "--no-image").stderr
