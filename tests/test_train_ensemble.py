"""The training script's ensemble (v8): which runs train one model and which the members, how a
member is named and cached, and the merged ONNX graph (the mean of the members' logits). Also
scripts/compare_models.py's arguments and counting. No PyTorch: training is replaced by a
recorder; the merge test builds stand-in models with the ``onnx`` package (``dev`` extra)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from tests._scripts import load_script


@pytest.fixture(scope="module")
def recipe():
    return load_script("train_classifier")


@pytest.fixture()
def calls(recipe, monkeypatch, tmp_path):
    """Record what main() would train instead of training: ('single', recipe) or 'ensemble'."""
    got: list = []
    for name in ("RECIPE", "TRAIN_BALANCE", "CONTEXT_SHARE", "MIRROR", "INK_CHROMA", "ZOOM_P"):
        monkeypatch.setattr(recipe, name, getattr(recipe, name))
    monkeypatch.setattr(recipe, "train", lambda args: got.append(("single", recipe.RECIPE)))
    monkeypatch.setattr(recipe, "train_ensemble", lambda args, argv: got.append("ensemble"))
    monkeypatch.setenv("SETVISION_CACHE", str(tmp_path))
    return got


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "ensemble"),
        (["--exclude-source", "omega697", "--steps", "7"], "ensemble"),
        (["--fold", "fold-a", "--threads", "4"], "ensemble"),
        (["--single"], ("single", "v7-zoom-mirror")),
        (["--balance-version", "1"], ("single", "v7-zoom-mirror-wb1")),
        (["--balance-version", "2"], ("single", "v7-zoom-mirror")),
        (["--context-share", "0.03"], ("single", "v7-zoom-mirror-context0.03")),
        (["--no-mirror"], ("single", "v7-zoom-mirror-nomirror")),
        (["--ink-chroma", "0"], ("single", "v7-zoom-mirror-ink0")),
        (["--zoom-p", "0"], ("single", "v7-zoom-mirror-zoomp0")),
    ],
)
def test_what_main_trains(recipe, calls, argv, expected, tmp_path) -> None:
    recipe.main([*argv, "--out", str(tmp_path / "model.onnx")])
    assert calls == [expected]


def test_the_default_recipe_is_the_ensemble_of_its_members(recipe) -> None:
    """Each member is a set of main()'s experiment flags (so it trains as one model)."""
    assert len(recipe.ENSEMBLE) >= 2
    parser_flags = {"--balance-version", "--context-share", "--zoom", "--zoom-p", "--mosaic-p"}
    for flags in recipe.ENSEMBLE:
        assert flags[0] in parser_flags | {"--low-res-p", "--ink-chroma", "--no-mirror"}
    assert recipe.RECIPE != recipe.BASE_RECIPE


