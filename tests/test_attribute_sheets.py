"""scripts/attribute_sheets.py ``apply``: pre-labels and corrections land on the cards the sheets
showed, or nothing is written."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests._scripts import load_script
from vision.evaluation import CardTruth, PhotoTruth, dump_annotation_file, load_annotation_file

sheets = load_script("attribute_sheets")
runner = CliRunner()

QUADS = [[[0, 0], [50, 0], [50, 80], [0, 80]], [[60, 0], [110, 0], [110, 80], [60, 80]]]
PRE = [{"count": 1, "colour": "red", "shape": "oval", "fill": "solid"},
       {"count": 2, "colour": "green", "shape": "diamond", "fill": "open"}]  # fmt: skip


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An annotation file of one photo with two cards, and the sheets' rows for them."""
    ann, out = tmp_path / "ann", tmp_path / "attrs"
    ann.mkdir()
    out.mkdir()
    monkeypatch.setattr(sheets, "DEFAULT_ANNOTATIONS", ann)
    monkeypatch.setattr(sheets, "OUT", out)
    cards = tuple(CardTruth(corners=q) for q in QUADS)
    photo = PhotoTruth(path="tables/mine/a.jpg", width=200, height=100, cards=cards, source="mine")
    dump_annotation_file(ann / "mine.json", [photo], source="mine")
    rows = [
        {"n": i, "path": photo.path, "index": i, "pred": "", "pred_attrs": PRE[i], "conf": 0.99,
         "partial": False, "old": {}, "corners": QUADS[i]}
        for i in range(2)
    ]  # fmt: skip
    (out / "mine.pre.json").write_text(json.dumps(rows))
    return tmp_path


def apply(tmp_path: Path, fixes: str):
    (tmp_path / "f.fix").write_text(fixes)
    return runner.invoke(sheets.app, ["apply", "mine", str(tmp_path / "f.fix")])


def attrs(tmp_path: Path) -> list[dict]:
    return [
        dict(c.attributes) for c in load_annotation_file(tmp_path / "ann" / "mine.json")[0].cards
    ]


def test_pre_labels_and_fixes_are_stored(setup: Path) -> None:
    result = apply(setup, "1 3 purple striped squiggles  # a comment\n")
    assert result.exit_code == 0, result.output
    assert attrs(setup) == [PRE[0], {"count": 3, "colour": "purple", "shape": "squiggle",
                                     "fill": "striped"}]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ("remove", "card 1 removed"),  # labels went onto the wrong cards
        ("move", "card 0 moved"),
        ("relabel", "card 0 relabelled"),  # a correction made after the sheets was undone
    ],
)
def test_cards_changed_since_the_sheets_refuse_the_whole_apply(
    setup: Path, edit: str, said: str
) -> None:
    file = setup / "ann" / "mine.json"
    photo = load_annotation_file(file)[0]
    cards = list(photo.cards)
    if edit == "remove":
        cards = cards[:1]
    elif edit == "move":
        cards[0] = CardTruth(corners=[[x + 5, y] for x, y in QUADS[0]])
    else:
        cards[0] = CardTruth(corners=QUADS[0], attributes={**PRE[0], "fill": "open"})
    dump_annotation_file(file, [replace(photo, cards=tuple(cards))], source="mine")
    before = file.read_bytes()
    result = apply(setup, "")
    assert result.exit_code == 2
    assert said in result.output and "nothing written" in result.output
    assert file.read_bytes() == before


@pytest.mark.parametrize(
    ("fixes", "said"),
    [("0 5 blue stars\n", "f.fix:1: "), ("abc\n", "expected 'NUMBER TEXT'"),
     ("999 1 red solid oval\n", "no card #999")],
)  # fmt: skip
def test_a_bad_fixes_line_is_one_error_and_nothing_written(
    setup: Path, fixes: str, said: str
) -> None:
    before = (setup / "ann" / "mine.json").read_bytes()
    result = apply(setup, fixes)
    assert result.exit_code == 2 and said in result.output
    assert (setup / "ann" / "mine.json").read_bytes() == before
