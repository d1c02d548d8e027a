#!/usr/bin/env python3
"""Label the attributes of annotated cards: model pre-labels on contact sheets, corrected by eye.

For every card annotated in ``datasets/detection/<source>.json`` the card is warped with
:func:`vision.warp.warp_cards` (unbalanced and white-balanced crops side by side, optionally with
the unwarped photo region for lighting context), pre-labelled by the card classifier, and drawn
on contact sheets with a running number per source. A person reads the sheets and writes a
corrections file (``NUMBER TEXT`` per line, e.g. ``37 2 red striped diamonds``; ``37 -`` leaves
card 37 unlabelled); ``apply`` stores pre-labels plus corrections in the annotation file (the
same locked read-modify-write as ``label.py``) and prints how many pre-labels were changed, per
attribute.

    python scripts/attribute_sheets.py sheets koff --model /tmp/model/card_classifier.onnx
    python scripts/attribute_sheets.py apply koff /tmp/setvision-attrs/koff.fix
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import cv2
import numpy as np
import numpy.typing as npt
import typer

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from label import DEFAULT_ANNOTATIONS, Store, _replace  # noqa: E402

from vision.cards import parse_card  # noqa: E402
from vision.classify import CardClassifier, to_cards  # noqa: E402
from vision.evaluation import ATTRIBUTES, CardTruth, load_annotation_file  # noqa: E402
from vision.io import load_image  # noqa: E402
from vision.warp import CROP_HEIGHT, CROP_WIDTH, warp_cards  # noqa: E402

app = typer.Typer(add_completion=False, no_args_is_help=True)
OUT = Path("/tmp/setvision-attrs")
FOOT = 44  # caption height under each tile, pixels


def _fail(message: str) -> NoReturn:
    """One line on stderr and exit code 2 (bad input)."""
    typer.echo(f"attribute_sheets.py: error: {message}", err=True)
    raise typer.Exit(2)


def _annotation_file(source: str) -> Path:
    """The annotation file of ``source``, which must exist."""
    file = DEFAULT_ANNOTATIONS / f"{source}.json"
    if not file.is_file():
        known = ", ".join(sorted(p.stem for p in DEFAULT_ANNOTATIONS.glob("*.json")))
        _fail(f"no annotation file for source {source!r} ({file}); sources: {known}")
    return file


def _attrs(text: str) -> dict[str, object]:
    card = parse_card(text)
    out: dict[str, object] = {}
    for key in ATTRIBUTES:
        value = getattr(card, key)
        value = getattr(value, "value", value)
        out[key] = int(value) if key == "count" else str(value)
    return out


def _text(attrs: dict[str, object]) -> str:
    return " ".join(str(attrs[k]) for k in ATTRIBUTES)


def _context(frame: npt.NDArray[np.uint8], quad: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """The unwarped photo region around the card, fitted into a crop-sized tile."""
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
    pad = int(0.08 * max(x1 - x0, y1 - y0))
    h, w = frame.shape[:2]
    region = frame[max(0, y0 - pad) : min(h, y1 + pad), max(0, x0 - pad) : min(w, x1 + pad)]
    tile = np.full((CROP_HEIGHT, CROP_WIDTH, 3), 60, np.uint8)
    if region.size == 0:
        return tile
    s = min(CROP_WIDTH / region.shape[1], CROP_HEIGHT / region.shape[0])
    small = cv2.resize(region, (max(1, int(region.shape[1] * s)), max(1, int(region.shape[0] * s))),
                       interpolation=cv2.INTER_AREA)  # fmt: skip
    tile[: small.shape[0], : small.shape[1]] = small
    return tile


@app.command()
def sheets(
    source: str,
    model: Annotated[
        Path | None, typer.Option(help="ONNX model (default: the packaged one).")
    ] = None,
    per_sheet: Annotated[int, typer.Option(help="Cards per sheet.")] = 15,
    columns: Annotated[int, typer.Option(help="Cards per row.")] = 5,
    context: Annotated[bool, typer.Option(help="Add the unwarped photo region.")] = False,
    scale: Annotated[float, typer.Option(help="Tile magnification.")] = 1.0,
) -> None:
    """Pre-label every card of SOURCE and write contact sheets to /tmp/setvision-attrs."""
    store = Store(DEFAULT_ANNOTATIONS)
    photos = load_annotation_file(_annotation_file(source))
    clf = CardClassifier(model)
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    tiles: list[npt.NDArray[np.uint8]] = []
    for photo in photos:
        if not photo.cards:
            continue
        frame = load_image(store.data / photo.path)
        quads = np.array([c.corners for c in photo.cards], np.float32)
        raw = warp_cards(frame, quads, balance=False)
        bal = warp_cards(frame, quads, balance=True)
        preds = to_cards(clf.predict(bal))
        for i, card in enumerate(photo.cards):
            pred, conf = preds[i]
            num = len(rows)
            rows.append({"n": num, "path": photo.path, "index": i, "pred": str(pred),
                         "pred_attrs": _attrs(str(pred)), "conf": conf, "partial": card.partial,
                         "old": card.attributes,
                         "corners": np.asarray(card.corners).tolist()})  # fmt: skip
            panels = [raw[i], bal[i]] + ([_context(frame, quads[i])] if context else [])
            tile = np.hstack(panels)
            if scale != 1.0:
                tile = cv2.resize(tile, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
            foot = np.full((FOOT, tile.shape[1], 3), 255, np.uint8)
            name = Path(photo.path).stem[-18:]
            cv2.putText(foot, f"#{num} {name} c{i}{' PARTIAL' if card.partial else ''}", (3, 17),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)  # fmt: skip
            colour = (0, 0, 200) if conf < 0.9 else (0, 0, 0)
            cv2.putText(foot, f"{_text(_attrs(str(pred)))} {conf:.2f}", (3, 38),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)  # fmt: skip
            tiles.append(np.vstack([tile, foot]))
    (OUT / f"{source}.pre.json").write_text(json.dumps(rows, indent=0), encoding="utf-8")
    gap = 8
    for s in range(0, len(tiles), per_sheet):
        chunk = tiles[s : s + per_sheet]
        th, tw = chunk[0].shape[:2]
        nrows = (len(chunk) + columns - 1) // columns
        sheet = np.full((nrows * (th + gap), columns * (tw + gap), 3), 128, np.uint8)
        for k, tile in enumerate(chunk):
            r, c = divmod(k, columns)
            sheet[r * (th + gap) : r * (th + gap) + th, c * (tw + gap) : c * (tw + gap) + tw] = tile
        cv2.imwrite(str(OUT / f"{source}_{s // per_sheet:02d}.png"), sheet)
    typer.echo(f"{source}: {len(rows)} cards, {(len(tiles) + per_sheet - 1) // per_sheet} sheets")


@app.command()
def zoom(source: str, numbers: list[int], scale: float = 3.0) -> None:
    """Magnify the balanced crops of the given card numbers (after ``sheets``)."""
    store = Store(DEFAULT_ANNOTATIONS)
    rows = json.loads((OUT / f"{source}.pre.json").read_text(encoding="utf-8"))
    out = []
    for n in numbers:
        row = rows[n]
        photo = store.get(row["path"])
        assert photo is not None
        frame = load_image(store.data / photo.path)
        quad = np.array([photo.cards[row["index"]].corners], np.float32)
        w, h = int(CROP_WIDTH * scale), int(CROP_HEIGHT * scale)
        crop = warp_cards(frame, quad, size=(w, h), balance=False)[0]
        cv2.putText(crop, f"#{n}", (5, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 255), 2)
        out.append(crop)
    cv2.imwrite(str(OUT / f"{source}_zoom.png"), np.hstack(out))
    typer.echo(str(OUT / f"{source}_zoom.png"))


@app.command()
def apply(source: str, fixes: Path) -> None:
    """Store pre-labels plus corrections (``NUMBER TEXT`` or ``NUMBER -``) in the annotations.

    Refused, with nothing written, when a fixes line is not understood or when any card has
    changed since the sheets were made (removed, moved, or its attributes edited): the sheets'
    numbers would put labels on the wrong cards, or undo the edits."""
    pre_file = OUT / f"{source}.pre.json"
    if not pre_file.is_file():
        _fail(f"no sheets for {source!r} ({pre_file}); run: attribute_sheets.py sheets {source}")
    rows = json.loads(pre_file.read_text(encoding="utf-8"))
    try:
        lines = fixes.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        _fail(f"cannot read the fixes file {fixes}: {error}")
    fix: dict[int, str] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or not parts[0].isdigit():
            _fail(f"{fixes}:{number}: expected 'NUMBER TEXT' or 'NUMBER -', got {raw.strip()!r}")
        num, text = int(parts[0]), parts[1].strip()
        if num >= len(rows):
            _fail(f"{fixes}:{number}: no card #{num} on the sheets (#0 to #{len(rows) - 1})")
        if text != "-":
            try:
                _attrs(text)
            except ValueError as error:
                _fail(f"{fixes}:{number}: {error}")
        fix[num] = text
    store = Store(DEFAULT_ANNOTATIONS)
    stale = []
    store.forget(source)  # read afresh: edits since the sheets are what is looked for
    for row in rows:
        entry = store.get(row["path"])
        cards = () if entry is None else entry.cards
        if row["index"] >= len(cards):
            stale.append(f"{row['path']} card {row['index']} removed")
        elif "corners" in row and not np.allclose(cards[row["index"]].corners, row["corners"]):
            stale.append(f"{row['path']} card {row['index']} moved")
        elif dict(cards[row["index"]].attributes) != dict(row["old"] or {}):
            stale.append(f"{row['path']} card {row['index']} relabelled")
    if stale:
        _fail(
            f"{len(stale)} cards changed since the sheets were made (first: {stale[0]}); nothing "
            f"written; run: attribute_sheets.py sheets {source}"
        )
    changed = dict.fromkeys(ATTRIBUTES, 0)
    cards_changed = unlabelled = 0
    by_photo: dict[str, dict[int, dict[str, object]]] = {}
    for row in rows:
        pre = row["pred_attrs"]
        text = fix.get(row["n"])
        if text == "-" or (row["partial"] and text is None):
            attrs: dict[str, object] = {}
            unlabelled += 1
        else:
            attrs = _attrs(text) if text else dict(pre)
            diff = [k for k in ATTRIBUTES if attrs[k] != pre[k]]
            for k in diff:
                changed[k] += 1
            cards_changed += bool(diff)
        by_photo.setdefault(row["path"], {})[row["index"]] = attrs
    for path, attrs_by_index in by_photo.items():
        store.forget(source)
        entry = store.get(path)
        assert entry is not None
        cards = [
            CardTruth(corners=c.corners, partial=c.partial, attributes=attrs_by_index.get(i, {}))
            for i, c in enumerate(entry.cards)
        ]
        store.put(_replace(entry, cards=tuple(cards)))
    labelled = len(rows) - unlabelled
    typer.echo(
        f"{source}: {len(rows)} cards, {labelled} labelled, {unlabelled} unlabelled; "
        f"pre-labels changed on {cards_changed} cards: {changed}"
    )


if __name__ == "__main__":
    from vision.cli import run_app

    sys.exit(run_app(app, "attribute_sheets.py"))
