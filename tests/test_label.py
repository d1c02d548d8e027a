"""The labelling tool (scripts/label.py) on synthetic photos: corner fitting and every command."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from tests._scripts import load_script
from vision.evaluation import load_annotation_file

label = load_script("label", "label_tool")
runner = CliRunner()

#: A portrait card (57 x 89 mm at about 2.6 px/mm) turned by about 12 degrees, TL, TR, BR, BL.
CARD = np.array([[200.0, 100.0], [345.0, 131.0], [297.0, 358.0], [152.0, 327.0]])
SECOND = np.array([[420.0, 120.0], [560.0, 120.0], [560.0, 340.0], [420.0, 340.0]])


def draw_table(cards: list[np.ndarray], background=(40, 70, 110)) -> np.ndarray:
    """A 640 x 480 BGR photo: a brown table with white cards, each with a red blob inside."""
    rng = np.random.default_rng(0)
    image = np.zeros((480, 640, 3), np.float32)
    image[:] = background
    image += rng.normal(0, 4, image.shape)
    for quad in cards:
        pts = np.round(quad * 16).astype(np.int32)
        cv2.fillConvexPoly(image, pts, (235, 238, 240), cv2.LINE_AA, shift=4)
        centre = quad.mean(axis=0)
        cv2.ellipse(image, tuple(int(v) for v in centre), (18, 40), 12, 0, 360, (40, 40, 200), -1)
    return np.clip(image, 0, 255).astype(np.uint8)


@pytest.fixture
def photo_dir(tmp_path: Path) -> Path:
    """A fake shared-datasets folder with one table photo, a second one and a tables.csv."""
    data = tmp_path / "data"
    folder = data / "tables" / "synth"
    folder.mkdir(parents=True)
    cv2.imwrite(str(folder / "two.png"), draw_table([CARD, SECOND]))
    cv2.imwrite(str(folder / "two_again.png"), draw_table([CARD + 3, SECOND + 3]))
    cv2.imwrite(str(folder / "empty.png"), draw_table([]))
    (data / "tables.csv").write_text(
        "path,source,width,height,cards,labels,note\n"
        "tables/synth/two.png,synth,640,480,,none,\n"
        "tables/synth/two_again.png,synth,640,480,,none,\n"
        "tables/synth/empty.png,synth,640,480,0,negative,\n"
    )
    return data


def invoke(photo_dir: Path, tmp_path: Path, *args: str):
    ann = tmp_path / "ann"
    result = runner.invoke(
        label.app, [args[0], *args[1:], "--annotations", str(ann), "--data", str(photo_dir)]
    )
    assert result.exit_code == 0, result.output
    return result


def stored(tmp_path: Path, name: str = "two.png"):
    photos = load_annotation_file(tmp_path / "ann" / "synth.json")
    return next(p for p in photos if p.path.endswith("/" + name))


def corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    return float(label.align_corners(truth, found)[1].max())


# --------------------------------------------------------------------------- fitting


@pytest.mark.parametrize("how", ["snap", "colour", "grabcut"])
def test_refiners_recover_the_card_from_rough_corners(how: str) -> None:
    image = draw_table([CARD])
    rng = np.random.default_rng(1)
    rough = CARD + rng.uniform(-6, 6, CARD.shape)
    found = label.refine_quad(image, rough, how)
    assert corner_error(found, CARD) < 1.5


@pytest.mark.parametrize("how", ["colour", "grabcut"])
def test_segmenting_refiners_start_from_an_axis_aligned_box(how: str) -> None:
    image = draw_table([CARD])
    box = np.array([[160.0, 105.0], [340.0, 105.0], [340.0, 350.0], [160.0, 350.0]])
    found = label.refine_quad(image, box, how)
    assert corner_error(found, CARD) < 2.0


def test_refine_rejects_unknown_method() -> None:
    with pytest.raises(Exception, match="--how"):
        label.refine_quad(draw_table([CARD]), CARD, "magic")


def test_simple_finder_finds_both_cards_and_not_the_symbols() -> None:
    found = label._drop_nested(label.simple_find_cards(draw_table([CARD, SECOND])))
    assert len(found) == 2
    errors = sorted(min(corner_error(f, t) for f in found) for t in (CARD, SECOND))
    assert errors[-1] < 2.0


def test_renderers_draw_something() -> None:
    image = draw_table([CARD])
    cards = [label.CardTruth(CARD), label.CardTruth(SECOND, partial=True)]
    over = label.render_overview(image, cards, max_side=400)
    assert over.shape[2] == 3 and max(over.shape[:2]) <= 400 + 40
    sheet = label.render_corners(image, cards, tile=64, per_row=8)
    assert sheet.shape == (64, 64 * 8, 3)
    crop = label.render_crop(image, (150, 100, 350, 360), size=300)
    assert max(crop.shape[:2]) <= 300 + 40 + 1


# --------------------------------------------------------------------------- commands


def test_add_set_partial_remove_and_review_cycle(photo_dir: Path, tmp_path: Path) -> None:
    rough = [str(v) for v in (CARD + 4).ravel()]
    invoke(photo_dir, tmp_path, "add-card", "synth/two", *rough, "--snap")
    entry = stored(tmp_path)
    assert len(entry.cards) == 1 and not entry.reviewed
    assert corner_error(entry.cards[0].corners, CARD) < 1.5
    assert (entry.width, entry.height) == (640, 480)

    # Corners may be typed in any order; --refine re-fits them.
    box = ["420", "340", "560", "120", "420", "120", "560", "340"]
    invoke(photo_dir, tmp_path, "add-card", "two.png", *box, "--refine")
    invoke(photo_dir, tmp_path, "mark-partial", "two.png", "1")
    entry = stored(tmp_path)
    assert [c.partial for c in entry.cards] == [False, True]
    assert corner_error(entry.cards[1].corners, SECOND) < 1.5

    moved = [str(v) for v in (SECOND + [30, 0]).ravel()]
    invoke(photo_dir, tmp_path, "set-card", "two.png", "1", *moved)
    entry = stored(tmp_path)
    assert corner_error(entry.cards[1].corners, SECOND + [30, 0]) < 1e-6
    assert entry.cards[1].partial  # set-card keeps the flag

    invoke(photo_dir, tmp_path, "refine", "two.png", "1", "--how", "snap")
    invoke(photo_dir, tmp_path, "mark-partial", "two.png", "1", "--unset")
    invoke(photo_dir, tmp_path, "remove-card", "two.png", "1")
    invoke(photo_dir, tmp_path, "mark-reviewed", "two.png", "--note", "checked")
    entry = stored(tmp_path)
    assert len(entry.cards) == 1 and entry.reviewed and entry.note == "checked"

    out = tmp_path / "sheets"
    result = invoke(photo_dir, tmp_path, "review", "two.png", "--out", str(out))
    written = sorted(p.name for p in out.iterdir())
    assert written == [
        "tables__synth__two.corners.png",
        "tables__synth__two.overview.png",
        "tables__synth__two.sheet.png",
    ]
    assert "reviewed=True" in result.output
    invoke(photo_dir, tmp_path, "crop", "two.png", "100", "50", "300", "250", "--out", str(out))
    assert any("crop_100_50_300_250" in p.name for p in out.iterdir())
    result = invoke(
        photo_dir, tmp_path, "crop", "two.png", "0", "0", "5000", "5000", "--out", str(out)
    )
    assert "runs past the photo's 640 x 480 px" in result.output


def test_edits_clear_the_reviewed_flag(photo_dir: Path, tmp_path: Path) -> None:
    invoke(photo_dir, tmp_path, "add-card", "two.png", *[str(v) for v in CARD.ravel()])
    invoke(photo_dir, tmp_path, "mark-reviewed", "two.png")
    invoke(photo_dir, tmp_path, "snap", "two.png")
    assert not stored(tmp_path).reviewed


def test_seed_simple_then_copy_from_and_status(photo_dir: Path, tmp_path: Path) -> None:
    result = invoke(photo_dir, tmp_path, "seed", "two.png", "--method", "simple")
    assert "2 cards" in result.output
    assert f"created the folder {tmp_path / 'ann'} for the annotations" in result.output
    entry = stored(tmp_path)
    for truth in (CARD, SECOND):
        assert min(corner_error(c.corners, truth) for c in entry.cards) < 2.0

    assert (
        "created the folder"
        not in invoke(photo_dir, tmp_path, "copy-from", "two_again", "two.png").output
    )
    again = stored(tmp_path, "two_again.png")
    for truth in (CARD + 3, SECOND + 3):
        assert min(corner_error(c.corners, truth) for c in again.cards) < 2.0

    # A reviewed photo is not re-seeded without --force.
    invoke(photo_dir, tmp_path, "mark-reviewed", "two.png", "two_again")
    result = invoke(photo_dir, tmp_path, "seed", "--source", "synth", "--method", "simple")
    assert "skip tables/synth/two.png (reviewed; --force replaces" in result.output
    assert "tables/synth/empty.png: 0 cards" in result.output
    result = invoke(photo_dir, tmp_path, "status", "-v")
    assert (
        "synth        photos   3  reviewed   2  cards    4 (in reviewed photos 4, partial 0)"
        in result.output
    )
    invoke(photo_dir, tmp_path, "add-card", "empty.png", *[str(v) for v in CARD.ravel()])
    result = invoke(photo_dir, tmp_path, "status")  # trial 6: unreviewed cards counted as 0
    assert "photos   3  reviewed   2  cards    5 (in reviewed photos 4, partial 0)" in result.output


def test_add_rects_and_negative_photos(photo_dir: Path, tmp_path: Path) -> None:
    invoke(photo_dir, tmp_path, "add-rects", "two.png", "160", "105", "340", "350")
    entry = stored(tmp_path)
    assert corner_error(entry.cards[0].corners, CARD) < 2.0
    invoke(photo_dir, tmp_path, "mark-reviewed", "empty.png")
    empty = stored(tmp_path, "empty.png")
    assert empty.reviewed and empty.cards == ()
    data = json.loads((tmp_path / "ann" / "synth.json").read_text())
    assert [p["path"] for p in data["photos"]] == ["tables/synth/empty.png", "tables/synth/two.png"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["set-card", "two.png", "0", "1", "2", "3"], "no annotation yet"),
        (["add-card", "two.png", "1", "2", "3", "4", "5", "6", "7"], "expected 8 numbers"),
        (["add-card", "two.png", "0", "0", "10", "0", "5", "2", "5", "10"], "convex"),
        (
            ["add-card", "two.png", *map(str, [5000, 5000, 6000, 5000, 6000, 6000, 5000, 6000])],
            "wholly outside the photo (640 x 480 px)",
        ),
        (["review", "nothing-like-this"], "no photo matches"),
        (["review", "tw"], "ambiguous"),
    ],
)
def test_bad_input_is_reported(photo_dir: Path, tmp_path: Path, args, message: str) -> None:
    ann = tmp_path / "ann"
    result = runner.invoke(label.app, [*args, "--annotations", str(ann), "--data", str(photo_dir)])
    assert result.exit_code != 0
    assert message in result.output


def test_index_out_of_range(photo_dir: Path, tmp_path: Path) -> None:
    invoke(photo_dir, tmp_path, "add-card", "two.png", *[str(v) for v in CARD.ravel()])
    ann = tmp_path / "ann"
    result = runner.invoke(
        label.app,
        ["remove-card", "two.png", "5", "--annotations", str(ann), "--data", str(photo_dir)],
    )
    assert result.exit_code != 0 and "out of range" in result.output


def test_set_attrs_with_unreadable_text_is_a_usage_error(photo_dir: Path, tmp_path: Path) -> None:
    # A typo in the card text was a ValueError traceback (exit code 1); the file is untouched.
    invoke(photo_dir, tmp_path, "add-card", "two.png", *[str(v) for v in CARD.ravel()])
    before = (tmp_path / "ann" / "synth.json").read_bytes()
    ann = tmp_path / "ann"
    result = runner.invoke(
        label.app,
        ["set-attrs", "two.png", "0", "2 pink solid ovals", "--annotations", str(ann),
         "--data", str(photo_dir)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "unknown word 'pink'" in " ".join(result.output.replace("│", " ").split())
    assert not isinstance(result.exception, ValueError)
    assert (tmp_path / "ann" / "synth.json").read_bytes() == before


def test_a_photo_outside_the_datasets_folder_is_one_clear_error(
    photo_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.png"
    cv2.imwrite(str(outside), draw_table([CARD]))
    args = ["seed", str(outside), "--method", "simple"]
    result = runner.invoke(
        label.app, [*args, "--annotations", str(tmp_path / "ann"), "--data", str(photo_dir)]
    )
    assert result.exit_code == 2
    assert "is not inside the datasets folder" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_errors_are_one_line_on_stderr(photo_dir: Path, tmp_path: Path) -> None:
    # Run as a user does (python scripts/label.py): typer would draw a multi-line box.
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "label.py"
    where = ["--annotations", str(tmp_path / "ann"), "--data", str(photo_dir)]
    for args, message in [
        (["show", "two.png"], "No such command 'show'"),
        (["set-card", "nothing", "0", *["1"] * 8, *where], "no photo matches 'nothing'"),
    ]:
        done = subprocess.run(
            [sys.executable, str(script), *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("label.py: error: "), done.stderr
        assert message in lines[0]


def test_an_unreadable_photo_is_a_one_line_error_in_every_command(
    photo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An empty and a truncated photo: review, crop, add-card (with --snap), add-rects and
    # copy-from raised a SetVisionError traceback (trial 6); seed already said it in one line.
    folder = photo_dir / "tables" / "synth"
    (folder / "zero.jpg").write_bytes(b"")
    whole = cv2.imencode(".jpg", draw_table([CARD]))[1].tobytes()
    (folder / "cut.jpg").write_bytes(whole[: len(whole) // 3])
    where = ["--annotations", str(tmp_path / "ann"), "--data", str(photo_dir)]
    card = [str(v) for v in CARD.ravel()]
    invoke(photo_dir, tmp_path, "add-card", "two.png", *card)  # copy-from's source
    for name in ("tables/synth/zero.jpg", "tables/synth/cut.jpg"):
        for args in (
            ["review", name, "--out", str(tmp_path / "sheets")],
            ["crop", name, "0", "0", "50", "50", "--out", str(tmp_path / "sheets")],
            ["add-card", name, *card, "--snap"],
            ["add-rects", name, "10", "10", "60", "90"],
            ["copy-from", name, "two.png"],
        ):
            line = _one_line_error(capsys, [*args, *where])
            assert name in line and "no photo matches" not in line, line


def _one_line_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    from vision.cli import run_app

    code = run_app(label.app, "label.py", args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("label.py: error: "), err
    return err[0]


def test_bad_arguments_are_one_line_errors_not_tracebacks(
    photo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ann = tmp_path / "ann"
    where = ["--annotations", str(ann), "--data", str(photo_dir)]
    invoke(photo_dir, tmp_path, "add-card", "two.png", *[str(v) for v in CARD.ravel()])
    (tmp_path / "afile").write_text("x")
    cases = [
        (["crop", "two.png", "100", "100", "100", "100", *where], "X0 < X1"),  # was ZeroDivision
        (["crop", "two.png", "0", "0", "50", "nan", *where], "X0 < X1"),
        (["crop", "two.png", "0", "0", "50", "50", "--size", "0", *where], "--size"),
        (["crop", "two.png", "700", "0", "900", "50", *where], "outside the photo (640 x 480"),
        (["review", "two.png", "--out", str(tmp_path / "afile" / "x"), *where], "is a file"),
        (["review", "two.png", "--max-side", "-5", *where], "--max-side"),
        (["status", "--annotations", str(tmp_path / "typo")], "no folder"),  # not "0 photos"
        (["seed", "--source", "nosuch", *where], "no table photos of 'nosuch'"),
        (["seed", "two.png", "--annotations", str(ann), "--data", str(tmp_path / "no")], "--data"),
        (["set-card", "two.png", "0", *["1"] * 7, "inf", *where], "finite"),
    ]
    for args, expected in cases:
        assert expected in _one_line_error(capsys, args), args
    (ann / "synth.json").write_text('{"photos": [')  # a damaged annotation file
    message = _one_line_error(capsys, ["status", "--annotations", str(ann)])
    assert "synth.json is not a valid annotation file" in message


def test_negative_corners_are_numbers_and_a_replaced_note_is_shown(
    photo_dir: Path, tmp_path: Path
) -> None:
    # A partial card's corners lie outside the photo: "-40" was taken for an unknown option.
    invoke(photo_dir, tmp_path, "add-card", "two.png", *[str(v) for v in CARD.ravel()])
    cut = CARD - [250.0, 0.0]  # two corners left of the photo
    invoke(photo_dir, tmp_path, "set-card", "two.png", "0", *[str(v) for v in cut.ravel()])
    assert stored(tmp_path).cards[0].corners.min() < 0
    invoke(photo_dir, tmp_path, "mark-reviewed", "two.png", "--note", "first")
    result = invoke(photo_dir, tmp_path, "mark-reviewed", "two.png", "--note", "second")
    assert "note replaced; it was: first" in result.output
    assert stored(tmp_path).note == "second"


def test_seed_again_keeps_the_edits_of_a_photo_not_yet_reviewed(
    photo_dir: Path, tmp_path: Path
) -> None:
    # Seeding a folder again wiped a removed card, a partial flag and attributes of photos not
    # yet marked reviewed, without a word (a new user's trial).
    invoke(photo_dir, tmp_path, "seed", "two.png", "--method", "simple")
    invoke(photo_dir, tmp_path, "remove-card", "two.png", "1")
    invoke(photo_dir, tmp_path, "set-attrs", "two.png", "0", "2 red solid ovals")
    before = (tmp_path / "ann" / "synth.json").read_bytes()
    result = invoke(photo_dir, tmp_path, "seed", "two.png", "--method", "simple")
    assert "skip tables/synth/two.png (annotated, not reviewed; --force replaces" in result.output
    assert (tmp_path / "ann" / "synth.json").read_bytes() == before
    invoke(photo_dir, tmp_path, "seed", "two.png", "--method", "simple", "--force")
    assert len(stored(tmp_path).cards) == 2


def test_seed_goes_on_past_a_photo_it_cannot_read(photo_dir: Path, tmp_path: Path) -> None:
    # A folder, an empty file or a truncated JPEG among the photos was a 30-line traceback that
    # stopped the photos after it.
    folder = photo_dir / "tables" / "synth"
    (folder / "broken.jpg").write_bytes(b"")
    (folder / "cut.jpg").write_bytes(cv2.imencode(".jpg", draw_table([CARD]))[1].tobytes()[:900])
    ann = tmp_path / "ann"
    result = runner.invoke(
        label.app,
        ["seed", "tables/synth/broken.jpg", "tables/synth/cut.jpg", "two.png", "--method", "simple",
         "--annotations", str(ann), "--data", str(photo_dir)],
    )  # fmt: skip
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("label.py: error: ")]
    assert len(errors) == 2 and "is empty" in errors[0] and "truncated" in errors[1]
    assert "tables/synth/two.png: 2 cards" in result.output


def test_a_photo_named_from_the_current_folder(
    photo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "review data/tables/synth/two.png" run where that file is said "no photo matches".
    monkeypatch.chdir(tmp_path)
    result = invoke(photo_dir, tmp_path, "seed", "data/tables/synth/two.png", "--method", "simple")
    assert result.exit_code == 0, result.output
    assert "tables/synth/two.png: 2 cards" in result.output


def _put_many(folder: str, first: int, n: int) -> None:
    """Store ``n`` photos of source "synth" from a process of its own (for the test below)."""
    from vision.evaluation import PhotoTruth

    store = label.Store(Path(folder))
    for i in range(first, first + n):
        store.put(PhotoTruth(f"tables/synth/p{i:03d}.png", 640, 480, source="synth"))


def test_writers_in_parallel_keep_every_entry_and_leave_no_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each put re-reads the file under a lock on the folder: two processes writing one source
    # file lose nothing. The lock leaves no file behind (a lock file per folder and source in
    # the temp folder did).
    import multiprocessing
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # what tempfile.gettempdir() gives
    ann = tmp_path / "ann"
    ann.mkdir()
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_put_many, args=(str(ann), k * 25, 25)) for k in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    photos = load_annotation_file(ann / "synth.json")
    assert sorted(p.path for p in photos) == [f"tables/synth/p{i:03d}.png" for i in range(50)]
    assert list(temp.iterdir()) == []
    assert sorted(f.name for f in ann.iterdir()) == ["synth.json"]