def test_bad_balance_version_is_refused(recipe, calls, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--balance-version", "3"])
    assert exit_info.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert calls == []


def _args(recipe, argv: list[str]):
    """main()'s parsed arguments for ``argv``, captured from a recorded ensemble run."""
    seen = []
    original = recipe.train_ensemble
    recipe.train_ensemble = lambda args, raw: seen.append(args)
    try:
        recipe.main([*argv, "--out", "/nonexistent/model.onnx"])  # not the shipped model's
    finally:
        recipe.train_ensemble = original
    return seen[0]


def test_member_commands_and_cache_names(recipe, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SETVISION_CACHE", str(tmp_path))
    flags = recipe.ENSEMBLE[0]
    base = _args(recipe, ["--exclude-source", "omega697", "--threads", "2"])
    cmd = recipe.member_command(flags, base, threads=1)
    assert cmd[: len(flags)] == list(flags)
    assert cmd[cmd.index("--exclude-source") :][:2] == ["--exclude-source", "omega697"]
    assert cmd[cmd.index("--threads") + 1] == "1" and "--out" not in cmd
    path = recipe.member_path(flags, base)
    assert path.parent == tmp_path / "members" and path.suffix == ".onnx"
    # The same member, whatever the threads; another split, seed or member: another file.
    assert recipe.member_path(flags, _args(recipe, ["--exclude-source", "omega697"])) == path
    others = [
        recipe.member_path(flags, _args(recipe, ["--exclude-source", "tomwhite"])),
        recipe.member_path(flags, _args(recipe, ["--exclude-source", "omega697", "--seed", "1"])),
        recipe.member_path(recipe.ENSEMBLE[1], base),
    ]
    assert len({path, *others}) == 4


def test_a_label_change_names_new_cached_models(recipe, monkeypatch, tmp_path) -> None:
    # A member trained before a photo was labelled was reused after it: the model silently
    # lacked the new labels (a new user's trial of the labelling workflow).
    monkeypatch.setenv("SETVISION_CACHE", str(tmp_path))
    ann = tmp_path / "ann"
    ann.mkdir()
    (ann / "mine.json").write_text('{"photos": []}')
    monkeypatch.setattr(recipe, "ANNOTATIONS", ann)
    flags, args = recipe.ENSEMBLE[0], _args(recipe, [])
    before = recipe.member_path(flags, args)
    assert recipe.member_path(flags, args) == before
    (ann / "mine.json").write_text('{"photos": [{"path": "tables/mine/a.jpg"}]}')
    assert recipe.member_path(flags, args) != before


def _linear_model(path: Path, weights: np.ndarray) -> None:
    """A stand-in classifier: logits (N, 12) = per-channel mean of crops (N, 3, H, W) @ W."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("ReduceMean", ["crops"], ["pooled"], axes=[2, 3], keepdims=0),
            helper.make_node("MatMul", ["pooled", "weights"], ["logits"]),
        ],
        "stand_in",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["batch", 3, 125, 80])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 12])],
        initializer=[numpy_helper.from_array(weights.astype(np.float32), "weights")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_merged_graph_outputs_the_mean_logits(recipe, tmp_path) -> None:
    import onnxruntime as ort

    rng = np.random.default_rng(3)
    paths = [tmp_path / f"m{i}.onnx" for i in range(2)]
    weights = [rng.normal(0, 1, (3, 12)) for _ in paths]
    for path, w in zip(paths, weights, strict=True):
        _linear_model(path, w)
    recipe.merge_onnx(paths, tmp_path / "pair.onnx")
    x = rng.normal(0, 1, (5, 3, 125, 80)).astype(np.float32)
    got = ort.InferenceSession(str(tmp_path / "pair.onnx")).run(None, {"crops": x})[0]
    pooled = x.mean(axis=(2, 3))
    np.testing.assert_allclose(got, np.mean([pooled @ w for w in weights], axis=0), atol=1e-5)


# ------------------------------------------------------------------------------------------
# scripts/compare_models.py
@pytest.fixture(scope="module")
def compare():
    return load_script("compare_models")


def test_compare_entries_need_a_name_and_every_split(compare, tmp_path) -> None:
    whole, part = tmp_path / "whole", tmp_path / "part"
    for folder in (whole, part):
        folder.mkdir()
    for split in compare.SPLITS:
        (whole / f"without-{split}.onnx").write_bytes(b"")
    (part / "without-omega697.onnx").write_bytes(b"")
    assert compare.parse_entry(f"a={whole}") == ("a", [whole])
    assert compare.parse_entry(f" pair ={whole},{whole}") == ("pair", [whole, whole])
    for bad, message in [
        (str(whole), "NAME=DIR"),
        (f"={whole}", "NAME=DIR"),
        ("a=", "NAME=DIR"),
        (f"a={part}", "no model for tomwhite"),
    ]:
        with pytest.raises(ValueError, match=message):
            compare.parse_entry(bad)


@pytest.mark.parametrize(
    ("labels", "wrong"),
    [
        ([[0, 0, 0, 0]], 0),
        ([[0, 0, 0, 1]], 1),
        ([[1, 1, 1, 1], [0, 0, 0, 0]], 1),
        ([[2, 2, 2, 2], [2, 2, 2, 2]], 2),
    ],
)
def test_cards_wrong_counts_cards_not_attributes(compare, labels, wrong) -> None:
    logits = np.tile(np.array([3.0, 1.0, 0.0], np.float32), (len(labels), 4))  # reads 0, 0, 0, 0
    assert compare.cards_wrong(logits, np.array(labels)) == wrong


def test_a_trial_run_does_not_write_over_the_shipped_model(recipe, calls, capsys) -> None:
    # `train_classifier.py --single --steps 2 --no-render` replaced models/card_classifier.onnx
    # (every card then read at 1%): only the shipped recipe may write the default --out.
    for argv in (["--single", "--steps", "2"], ["--steps", "5"], ["--no-tables"]):
        with pytest.raises(SystemExit) as stop:
            recipe.main(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert "is not the shipped recipe" in err and "name another --out" in err
    assert calls == []
    recipe.main(["--threads", "1"])  # how it runs is not the recipe
    assert calls == ["ensemble"]


def test_another_crop_version_names_new_cached_models(recipe, monkeypatch, tmp_path) -> None:
    # Members trained on version 1's cut of the chips must not be reused for a recipe trained
    # on version 2's (the command line does not carry TRAIN_CROP); version 1's names stay as
    # they were, so the shipped recipe's cached members are still found.
    monkeypatch.setenv("SETVISION_CACHE", str(tmp_path))
    flags, args = recipe.ENSEMBLE[0], _args(recipe, [])
    assert recipe.TRAIN_CROP == 1
    version1 = recipe.member_path(flags, args)
    cmd = recipe.member_command(flags, args, threads=0)
    digest = hashlib.sha256((" ".join(cmd) + recipe.labels_digest()).encode()).hexdigest()
    assert version1.stem.endswith(digest[:10])
    monkeypatch.setattr(recipe, "TRAIN_CROP", 2)
    assert recipe.member_path(flags, args) != version1


# ------------------------------------------------------------------------------------------
# int8 quantization of the ensemble (v8-int8)
def test_float_names_the_float32_recipe_and_needs_the_ensemble(recipe, calls, capsys) -> None:
    assert recipe.RECIPE == recipe.ENSEMBLE_RECIPE + "-int8"
    recipe.main(["--float", "--out", "/nonexistent/model.onnx"])
    assert calls == ["ensemble"] and recipe.RECIPE == recipe.ENSEMBLE_RECIPE
    with pytest.raises(SystemExit) as stop:
        recipe.main(["--float"])  # the float32 graph is not the shipped recipe
    assert stop.value.code == 2 and "is not the shipped recipe" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        recipe.main(["--float", "--single", "--out", "/nonexistent/model.onnx"])
    assert stop.value.code == 2 and "float32 already" in capsys.readouterr().err
    assert calls == ["ensemble"]


def _conv_model(path: Path, rng: np.random.Generator) -> None:
    """A stand-in classifier: conv3x3 stride 2 + ReLU, twice, average pool, linear (12)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.15, (16, 8, 3, 3)).astype(np.float32)
    head = rng.normal(0, 0.5, (16, 12)).astype(np.float32)
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["crops", "w1"], ["c1"], **conv),
            helper.make_node("Relu", ["c1"], ["r1"]),
            helper.make_node("Conv", ["r1", "w2"], ["c2"], **conv),
            helper.make_node("Relu", ["c2"], ["r2"]),
            helper.make_node("ReduceMean", ["r2"], ["pooled"], axes=[2, 3], keepdims=0),
            helper.make_node("MatMul", ["pooled", "head"], ["logits"]),
        ],
        "stand_in",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["batch", 3, 125, 80])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 12])],
        initializer=[numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"),
                                                                 (head, "head"))],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_quantized_graph_has_7_bit_weights_and_reads_as_the_float_one(recipe, tmp_path) -> None:
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    rng = np.random.default_rng(5)
    _conv_model(tmp_path / "float.onnx", rng)
    x = rng.normal(0, 1, (60, 3, 125, 80)).astype(np.float32)
    info = recipe.quantize_int8(tmp_path / "float.onnx", tmp_path / "int8.onnx", x)
    assert info["calibration_crops"] == 60 and info["readings_changed_on_calibration_crops"] <= 0
    model = onnx.load(str(tmp_path / "int8.onnx"))
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("QuantizeLinear") >= 2 and ops.count("Conv") == 2
    initializers = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    (head,) = [n for n in model.graph.node if n.op_type == "MatMul"]
    assert initializers[head.input[1]].dtype == np.float32  # the head stays float32
    int8 = [w for w in initializers.values() if w.dtype == np.int8]
    weights = [w for w in int8 if w.ndim == 4]  # the rest: zero points
    # |w| <= 64: a pair of uint8 x int8 products stays within int16 (255 * 64 * 2 < 32767).
    assert len(weights) == 2 and all(np.abs(w.astype(int)).max() <= 64 for w in weights)
    assert all(np.abs(w.astype(int)).max() >= 60 for w in weights)  # the range is used
    weight_scales = [
        initializers[n.input[1]]
        for n in model.graph.node
        if n.op_type == "DequantizeLinear" and initializers.get(n.input[0]) is not None
        and initializers[n.input[0]].ndim == 4
    ]  # fmt: skip
    assert sorted(s.shape for s in weight_scales) == [(8,), (16,)]  # one per output channel
    # Only the opsets its nodes use: onnxruntime 1.16 refuses ai.onnx.ml version 5.
    assert {o.domain for o in model.opset_import} == {n.domain for n in model.graph.node} | {""}
    float_logits, int8_logits = (
        ort.InferenceSession(str(tmp_path / name)).run(None, {"crops": x})[0]
        for name in ("float.onnx", "int8.onnx")
    )  # fmt: skip
    scale = np.abs(float_logits).max()
    assert np.abs(int8_logits - float_logits).max() < 0.05 * scale


