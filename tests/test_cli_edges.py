"""The command line at its edges, run as a user runs it (a subprocess of the console entry):
Ctrl-C at any moment, output to a full disk, a reader that goes away, streams and URLs named as
photos. Each must end in one line on stderr and the documented exit code, never a traceback."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vision.cli import run
from vision.cli_errors import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, EXIT_INTERRUPTED

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "samples" / "table.jpg"
#: The console entry as installed (``setvision = "vision.__main__:main"``).
ENTRY = [sys.executable, "-m", "vision"]


def _start(args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*ENTRY, *args], stderr=subprocess.PIPE, **kwargs)  # type: ignore[call-overload]


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.15, 0.25, 0.35, 0.5, 0.8])
def test_ctrl_c_at_any_moment_is_one_line(tmp_path: Path, delay: float) -> None:
    # During the imports (the first ~0.2 s) it was a KeyboardInterrupt traceback of 6-34
    # lines, between 0.22 and 0.45 s a silent exit 130. (Under ~30 ms Python itself is still
    # starting: its own "Fatal Python error" there is out of the project's reach.) Twenty
    # photos: seconds of work, so that every delay falls before the run ends.
    for i in range(20):
        shutil.copy(SAMPLE, tmp_path / f"t{i:02d}.jpg")
    proc = _start(["photo", "--no-image", str(tmp_path)], stdout=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert lines == ["setvision: error: interrupted"], err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize(
    "args",
    [["--version"], ["--help"], ["-h"], [], ["photo", "--help"], ["sets", "--help"],
     ["simulate", "--help"], ["sets", "1 red solid oval"]],
)  # fmt: skip
def test_output_to_a_full_disk_is_one_line(args: list[str]) -> None:
    # `--version > /dev/full` and every --help ended in a 45-line OSError traceback.
    with open("/dev/full", "wb") as full:
        done = subprocess.run([*ENTRY, *args], stdout=full, stderr=subprocess.PIPE, timeout=60)
    err = done.stderr.decode()
    assert done.returncode == EXIT_BAD_INPUT, err
    assert err == "setvision: error: could not write the output: no space left on device\n"


def _read_then_close(args: list[str], lines: int) -> tuple[int, str]:
    """Run setvision, read ``lines`` lines of its output, close the pipe (``| head -N``)."""
    proc = _start(args, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    for _ in range(lines):
        proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


@pytest.mark.slow
@pytest.mark.parametrize("lines", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_reader_that_goes_away_gives_141(tmp_path: Path, lines: int, jobs: str) -> None:
    # `| head -2` (and -3, -5, -10) gave exit code 1, the code for "no cards found", with
    # nothing on stderr: rich exits with 1 on a closed pipe. Three photos: the second's
    # readings come after the reader has gone, whatever the pipe's buffer held.
    for name in ("a", "b", "c"):
        shutil.copy(SAMPLE, tmp_path / f"{name}.jpg")
    code, err = _read_then_close(["photo", "--no-image", "--jobs", jobs, str(tmp_path)], lines)
    assert code == EXIT_BROKEN_PIPE and err == "", err


@pytest.mark.parametrize("args", [["--help"], ["photo", "--help"], []])
def test_help_to_a_reader_gone_gives_141(args: list[str]) -> None:
    # `setvision --help | head -1` gave 1. The pipe is closed before anything is written.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*ENTRY, *args], stdout=write, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == EXIT_BROKEN_PIPE and done.stderr == b"", done.stderr


def test_nothing_is_written_beside_a_device_or_stream(tmp_path: Path) -> None:
    # `setvision photo /dev/stdin < table.jpg` wrote /dev/stdin.sets.jpg into /dev.
    from vision.batch import plan_jobs

    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    for name in (Path("/dev/stdin"), Path("/proc/self/fd/0"), fifo):
        (job,) = plan_jobs([name], None, draw=True, force=False)
        assert job.output is None and job.refusal is not None, name
        assert "no annotated copy is written beside it" in job.refusal
    (job,) = plan_jobs([SAMPLE], None, draw=True, force=False)  # a photo's file still gets one
    assert job.output is not None and job.refusal is None
    out = tmp_path / "copy.jpg"  # with --out the copy goes where it is told
    (job,) = plan_jobs([Path("/dev/stdin")], out, draw=True, force=False)
    assert job.output == out and job.refusal is None


@pytest.mark.slow
def test_a_photo_on_standard_input_is_read_and_its_copy_refused(tmp_path: Path) -> None:
    with SAMPLE.open("rb") as stdin:
        done = subprocess.run(
            [*ENTRY, "photo", "/dev/stdin"], stdin=stdin, capture_output=True, timeout=120,
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == EXIT_BAD_INPUT
    assert b"12 cards, 4 SETs" in done.stdout  # the readings are printed all the same
    assert done.stderr.decode().count("\n") == 1 and b"--out FILE" in done.stderr
    assert not Path("/dev/stdin.sets.jpg").exists() and not list(tmp_path.iterdir())


def test_a_url_is_named_whole_and_said_to_be_one(capsys: pytest.CaptureFixture[str]) -> None:
    # It said "https:/example.com/table.jpg: no such file": a slash lost, no hint.
    assert run(["photo", "https://example.com/table.jpg"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "https://example.com/table.jpg: is a URL" in err and "download" in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize(
    "args",
    [["photo", "--no-image", "nonexistent.jpg"], ["photo", "--bogus", "x"], ["sets", "7redx"]],
)
def test_bad_input_with_stderr_full_keeps_its_exit_code(args: list[str]) -> None:
    # `2>/dev/full` made bad input exit 1, the code for "no cards found".
    with open("/dev/full", "wb") as full:
        done = subprocess.run([*ENTRY, *args], stdout=subprocess.PIPE, stderr=full, timeout=60)
    assert done.returncode == EXIT_BAD_INPUT
