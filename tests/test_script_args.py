"""Argument handling of the scripts in ``scripts/``: bad values are usage errors (exit code 2,
one line from argparse), not tracebacks after minutes of set-up."""

from __future__ import annotations

import pytest

from tests._scripts import load_script


@pytest.fixture(scope="module")
def benchmark():
    return load_script("benchmark")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeats", "0"], "--repeats: must be at least 1"),
        (["--real", "-1"], "--real: must be at least 0"),
        (["--jobs", "0"], "--jobs: must be at least 1"),
        (["--jobs", "two"], "not a whole number"),
    ],
)
def test_benchmark_refuses_bad_counts(benchmark, capsys, args, message) -> None:
    with pytest.raises(SystemExit) as exit_:
        benchmark.main(args)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_benchmark_missing_model_is_one_line(benchmark, capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        benchmark.main(["--model", str(tmp_path / "none.onnx")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--model: model file" in err and "does not exist" in err
    assert "Traceback" not in err