def test_a_quantization_that_changes_readings_is_refused(recipe, monkeypatch, tmp_path) -> None:
    import onnxruntime.quantization as quantization

    rng = np.random.default_rng(6)
    _conv_model(tmp_path / "float.onnx", rng)
    x = rng.normal(0, 1, (40, 3, 125, 80)).astype(np.float32)
    # A quantizer that writes another network: its readings differ on most crops.
    monkeypatch.setattr(
        quantization, "quantize_static",
        lambda src, dst, *args, **kwargs: _conv_model(Path(dst), np.random.default_rng(7)),
    )  # fmt: skip
    out = tmp_path / "int8.onnx"
    out.write_bytes(b"the previous model")
    with pytest.raises(RuntimeError, match=r"reads \d+ of its 40 calibration crops differently"):
        recipe.quantize_int8(tmp_path / "float.onnx", out, x)
    assert out.read_bytes() == b"the previous model"  # left as it was


def test_calibration_needs_training_crops(recipe, monkeypatch) -> None:
    real = {"crops": np.zeros((3, 250, 160, 3), np.uint8), "source": np.arange(3),
            "paths": np.array(["a", "b", "c"])}  # fmt: skip
    monkeypatch.setattr(recipe, "load_real", lambda verbose=True: real)
    monkeypatch.setattr(recipe, "holdout_paths", lambda data: set())
    argv = ["--no-tables"] + [a for s in recipe.SOURCES for a in ("--exclude-source", s)]
    with pytest.raises(SystemExit, match="no training crops left"):
        recipe.calibration_inputs(_args(recipe, argv))


