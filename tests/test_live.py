"""``setvision live`` end to end on short rendered game videos (vision.render_video): the
tracker through a drawn hand, the command on a folder of frames and on a video file, its
outputs, and its edges (a missing camera, an unreadable video, Ctrl-C), plus the web view."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.cards import full_deck
from vision.cli import run
from vision.cli_errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED
from vision.live import SourceFrame, follow
from vision.live_view import Controls, WebView
from vision.render_video import GameVideo, Step
from vision.rules import find_sets

ENTRY = [sys.executable, "-m", "vision"]
SIZE = (640, 360)
FPS = 10.0
#: The keys of each --json line, exactly as the issue gives them.
LINE_KEYS = {"frame", "time_s", "cards", "sets", "hand"}
CARD_KEYS = {"id", "count", "colour", "shape", "fill", "label", "confidence", "corners"}


def _game() -> GameVideo:
    """9 cards dealt, then a SET among them taken by a hand from the left."""
    deck = list(full_deck())
    rng = np.random.default_rng(7)
    dealt = [deck[i] for i in rng.permutation(81)[:9]]
    taken = tuple(dealt[i] for i in find_sets(dealt)[0])
    script = [Step("deal", tuple(dealt), "bottom"), Step("take", taken, "left")]
    return GameVideo(script, np.random.default_rng(1), size=SIZE, fps=FPS, tilt_deg=15,
                     settle_s=1.2, background="wood")  # fmt: skip


@pytest.fixture(scope="module")
def game() -> tuple[GameVideo, list]:
    video = _game()
    return video, list(video.frames())


@pytest.fixture(scope="module")
def frames_dir(game, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("frames")
    for f in game[1]:
        cv2.imwrite(str(folder / f"f{f.index:04d}.png"), f.image)
    return folder


@pytest.fixture(scope="module")
def video_file(game, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("video") / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, SIZE)
    for f in game[1]:
        writer.write(f.image)
    writer.release()
    return path


@pytest.mark.slow
def test_tracking_keeps_ids_through_a_drawn_hand(game) -> None:  # type: ignore[no-untyped-def]
    from vision.classify import CardClassifier

    video, frames = game
    take = video.steps[1]
    shown = list(follow((SourceFrame(f.index, f.time_s, f.image) for f in frames),
                        CardClassifier()))  # fmt: skip
    before = [s for s, f in zip(shown, frames) if take.start_s - 0.3 <= f.time_s < take.start_s]
    after = shown[-1]
    assert before and all(len(s.table.cards) == 9 for s in before)
    truth = {c.card for c in frames[-1].cards}  # the 6 cards left after the take
    ids_before = {c.id: c.card for c in before[-1].table.cards}
    stayed = {i: card for i, card in ids_before.items() if card in truth}
    assert len(stayed) == 6
    assert {c.id: c.card for c in after.table.cards} == stayed  # same ids, same readings
    for s, f in zip(shown, frames):  # no SET drawn with a card that is not on the table
        on_table = {c.card for c in f.cards}
        cards = {c.id: c.card for c in s.table.cards}
        assert all(cards[i] in on_table for triple in s.table.sets for i in triple)


@pytest.mark.slow
def test_a_folder_of_frames_runs_through_the_cli_with_json(
    frames_dir: Path, capsys: pytest.CaptureFixture[str], game
) -> None:  # type: ignore[no-untyped-def]
    assert run(["live", str(frames_dir), "--no-window", "--json", "-", "--fps", "10"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["frame"] for line in lines] == list(range(len(game[1])))
    assert all(set(line) == LINE_KEYS for line in lines)
    last = lines[-1]
    assert len(last["cards"]) == 6 and last["hand"] is False
    assert all(set(c) == CARD_KEYS and len(c["corners"]) == 4 for c in last["cards"])
    ids = {c["id"] for c in last["cards"]}
    assert all(set(s) <= ids for s in last["sets"])
    assert lines[1]["time_s"] == pytest.approx(0.1)


@pytest.mark.slow
def test_a_video_runs_through_the_cli_to_an_annotated_video(
    video_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], game
) -> None:  # type: ignore[no-untyped-def]
    out, js = tmp_path / "out.mp4", tmp_path / "frames.jsonl"
    assert run(["live", str(video_file), "--no-window", "--out", str(out), "--json", str(js)]) == 0
    cap = cv2.VideoCapture(str(out))
    assert (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))) == SIZE
    assert cap.get(cv2.CAP_PROP_FPS) == pytest.approx(FPS)
    count = 0
    while cap.read()[0]:
        count += 1
    assert count == len(game[1])
    assert len(js.read_text().splitlines()) == len(game[1])
    err = capsys.readouterr().err
    assert f"{len(game[1])} frames" in err and "annotated video" in err
    assert not list(tmp_path.glob(".*partial*"))  # the hidden file was moved into place
    # A second run does not overwrite what the first wrote.
    before = out.stat().st_mtime_ns, js.read_bytes()
    code = run(["live", str(video_file), "--no-window", "--out", str(out)])
    assert code == EXIT_BAD_INPUT
    assert "exists" in capsys.readouterr().err
    assert (out.stat().st_mtime_ns, js.read_bytes()) == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["live", "7", "--no-window"], "camera 7: could not be opened"),
        (["live", "{text}", "--no-window"], "not a video OpenCV can read"),
        (["live", "{missing}", "--no-window"], "no such file, folder or camera"),
        (["live", "{empty}", "--no-window"], "no frames"),
        (["live", "{text}", "--no-window", "--out", "{tmp}/a.gif"], "cannot write a video"),
        (["live", "{text}", "--view", "tv"], "expected one of"),
    ],
)
def test_bad_sources_and_outputs_are_one_line(
    args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.mp4").write_text("not a video")
    (tmp_path / "empty").mkdir()
    fill = {"text": tmp_path / "notes.mp4", "missing": tmp_path / "gone.mp4",
            "empty": tmp_path / "empty", "tmp": tmp_path}  # fmt: skip
    code = run([a.format(**fill) for a in args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_BAD_INPUT
    assert len(err) == 1 and words in err[0], err


def _stopped_mid_run(frames_dir: Path, tmp_path: Path, sig: int) -> tuple[int, bytes, Path]:
    """Run live on the frames with --out and --json, send ``sig`` once lines are coming, and
    return the exit code, stderr and the video's path."""
    out, js = tmp_path / "cut.mp4", tmp_path / "cut.jsonl"
    proc = subprocess.Popen(
        [*ENTRY, "live", str(frames_dir), "--no-window", "--fps", "10", "--out", str(out),
         "--json", str(js)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not js.exists() or len(js.read_bytes()) < 200):
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, out


def _plays(video: Path) -> bool:
    ok, image = cv2.VideoCapture(str(video)).read()
    return bool(ok) and (image.shape[1], image.shape[0]) == SIZE


@pytest.mark.slow
def test_ctrl_c_writes_a_playable_video(frames_dir: Path, tmp_path: Path) -> None:
    code, err, out = _stopped_mid_run(frames_dir, tmp_path, signal.SIGINT)
    assert code == EXIT_INTERRUPTED, err
    assert err.decode().strip().splitlines() == ["setvision: error: interrupted"]
    assert _plays(out)


def test_the_web_view_serves_the_page_frames_and_controls() -> None:
    controls = Controls()
    view = WebView(controls, port=0)
    try:
        image = np.full((120, 160, 3), 200, np.uint8)
        view.show(image, {"frame": 3, "cards": [], "sets": [], "hand": False})
        page = urllib.request.urlopen(view.url, timeout=5).read().decode()
        assert "setvision live" in page and "/stream.mjpg" in page
        jpeg = urllib.request.urlopen(view.url + "frame.jpg", timeout=5).read()
        assert cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR).shape == (120, 160, 3)
        state = json.loads(urllib.request.urlopen(view.url + "state.json", timeout=5).read())
        assert state["frame"] == 3
        with urllib.request.urlopen(view.url + "stream.mjpg", timeout=5) as stream:
            assert stream.headers["Content-Type"].startswith("multipart/x-mixed-replace")
            assert stream.read(9) == b"--frame\r\n"
        for what, field in (("pause", "paused"), ("save", "save"), ("quit", "quit")):
            req = urllib.request.Request(view.url + f"control/{what}", method="POST")
            assert json.loads(urllib.request.urlopen(req, timeout=5).read())[field] is True
        assert controls.paused and controls.save and controls.quit
    finally:
        view.close()


