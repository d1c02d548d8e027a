"""The ``setvision`` console entry (:func:`vision.cli.run`): usage errors are one line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from vision.cli import run

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "samples" / "table.jpg"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["photo"], "Missing argument"),
        (["photo", "x.jpg", "--jobs", "0"], "--jobs"),
        (["simulate", "--games", "0"], "--games"),
        (["simulate", "--games", "99999999999"], "2000000"),  # ran for ever (wording: click's)
        (["nope"], "No such command 'nope'"),
        (["photo", "x.jpg", "--bogus"], "--bogus"),
        (["photo", "x.jpg", "--uncertain-below", "90"], "for 90% write 0.9 or 90%"),
        (["photo", "x.jpg", "--uncertain-below", "nan"], "'nan' is not a probability"),
        (["photo", "x.jpg", "--uncertain-below", "0.9x"], "'0.9x' is not a number"),
    ],
)
def test_usage_errors_are_one_line(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("setvision: error: ") and words in captured.err
    assert captured.err.count("\n") == 1 and "--help" in captured.err


def test_a_photo_named_like_an_option_gets_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-dash.jpg").write_bytes(b"")
    assert run(["photo", "-dash.jpg"]) == 2
    err = capsys.readouterr().err
    # click's wording: "No such option: -d" (8.1), "No such option '-d'" (later)
    assert err.startswith("setvision: error: No such option") and "-d" in err.split("(")[0]
    assert "put -- before it: setvision photo -- -dash.jpg)" in err and err.count("\n") == 1
    assert run(["photo", "-zz.jpg"]) == 2  # no such file: the usual hint
    assert "(see 'setvision photo --help')" in capsys.readouterr().err
    # A card text: no card starts with "-", so what is wrong with it, not "put -- before it"
    # (which led to the same error).
    assert run(["sets", "-1 red solid oval"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "setvision: error: cannot read '-1 red solid oval': a count has no sign; expected a count"
        " (1-3), a colour (red/green/purple), a fill (solid/striped/open) and a shape"
        ' (oval/diamond/squiggle), e.g. "2 red striped diamonds"\n'
    )
    assert run(["sets", "--", "-1 red solid oval"]) == 2
    assert capsys.readouterr().err == err


def test_commands_run_through_the_entry(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["sets", "1 red solid oval", "2 red solid ovals", "3 red solid ovals"]) == 0
    assert "1 SET:" in capsys.readouterr().out
    assert run(["sets", "7 red solid ovals"]) == 2  # a command's own error keeps its code
    assert capsys.readouterr().err.startswith("setvision: error: ")
    assert run(["--version"]) == 0
    assert run(["sets", "--help"]) == 0
    capsys.readouterr()
    for args in (["-h"], ["photo", "-h"]):  # -h as well as --help
        assert run(args) == 0
        assert "Usage: setvision" in capsys.readouterr().out


def test_console_script_is_the_entry() -> None:
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["setvision"] == "vision.__main__:main"


def test_abort_and_exit_through_the_entry(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import typer

    import vision.cli

    def aborts() -> None:
        raise typer.Abort()

    def exits() -> None:
        raise SystemExit(1)  # e.g. rich on a broken pipe

    for command, code in ((aborts, 1), (exits, None)):
        small = typer.Typer()
        small.command()(command)
        monkeypatch.setattr(vision.cli, "app", small)
        if code is None:
            with pytest.raises(SystemExit):
                run([])
        else:
            assert run([]) == code
            assert capsys.readouterr().err == "setvision: error: aborted\n"


def test_a_closed_pipe_ends_quietly() -> None:
    # `setvision sets ... | head -1` printed "setvision: error: [Errno 32] Broken pipe" (exit 2)
    # while `setvision photo ... | head -1` ended silently with 1 (rich's own handling), the
    # code that says "no cards found": now 141, as a shell reports a program SIGPIPE ended.
    import itertools
    import subprocess
    import sys

    cards = [
        f"{n} {c} {f} {s}"
        for n, c, s, f in itertools.product(
            "123", ("red", "green", "purple"), ("oval", "diamond", "squiggle"),
            ("solid", "striped", "open"),
        )
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "vision.cli", "sets", *cards],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after one line, like `head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert err == ""


def test_python_dash_m_runs_the_cli() -> None:
    # `python -m vision.cli` ran this module as __main__ and cli_photo's `from vision.cli import`
    # then loaded it a second time, half-initialised: an ImportError traceback.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "vision.cli", "sets", "1 red solid oval"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "1 red solid oval" in done.stdout and done.stderr == ""


def test_an_os_error_names_its_file_in_plain_words(capsys: pytest.CaptureFixture[str]) -> None:
    # A photo in a folder the user cannot enter gave "[Errno 13] Permission denied: 'a/b.jpg'".
    import errno

    import typer

    from vision.cli_errors import user_errors

    @user_errors
    def denied() -> None:
        raise PermissionError(errno.EACCES, "Permission denied", "a/b.jpg")

    @user_errors
    def ours() -> None:
        raise FileNotFoundError("a/b.jpg: no such file or folder")  # the project's own words

    @user_errors
    def full() -> None:  # `> /dev/full` said "[Errno 28] No space left on device"
        raise OSError(errno.ENOSPC, "No space left on device")

    for func, line in (
        (denied, "a/b.jpg: permission denied"),
        (ours, "a/b.jpg: no such file"),
        (full, "could not write the output: no space left on device"),
    ):
        with pytest.raises(typer.Exit) as exit_:
            func()
        assert exit_.value.exit_code == 2
        assert capsys.readouterr().err.startswith(f"setvision: error: {line}")


@pytest.mark.parametrize(
    ("closed", "card", "code", "err"),
    [
        (1, "1 red solid oval", 2,
         "setvision: error: standard output is closed; redirect it to a file or /dev/null\n"),
        (2, "7 red solid ovals", 2, None),  # stderr closed: an error keeps its exit code
        (2, "PHOTO", 0, None),  # and a photo is read (its decoder's messages went to stderr)
    ],
)  # fmt: skip
def test_a_closed_standard_stream_is_one_line_or_ignored(
    closed: int, card: str, code: int, err: str | None
) -> None:
    # Started with stdout closed (`>&-`), `setvision photo` died in a traceback and `sets` lost
    # its output with exit code 0; with stderr closed, anything said there raised (exit 1).
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "vision.cli", "sets", card]
        if card != "PHOTO"
        else [sys.executable, "-m", "vision.cli", "photo", "--no-image", "--json", str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(closed),  # noqa: PLW1509 - a test, one thread
    )
    assert done.returncode == code
    if err is not None:
        assert done.stderr == err
    elif code == 0:
        assert '"cards"' in done.stdout


def test_help_lists_the_main_job_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--help"]) == 0
    rows = [line.strip("│ ").split() for line in capsys.readouterr().out.splitlines()]
    listed = [row[0] for row in rows if row and row[0] in ("photo", "sets", "simulate")]
    assert listed == ["photo", "sets", "simulate"]


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.9", 0.9), ("90%", 0.9), (" 0.5 ", 0.5), ("0", 0.0), ("100%", 1.0), ("1", 1.0),
     ("12.5%", 0.125)],
)  # fmt: skip
def test_uncertain_below_takes_a_probability_or_a_percentage(text: str, value: float) -> None:
    from vision.cli_photo import probability_option

    assert probability_option(text) == pytest.approx(value)


@pytest.mark.parametrize("command", [[], ["photo"], ["sets"], ["simulate"]])
def test_help_shows_no_value_for_flags(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # typer 0.29 writes "<bool>" beside on/off options, as if they took a value, and
    # "<list[str]>" beside PHOTO and CARD
    assert run([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "<bool>" not in out and "<list[str]>" not in out
    rows = {line.strip("│ ").split()[0]: line for line in out.splitlines() if "--" in line}
    assert "--help" in rows
    if command == ["photo"]:
        assert rows["--out"].split()[3] == "PATH" and rows["--force"].split()[3] == "Overwrite"


@pytest.mark.parametrize(
    ("args", "hinted"),
    [
        (["1", "red", "solid", "oval", "2", "green", "striped", "diamonds"], True),  # unquoted
        (["1 red solid", "2 green striped diamonds"], False),  # quoted, one card short a shape
        (["purple"], False),  # a single word is one card, not a split one
        (["2-red-diamond-empty", "1-green-oval-solid", "3-purple-squigle-open"], False),  # typo
    ],
)
def test_cards_given_unquoted_get_a_hint_to_quote_them(
    args: list[str], hinted: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["sets", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("setvision: error: cannot read ") and err.count("\n") == 1
    assert ("quote each card" in err) is hinted