def test_calibration_draws_training_crops_in_the_batch_shares(recipe, monkeypatch) -> None:
    n = 600
    crops = np.zeros((n, 250, 160, 3), np.uint8)  # each crop's row in blue and green (BGR)
    crops[:, :, :, 0] = (np.arange(n) % 256)[:, None, None]
    crops[:, :, :, 1] = (np.arange(n) // 256)[:, None, None]
    real = {
        "crops": crops,
        "source": np.repeat(np.arange(3), n // 3),  # tomwhite, kaggle, omega697
        "paths": np.array([f"crop{i}" for i in range(n)]),
    }
    table_sources = np.array(["pclewis", "koff", "gractang"] * 30)
    tables = {"crops": np.full((90, 250, 160, 3), 255, np.uint8), "source": table_sources}
    tables["crops"][:, :, :, 2] = (np.arange(90) % 3 * 50)[:, None, None]  # source in red
    held = {f"crop{i}" for i in range(0, n, 2)}  # the even rows: never calibrated on
    monkeypatch.setattr(recipe, "load_real", lambda verbose=True: real)
    monkeypatch.setattr(recipe, "load_tables", lambda verbose=True: tables)
    monkeypatch.setattr(recipe, "holdout_paths", lambda data: held)
    monkeypatch.setattr(recipe, "INK_CHROMA", None)
    monkeypatch.setattr(recipe, "CALIBRATION_CROPS", 100)

    def decoded(argv: list[str]) -> tuple[np.ndarray, np.ndarray]:
        got = recipe.calibration_inputs(_args(recipe, argv))
        assert got.shape == (100, 3, 125, 80) and got.dtype == np.float32
        rgb = np.round((got[:, :, 0, 0] * 0.25 + 0.5) * 255).astype(int)  # channel order RGB
        is_table = rgb[:, 1] == 255
        return rgb[~is_table, 2] + 256 * rgb[~is_table, 1], rgb[is_table, 0] // 50

    rows, table_source = decoded(["--exclude-source", "omega697"])
    shares = recipe.SHARES
    total = shares["tomwhite"] + shares["kaggle-set-cards"] + shares["tables"]
    assert abs(len(table_source) - 100 * shares["tables"] / total) < 1
    assert abs(np.sum(rows < 200) - 100 * shares["tomwhite"] / total) < 2
    assert np.all(rows % 2 == 1) and np.all(rows < 400)  # no hold-out crop, no omega697
    assert len(set(rows.tolist())) == len(rows)  # drawn without replacement
    assert set(table_source.tolist()) == {0, 1, 2}
    np.testing.assert_array_equal(rows, decoded(["--exclude-source", "omega697"])[0])  # seeded
    rows, table_source = decoded(["--fold", "fold-a"])  # pclewis's table cards left out
    assert 0 not in table_source and np.any(rows >= 400)


# ------------------------------------------------------------------------------------------
# The confidence calibration across a retrain
def _with_calibration(path: Path, calibration: dict | None) -> Path:
    import json

    meta = {"training": {"recipe": "whatever"}}
    if calibration is not None:
        meta["calibration"] = calibration
    path.write_text(json.dumps(meta))
    return path


def test_a_retrained_model_keeps_the_calibration_of_its_recipe(recipe, monkeypatch, tmp_path):
    # `train_classifier.py` rewrites the model JSON; the temperatures come from the full run of
    # eval_classifier.py (hours). Fitted on the cross-validation models of this very recipe,
    # steps, seed and labels, they hold for the retrained model; for anything else they do not.
    monkeypatch.setattr(recipe, "RECIPE", recipe.RECIPE)
    fitted = {"temperatures": [0.4, 0.3, 0.4, 0.4], "cv_models": recipe.cv_models_name(1500, 0)}
    path = _with_calibration(tmp_path / "model.json", fitted)
    assert recipe.kept_calibration(1500, 0, path) == fitted
    assert recipe.kept_calibration(700, 0, path) is None  # other steps
    assert recipe.kept_calibration(1500, 1, path) is None  # another seed
    monkeypatch.setattr(recipe, "labels_digest", lambda: "0123456789abcdef")
    assert recipe.kept_calibration(1500, 0, path) is None  # a label corrected
    monkeypatch.undo()
    monkeypatch.setattr(recipe, "RECIPE", recipe.RECIPE + "-other")
    assert recipe.kept_calibration(1500, 0, path) is None  # another recipe
    monkeypatch.undo()
    old_format = {"temperatures": [0.4, 0.3, 0.4, 0.4], "fitted_on": "..."}
    assert recipe.kept_calibration(1500, 0, _with_calibration(path, old_format)) is None
    assert recipe.kept_calibration(1500, 0, _with_calibration(path, None)) is None
    assert recipe.kept_calibration(1500, 0, tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert recipe.kept_calibration(1500, 0, tmp_path / "bad.json") is None


def test_the_calibration_eval_writes_is_the_one_a_retrain_keeps(recipe, tmp_path) -> None:
    evaluation = load_script("eval_classifier")
    path = _with_calibration(tmp_path / "model.json", None)
    evaluation.write_calibration(np.array([0.5, 0.25, 0.5, 0.75]), 123, 1500, 0, path=path)
    kept = recipe.kept_calibration(1500, 0, path)
    assert kept is not None and kept["temperatures"] == [0.5, 0.25, 0.5, 0.75]
    assert (
        kept["heads"] == ["count", "colour", "shape", "fill"] and "123 cards" in kept["fitted_on"]
    )
    assert recipe.kept_calibration(700, 0, path) is None


@pytest.mark.parametrize(
    ("argv", "kept"),
    [([], True), (["--steps", "700"], True), (["--seed", "1"], True), (["--float"], True),
     (["--width", "0.5"], False), (["--no-tables"], False), (["--fold", "fold-a"], False),
     (["--exclude-source", "kaggle-set-cards"], False), (["--lr", "0.001"], False)],
)  # fmt: skip
def test_only_the_shipped_recipe_may_keep_the_calibration(recipe, calls, argv, kept) -> None:
    # --width 0.5 kept the shipped temperatures for a model of another architecture (review).
    # (``calls`` restores the recipe's globals that --float changes.)
    assert _args(recipe, argv).as_shipped is kept