@pytest.mark.slow
def test_sigterm_writes_a_playable_video_too(frames_dir: Path, tmp_path: Path) -> None:
    # `timeout 60 setvision live 0 --out x.mp4` is how one records a minute: SIGTERM lost the
    # whole video (a new user's trial).
    code, err, out = _stopped_mid_run(frames_dir, tmp_path, signal.SIGTERM)
    assert code == 143, err
    assert _plays(out)
    assert not list(tmp_path.glob(".*partial*"))


@pytest.mark.parametrize(
    ("args", "words"),
    [(["--out", "{tmp}/a.mp4", "--json", "{tmp}/a.mp4"], "both name"),
     (["--json", "{src}"], "that is the input"),
     (["--out", "{tmp}"], "is a folder")],
)  # fmt: skip
def test_outputs_that_collide_are_refused_before_anything_runs(
    args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "game.mp4"
    src.write_bytes(b"not read: refused before")
    fill = {"tmp": tmp_path, "src": src}
    code = run(["live", str(src), "--no-window", "--force", *[a.format(**fill) for a in args]])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_BAD_INPUT and len(err) == 1 and words in err[0], err
    assert src.read_bytes() == b"not read: refused before"


def test_a_port_in_use_leaves_no_output_behind(
    video_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = WebView(Controls(), port=0)
    try:
        port = busy.url.rsplit(":", 1)[1].strip("/")
        out, js = tmp_path / "v.mp4", tmp_path / "v.jsonl"
        code = run(["live", str(video_file), "--view", "web", "--port", port, "--out", str(out),
                    "--json", str(js)])  # fmt: skip
    finally:
        busy.close()
    assert code == EXIT_BAD_INPUT and "give another --port" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
