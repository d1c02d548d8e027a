"""Fakes for pipeline tests: a synthetic table photo with known cards, a detector and classifier.

The frame is drawn here (not by :mod:`vision.render`) so these tests do not depend on other
modules being finished: white cards on a dark green cloth, each with ``count`` filled ellipses in
the card's ink (BGR inks close to printed SET inks).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.cards import Card, Colour

#: BGR inks: red, green, purple (close to a standard deck under neutral light).
INKS = {
    Colour.RED: (40, 30, 220),
    Colour.GREEN: (60, 150, 20),
    Colour.PURPLE: (130, 30, 100),
}


@dataclass(frozen=True)
class FakeDetections:
    corners: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]


def table_frame(
    cards: list[Card], *, width: int = 1280, height: int = 720, cols: int = 4
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """Draw ``cards`` in a grid, in reading order.

    Returns:
        (frame (H, W, 3) uint8 BGR, corners (N, 4, 2) float32 TL, TR, BR, BL).
    """
    frame = np.full((height, width, 3), (40, 90, 30), np.uint8)
    rows = max(1, -(-len(cards) // cols))
    cell_w, cell_h = width / (cols + 1), height / (rows + 0.5)
    card_h = min(cell_h * 0.85, cell_w * 0.85 / 0.64)
    card_w = card_h * 0.64
    corners = []
    for i, card in enumerate(cards):
        r, c = divmod(i, cols)
        cx, cy = cell_w * (c + 1), cell_h * (r + 0.75)
        x0, y0, x1, y1 = cx - card_w / 2, cy - card_h / 2, cx + card_w / 2, cy + card_h / 2
        quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
        corners.append(quad)
        cv2.rectangle(frame, (int(x0), int(y0)), (int(x1), int(y1)), (235, 238, 240), -1)
        n = card.count.value
        for k in range(n):
            sy = cy + (k - (n - 1) / 2) * card_h * 0.25
            axes = (int(card_w * 0.32), int(card_h * 0.09))
            cv2.ellipse(frame, (int(cx), int(sy)), axes, 0, 0, 360, INKS[card.colour], -1)
    return frame, np.array(corners, np.float32).reshape(-1, 4, 2)


def fake_detector(corners: npt.NDArray[np.float32]):
    """A detector that always returns ``corners`` (in a scrambled order)."""
    order = np.arange(len(corners))[::-1].copy()

    def detect(frame: npt.NDArray[np.uint8]) -> FakeDetections:
        return FakeDetections(corners[order], np.ones(len(corners), np.float32))

    return detect


@dataclass(frozen=True)
class FakeProbabilities:
    count: npt.NDArray[np.float32]
    colour: npt.NDArray[np.float32]
    shape: npt.NDArray[np.float32]
    fill: npt.NDArray[np.float32]


def one_hot_probs(cards: list[Card], sure: float = 0.97) -> FakeProbabilities:
    """Probabilities putting ``sure`` on each card's true value of every attribute."""
    arrays = []
    for a in range(4):
        p = np.full((len(cards), 3), (1 - sure) / 2, np.float32)
        for i, card in enumerate(cards):
            p[i, card.positions[a]] = sure
        arrays.append(p)
    return FakeProbabilities(*arrays)


class FakeClassifier:
    """Returns fixed probabilities (rows in reading order, as the pipeline classifies)."""

    def __init__(self, probs: FakeProbabilities) -> None:
        self.probs = probs
        self.calls = 0

    def predict(self, crops: npt.NDArray[np.uint8]) -> FakeProbabilities:
        assert crops.ndim == 4 and crops.dtype == np.uint8
        assert len(crops) == len(self.probs.count)
        self.calls += 1
        return self.probs


_HUES = {Colour.RED: 30.0, Colour.GREEN: 150.0, Colour.PURPLE: -45.0}


class InkReader:
    """A classifier fake that reads crops drawn by :func:`table_frame` (solid ovals only).

    Count = number of ink blobs, colour = nearest ink hue, shape oval, fill solid; so it works
    with any detector that finds the cards.
    """

    def predict(self, crops: npt.NDArray[np.uint8]) -> FakeProbabilities:
        from vision.colour import symbol_colours

        inks = symbol_colours(crops)
        n = len(crops)
        probs = [np.full((n, 3), 0.01, np.float32) for _ in range(4)]
        for i, crop in enumerate(crops):
            grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
            mask = (grey < 170).astype(np.uint8)
            mask[:15], mask[-15:], mask[:, :15], mask[:, -15:] = 0, 0, 0, 0
            blobs, _, stats, _ = cv2.connectedComponentsWithStats(mask)
            count = int(np.sum(stats[1:, cv2.CC_STAT_AREA] > 100))
            probs[0][i, min(max(count, 1), 3) - 1] = 0.98
            dist = [abs((inks.hue_deg[i] - h + 180) % 360 - 180) for h in _HUES.values()]
            probs[1][i, int(np.argmin(dist))] = 0.98
            probs[2][i, 0] = 0.98
            probs[3][i, 0] = 0.98
        return FakeProbabilities(*(p / p.sum(axis=1, keepdims=True) for p in probs))


def box_detector(frame: npt.NDArray[np.uint8]) -> FakeDetections:
    """A detector for :func:`table_frame` images: bright axis-aligned rectangles."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    mask = (grey > 200).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    quads = []
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        if w * h > 0.002 * grey.size:
            quads.append([[x, y], [x + w - 1, y], [x + w - 1, y + h - 1], [x, y + h - 1]])
    corners = np.array(quads, np.float32).reshape(-1, 4, 2)
    return FakeDetections(corners, np.ones(len(corners), np.float32))
