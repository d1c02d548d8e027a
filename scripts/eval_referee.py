#!/usr/bin/env python3
"""The referee against exact truth: rendered game videos (``vision.render_video``) followed by
the live tracker and refereed exactly as ``setvision referee VIDEO`` does.

Every step of a video's script is an event that happened: the opening ``deal``, each ``take``,
``wrong_claim`` (lifted and put back), and each ``add`` (a ``refill`` after a take left fewer
than 12, else ``deal_extra``); the end of the video is the players stopping (``game_over``).
An event is found when the referee gives one of the same type with the same cards from the
step's first act to ``--within`` seconds after its hand left the picture (a claim's cards
carried out of the picture may be called as soon as the table settles without them).
Reported: recall, precision (events the referee gave that did not happen; ``warning`` lines
are counted apart), the side right on takes and wrong claims, final scores exact, and the
delays after the hand left.

Usage::

    nice .venv/bin/python scripts/eval_referee.py [--videos N] [--one-by-one N] [--seed S]
        [--breaks] [--full]

``--one-by-one N`` adds N games whose hands pick a take's or claim's cards one at a time and
carry them out of the picture, a wrong claim's cards shown off the picture for 1.5 s and then
put back (``GameVideo(one_by_one=True)``), two wrong claims each.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval_live import video_cases  # noqa: E402
from script_args import at_least  # noqa: E402

from vision.cards import Card  # noqa: E402
from vision.classify import CardClassifier  # noqa: E402
from vision.live import SourceFrame, follow  # noqa: E402
from vision.referee import Referee, RefereeEvent, TableWatcher  # noqa: E402
from vision.render_video import GameVideo, Step, game_script  # noqa: E402
from vision.rules import find_sets  # noqa: E402

#: The issue's bound for calling game over, seconds after the last hand left.
GAME_OVER_WITHIN = 2.0


def truth_events(video: GameVideo, cards: dict[int, Card]) -> list[dict[str, Any]]:
    """What happened: one entry per step (type, cards, side, time the hand left)."""
    out = []
    table = 0
    for step in video.steps:
        kind = step.kind
        if kind == "deal":
            table += len(step.ids)
        elif kind == "take":
            table -= 3
        elif kind == "add":
            kind = "refill" if table < 12 else "deal_extra"
            table += len(step.ids)
        out.append({"type": kind, "cards": frozenset(cards[i] for i in step.ids),
                    "side": step.side, "time_s": step.end_s, "from_s": step.act_s})  # fmt: skip
    return out


def broken_script(rng: np.random.Generator) -> tuple[Step, ...]:
    """A short game with two rule breaks: 3 more dealt while a SET is on the table, and a
    refill above 12 after a SET taken from 15."""
    from vision.cards import full_deck

    deck = [c for c in full_deck()]
    deck = [deck[i] for i in rng.permutation(81)]
    table, rest = deck[:12], deck[12:]
    while not find_sets(table):
        rng.shuffle(deck)
        table, rest = deck[:12], deck[12:]
    steps = [Step("deal", tuple(table), "bottom")]
    steps.append(Step("add", tuple(rest[:3]), "left"))  # a SET is on the table: a break
    table += rest[:3]
    rest = rest[3:]
    trio = tuple(table[i] for i in find_sets(table)[0])
    steps.append(Step("take", trio, "right"))
    table = [c for c in table if c not in trio]
    steps.append(Step("add", tuple(rest[:3]), "top"))  # refill above 12: a break
    return tuple(steps)


def score(video: GameVideo, classifier: Any, *, deck_out: bool = False) -> dict[str, Any]:
    """Referee one video and match its events with the truth (``deck_out``: the script plays
    the deck out, so the game ends by the rules when the last step leaves no SET)."""
    cards: dict[int, Card] = {}

    def frames() -> Iterator[SourceFrame]:
        for f in video.frames():
            for c in f.cards:
                cards[c.id] = c.card
            yield SourceFrame(f.index, f.time_s, f.image)

    watcher, referee = TableWatcher(), Referee()
    last = None
    for live in follow(frames(), classifier):
        last = live
        obs = watcher.update(live)
        if obs is not None:
            referee.observe(obs)
    if last is not None:
        referee.finish(last.index, last.time_s)
    truth = truth_events(video, cards)
    # the players stop with the video's last frame
    end = video.steps[-1].end_s if deck_out else (video.frame_count - 1) / video.fps
    truth.append({"type": "game_over", "cards": frozenset(), "side": None, "time_s": end})
    return match(truth, referee.events)


def match(truth: list[dict[str, Any]], events: list[RefereeEvent], within: float = 1.0
          ) -> dict[str, Any]:  # fmt: skip
    given = [e for e in events if e.type != "warning"]
    used: set[int] = set()
    found, side_right, sided, delays = 0, 0, 0, []
    missed = []
    for t in truth:
        hit = None
        for k, e in enumerate(given):
            if k in used or e.type != t["type"] or frozenset(e.cards) != t["cards"]:
                continue
            bound = GAME_OVER_WITHIN if t["type"] == "game_over" else within
            if t.get("from_s", t["time_s"]) <= e.time_s <= t["time_s"] + bound:
                hit = k
                break
        if hit is None:
            missed.append(f"{t['type']} at {t['time_s']:.1f} s")
            continue
        used.add(hit)
        found += 1
        delays.append(max(given[hit].time_s - t["time_s"], 0.0))
        if t["type"] in ("take", "wrong_claim"):
            sided += 1
            side_right += given[hit].side == t["side"]
    extra = [f"{e.type} at {e.time_s:.1f} s" for k, e in enumerate(given) if k not in used]
    return {"truth": len(truth), "found": found, "given": len(given), "sided": sided,
            "side_right": side_right, "delays": delays, "missed": missed, "extra": extra,
            "warnings": [e.message for e in events if e.type == "warning"],
            "scores": dict(events[-1].scores) if events else {}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=at_least(0), default=4)
    parser.add_argument("--one-by-one", type=at_least(0), default=0, dest="one_by_one",
                        help="Also N games whose hands pick cards one at a time.")  # fmt: skip
    parser.add_argument("--seed", type=at_least(0), default=0)
    parser.add_argument("--full", action="store_true",
                        help="Also a whole game, its deck played out.")  # fmt: skip
    parser.add_argument("--breaks", action="store_true",
                        help="Also a game with two rule breaks, to be warned.")  # fmt: skip
    args = parser.parse_args(argv)
    classifier = CardClassifier()
    totals = {"truth": 0, "found": 0, "given": 0, "sided": 0, "side_right": 0}
    delays: list[float] = []
    def tally(label: str, video: GameVideo, deck_out: bool = False) -> None:
        s = score(video, classifier, deck_out=deck_out)
        for k in totals:
            totals[k] += s[k]
        delays.extend(s["delays"])
        print(f"{label}: events found {s['found']}/{s['truth']}, given {s['given']}, sides "
              f"{s['side_right']}/{s['sided']}, missed {s['missed']}, extra {s['extra']}, "
              f"warnings {len(s['warnings'])}, scores {s['scores']}", flush=True)  # fmt: skip

    styles = [(args.videos, args.seed, False), (args.one_by_one, args.seed + 1, True)]
    for n, seed, one_by_one in styles:
        for case in video_cases(n, seed, (1280, 720)):
            rng = np.random.default_rng(case["seed"])
            script = game_script(rng, takes=4, wrong_claims=2 if one_by_one else 1)
            video = GameVideo(script, rng, size=case["size"], background=case["background"],
                              tilt_deg=case["tilt_deg"], drift_px=case["drift_px"],
                              warm=case["warm"], exposure=case["exposure"],
                              one_by_one=one_by_one, hold_s=1.5 if one_by_one else 0.5)  # fmt: skip
            tally(f"{'one by one ' if one_by_one else ''}{case['background']:>10} tilt "
                  f"{case['tilt_deg']:4.1f}", video)  # fmt: skip
    if args.full:
        rng = np.random.default_rng(args.seed + 7)
        script = game_script(rng, takes=40, wrong_claims=2)
        video = GameVideo(script, rng, size=(960, 540), fps=15.0, background="cloth",
                          tilt_deg=20)  # fmt: skip
        tally(f"whole game, {len(script)} steps", video, deck_out=True)
    if args.breaks:
        rng = np.random.default_rng(args.seed + 99)
        video = GameVideo(broken_script(rng), rng, background="wood", tilt_deg=15)
        s = score(video, classifier)
        print(f"rule breaks: {s['warnings']}")
    if totals["truth"]:
        d = np.array(delays)
        print(f"recall {totals['found'] / totals['truth']:.4f} ({totals['found']}/"
              f"{totals['truth']}), precision {totals['found'] / max(totals['given'], 1):.4f}, "
              f"side right {totals['side_right']}/{totals['sided']}, delay median "
              f"{np.median(d):.2f} s, max {d.max():.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
