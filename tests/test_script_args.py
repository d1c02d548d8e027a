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


@pytest.fixture(scope="module")
def evaluate():
    return load_script("evaluate")


@pytest.fixture(scope="module")
def eval_detection():
    return load_script("eval_detection")


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_evaluate_match_keeps_the_blame_on_the_misread_card(evaluate, order) -> None:
    # Labels are a multiset per photo. "2 red striped ovals" (a misread of the squiggle) beside
    # a right "1 red striped oval" ties on agreeing attributes (3 + 3 = 2 + 4); the pairing
    # that keeps the right card right must win, whatever the order of the readings.
    from vision.cards import parse_card

    squiggle, oval = parse_card("1 red striped squiggle"), parse_card("1 red striped oval")
    readings = [parse_card("2 red striped ovals"), oval]
    pred = [readings[i] for i in order]
    correct, pairs = evaluate.match(pred, [squiggle, oval])
    assert {(pred[p], t) for p, t in pairs} == {(readings[0], 0), (oval, 1)}
    assert correct.tolist() == [1, 2, 1, 2]


def test_evaluate_refuses_a_negative_limit(evaluate, capsys) -> None:
    # --limit -1 took truths[:-1]: every photo but the last, silently.
    with pytest.raises(SystemExit) as exit_:
        evaluate.main(["--limit", "-1"])
    assert exit_.value.code == 2
    assert "--limit: must be at least 0" in capsys.readouterr().err


def test_evaluation_scripts_without_the_shared_photos_say_so(
    evaluate, eval_detection, capsys, monkeypatch, tmp_path
) -> None:
    from typer.testing import CliRunner

    monkeypatch.setenv("SETVISION_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit) as exit_:
        evaluate.main([])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "shared datasets not found" in err and "Traceback" not in err
    result = CliRunner().invoke(eval_detection.app, [])
    assert result.exit_code == 2
    assert "shared datasets not found" in result.stderr and result.exception is not None
    assert isinstance(result.exception, SystemExit)  # not the SetVisionError it was


def test_eval_detection_names_an_unknown_source(eval_detection) -> None:
    # A typo in --source said only "no annotated photos selected".
    from typer.testing import CliRunner

    result = CliRunner().invoke(eval_detection.app, ["--source", "gractang", "--source", "nosuch"])
    assert result.exit_code == 2
    err = " ".join(result.stderr.replace("│", " ").split())  # rich boxes and wraps it
    assert "no annotated photos of nosuch" in err and "gractang" in err


def test_a_file_given_as_the_drawing_folder_is_refused_first(
    eval_detection, capsys, tmp_path
) -> None:
    # --save / --save-failures naming a file ended in FileExistsError, after the whole run.
    from typer.testing import CliRunner

    synthetic = load_script("eval_synthetic")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    with pytest.raises(SystemExit) as exit_:
        synthetic.main(["--only", "default", "--save", str(a_file)])
    assert exit_.value.code == 2 and "is not a folder" in capsys.readouterr().err
    result = CliRunner().invoke(eval_detection.app, ["--save-failures", str(a_file)])
    assert result.exit_code == 2
    assert "is not a folder" in " ".join(result.stderr.replace("│", " ").split())  # boxed, wrapped
    assert a_file.read_text() == "mine"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--quad-scale", "3"], "--quad-scale: expected 0.5 to 2"),
        (["--quad-scale", "0.1"], "--quad-scale: expected 0.5 to 2"),
        (["--cv", "--record", "--quad-scale", "1.2"], "--record: only with the quads as found"),
    ],
)
def test_evaluate_refuses_a_bad_quad_scale(evaluate, capsys, argv, message) -> None:
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_scaled_detector_scales_each_quad_about_its_centre(evaluate, monkeypatch) -> None:
    import numpy as np

    from vision.detect import CardDetections

    quad = np.array([[[10, 20], [50, 20], [50, 80], [10, 80]]], np.float32)
    found = CardDetections(quad, np.array([0.9], np.float32), np.array([False]))
    monkeypatch.setattr("vision.detect.find_cards", lambda frame: found)
    got = evaluate.scaled_detector(1.5)(np.zeros((100, 100, 3), np.uint8))
    np.testing.assert_allclose(got.corners[0], [[0, 5], [60, 5], [60, 95], [0, 95]])
    assert got.scores is found.scores and got.partial is found.partial
