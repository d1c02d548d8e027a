"""A ``setvision referee`` run: the live tracker's frames (:func:`vision.live_session.run_live`)
fed to the referee (:mod:`vision.referee`), every event written as it happens to the journal
(JSON Lines, flushed and fsynced per event, so a crash loses nothing), to ``--events`` and to the
view with a scoreboard.

The journal's first line is the game's set-up (``{"type": "start", "players", "penalty",
"variant"}``), then one line per event; ``undo`` lines take back the event before them, and
a ``resume`` line marks where a run continued the game.
:func:`open_journal` starts one or continues one (``--resume``); :func:`undo_last` is
``setvision referee undo JOURNAL``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import SetVisionError
from vision.game import Penalty
from vision.live import LiveFrame
from vision.live_session import LiveSummary, VideoOut, run_live
from vision.live_view import Controls, View
from vision.referee import Referee, RefereeEvent, TableWatcher, referee_from_journal
from vision.rules import Variant
from vision.video_source import FrameSource

__all__ = ["Journal", "RefereeSummary", "draw_scoreboard", "open_journal", "run_referee",
           "undo_last"]  # fmt: skip


class Journal:
    """An append-only JSON Lines file, each line flushed and fsynced as it is written.

    Args:
        path: the file; new (refused if it exists) unless ``resume``.
        resume: append to an existing journal.
    """

    def __init__(self, path: Path, *, resume: bool = False) -> None:
        self.path = path
        try:
            self._file: IO[str] = open(path, "a" if resume else "x", encoding="utf-8")  # noqa: SIM115
        except FileExistsError:
            raise SetVisionError(
                f"{path}: a journal is there already; continue it with --resume {path}, or "
                "name another with --journal"
            ) from None

    def write_raw(self, text: str) -> None:
        self._file.write(text)
        self._file.flush()
        os.fsync(self._file.fileno())

    def write(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def _journal_lines(path: Path) -> list[str]:
    """The journal's lines, less a last line cut short (a crash while it was written: every
    line is flushed whole, so only the last can be torn, and it was never acted on)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SetVisionError(f"{path}: not a referee journal (not text)") from None
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        try:
            json.loads(lines[-1])
        except json.JSONDecodeError:
            lines.pop()
    return lines


def open_journal(
    path: Path, *, resume: bool, players: dict[str, str], penalty: Penalty, variant: Variant
) -> tuple[Journal, Referee]:
    """A journal and its referee: a new game (its set-up written first), or the game in a
    journal continued (its set-up read from it; ``players``, ``penalty``, ``variant`` ignored).

    Raises:
        SetVisionError: a new journal's file exists; a journal to continue is missing or is not
            one.
    """
    if not resume:
        journal = Journal(path)
        journal.write({"type": "start", "players": players, "penalty": penalty.value,
                       "variant": variant.value})  # fmt: skip
        return journal, Referee(players, penalty=penalty, variant=variant)
    if not path.is_file():
        raise SetVisionError(f"{path}: no such journal to resume")
    referee = _rebuilt(path)
    if referee.game.over or any(e.type == "game_over" for e in referee.events):
        raise SetVisionError(f"{path}: that game is over (its journal ends with game_over); "
                             "start a new one, or take the end back with setvision referee "
                             "undo")  # fmt: skip
    journal = Journal(path, resume=True)
    if not path.read_text(encoding="utf-8").endswith("\n"):
        journal.write_raw("\n")  # after a torn last line: the next line starts whole
    journal.write({"type": "resume", "message": "the referee continued this game"})
    return journal, referee


def _rebuilt(path: Path) -> Referee:
    """The referee of the journal at ``path``, its set-up read from its first line.

    Raises:
        SetVisionError: not a journal, or one the rules refuse (the line said).
    """
    lines = _journal_lines(path)
    try:
        return referee_from_journal(lines, **_setup(lines, path))
    except ValueError as error:
        raise SetVisionError(f"{path}: {error}") from None


def _setup(lines: list[str], path: Path) -> dict[str, Any]:
    try:
        first = json.loads(lines[0]) if lines else {}
        if first.get("type") != "start":
            raise ValueError
        return {"players": dict(first["players"]), "penalty": Penalty(first["penalty"]),
                "variant": Variant(first["variant"])}  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError):
        raise SetVisionError(
            f"{path}: not a referee journal (no set-up on its first line)"
        ) from None


def undo_last(path: Path) -> RefereeEvent | None:
    """Take back the last event of the game in the journal at ``path`` (an ``undo`` line is
    appended; nothing is erased). Returns the event taken back, or None if there was none.

    Raises:
        SetVisionError: no such journal, or not one.
    """
    if not path.is_file():
        raise SetVisionError(f"{path}: no such journal")
    before = _rebuilt(path)
    moves = [e for e in before.events if e.type != "warning"]
    if not moves:
        return None
    journal = Journal(path, resume=True)
    journal.write({"type": "undo", "message": f"took back: {moves[-1].message}"})
    journal.close()
    return moves[-1]


@dataclass(frozen=True)
class RefereeSummary:
    """How a refereed run went: the live run's summary and the referee at the end."""

    live: LiveSummary
    referee: Referee


def draw_scoreboard(
    image: npt.NDArray[np.uint8], referee: Referee, *, last: str | None = None
) -> None:
    """Draw the scores, the cards left in the deck and the last message at the bottom left of
    ``image`` ((H, W, 3) uint8 BGR, in place)."""
    h, w = image.shape[:2]
    unit = max(h, w) / 1000.0
    scale, thick = max(0.4, 0.55 * unit), max(1, round(1.4 * unit))
    scores = ", ".join(f"{p} {s}" for p, s in referee.game.scores.items())
    deck = f"deck: {referee.deck_left} cards" + ("  (game over)" if referee.game.over else "")
    lines = [scores, deck]
    if last:
        lines.append(last if len(last) <= 90 else last[:87] + "...")
    sizes = [cv2.getTextSize(t, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[0] for t in lines]
    line_h = max(s[1] for s in sizes) + max(6, int(10 * unit))
    pad = max(4, int(8 * unit))
    box_w = min(w, max(s[0] for s in sizes) + 2 * pad)
    box_h = min(h, line_h * len(lines) + 2 * pad)
    roi = image[h - box_h : h, 0:box_w]
    cv2.convertScaleAbs(roi, dst=roi, alpha=0.3)
    for k, text in enumerate(lines):
        y = h - box_h + pad + line_h * (k + 1) - max(3, int(5 * unit))
        cv2.putText(image, text, (pad, y), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255),
                    thick, cv2.LINE_AA)  # fmt: skip


def run_referee(
    source: FrameSource,
    classifier: Any,
    referee: Referee,
    journal: Journal,
    *,
    events_out: IO[str] | None = None,
    video: VideoOut | None = None,
    view: View | None = None,
    controls: Controls | None = None,
    on_event: Callable[[RefereeEvent], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    **options: Any,
) -> RefereeSummary:
    """Referee the game ``source`` shows until it ends (or a quit), journalling every event.

    Args:
        source, classifier: as for :func:`vision.live_session.run_live`.
        referee: a new game's referee, or one rebuilt from ``journal`` (:func:`open_journal`).
        journal: where every event goes first.
        events_out: a text stream for the events too (``--events``), flushed each line.
        video, view, controls: as for :func:`~vision.live_session.run_live` (the frames carry a
            scoreboard); ``u`` in the view undoes the last event.
        on_event: called with each event; on_note: with what else is worth saying (an undo).
        **options: passed to :func:`vision.live.follow`.
    """
    controls = controls or Controls()
    watcher = TableWatcher()
    state: dict[str, Any] = {"referee": referee, "last": None, "frame": None}

    def emit(events: list[RefereeEvent]) -> None:
        for event in events:
            entry = event.to_json()
            journal.write(entry)  # first: the journal never misses what was said
            if events_out is not None:
                events_out.write(json.dumps(entry, separators=(",", ":")) + "\n")
                events_out.flush()
            state["last"] = event.message
            if on_event is not None:
                on_event(event)

    def on_frame(live: LiveFrame) -> None:
        state["frame"] = live
        if controls.undo:
            controls.undo = False
            said = _undo_in_run(state, journal)
            if on_note is not None:
                on_note(said)
        obs = watcher.update(live)
        if obs is not None:
            emit(state["referee"].observe(obs))

    def decorate(image: npt.NDArray[np.uint8], live: LiveFrame) -> None:
        draw_scoreboard(image, state["referee"], last=state["last"])

    try:
        summary = run_live(source, classifier, video=video, view=view, controls=controls,
                           on_frame=on_frame, decorate=decorate, **options)  # fmt: skip
    finally:
        last = state["frame"]
        if last is not None:
            emit(state["referee"].finish(last.index, last.time_s))
        journal.close()
    return RefereeSummary(summary, state["referee"])


def _undo_in_run(state: dict[str, Any], journal: Journal) -> str:
    """The view's undo key: the last event taken back, the game rebuilt from the journal (the
    next settled table is checked against it). Returns what was done, to say."""
    previous: Referee = state["referee"]
    moves = [e for e in previous.events if e.type != "warning"]
    if not moves:
        return "undo: nothing to take back"
    journal.write({"type": "undo", "message": f"took back: {moves[-1].message}"})
    rebuilt = _rebuilt(journal.path)
    rebuilt.undone(previous)
    state["referee"], state["last"] = rebuilt, f"took back: {moves[-1].message}"
    return f"undo: took back: {moves[-1].message}"
