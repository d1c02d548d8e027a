"""The review page of ``setvision label review`` in a real browser: headless Chromium driven by
Playwright, keys and mouse as a person uses them, every change checked in the saved
``annotations.json`` (the HTTP API alone is tested in ``tests/test_cli_label.py``).

Needs the ``playwright`` package (the ``dev`` extra) and Chromium at ``/usr/bin/chromium``
(Debian's ``chromium``; ``SETVISION_CHROMIUM`` names another). Where either is missing the
tests are skipped, unless ``SETVISION_REQUIRE_BROWSER=1`` (CI sets it): then they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.dataset.prelabel import photo_from_reading
from vision.dataset.records import LabelledPhoto
from vision.dataset.review_server import make_server
from vision.dataset.store import file_of, load_photos, save_photos

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "datasets" / "samples" / "table.jpg"
CHROMIUM = os.environ.get("SETVISION_CHROMIUM", "/usr/bin/chromium")
REQUIRED = os.environ.get("SETVISION_REQUIRE_BROWSER", "") not in ("", "0")
#: Chromium on a machine with no network, no display and no GPU (as root in a container).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
#: How long a save may take to reach the file.
WAIT_S = 10.0


def _missing(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"{reason}, and SETVISION_REQUIRE_BROWSER is set", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:
    _missing("no playwright (pip install -e '.[dev]')")
if not Path(CHROMIUM).is_file():
    _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A dataset of two photos: the shipped sample table with its 12 cards pre-labelled right
    (its ground truth, confidence 0.99), and a grey photo with one white card no one found."""
    folder = tmp_path / "set"
    folder.mkdir()
    truth = json.loads(SAMPLE.with_suffix(".json").read_text())
    for card in truth["cards"]:
        card.update(partial=False, confidence=0.99)
    table = photo_from_reading(truth, file_of(folder, SAMPLE))
    empty = tmp_path / "empty.jpg"
    frame = np.full((600, 800, 3), 90, np.uint8)
    cv2.rectangle(frame, (350, 200), (450, 356), (245, 245, 245), -1)
    cv2.imwrite(str(empty), frame)
    save_photos(folder, [table, LabelledPhoto(file_of(folder, empty), 800, 600)])
    return folder


class Review:
    """The page open in the browser over ``dataset``, with what it said on its console."""

    def __init__(self, page: Page, folder: Path, url: str) -> None:
        self.page, self.folder, self.url = page, folder, url
        self.errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self) -> None:
        self.page.goto(self.url)
        self.shown()

    def shown(self, number: int | None = None) -> None:
        """Wait until photo ``number`` (1-based; any) is drawn with its cards."""
        where = "" if number is None else f"photo {number} of "
        self.page.wait_for_function(
            "where => document.getElementById('where').textContent.startsWith(where) && "
            "image && image.complete && image.naturalWidth > 0 && "
            "document.querySelector('canvas').width > 0",
            arg=where,
        )

    def photos(self) -> list[LabelledPhoto]:
        return load_photos(self.folder)

    def saved(self, what: Callable[[list[LabelledPhoto]], bool]) -> list[LabelledPhoto]:
        """The dataset once ``what`` holds for it (fails after :data:`WAIT_S`), the page done
        saving."""
        end = time.monotonic() + WAIT_S
        while True:
            photos = self.photos()
            if what(photos):
                break
            assert time.monotonic() < end, f"not saved in {WAIT_S} s: {photos}"
            time.sleep(0.05)
        self.page.wait_for_function("() => pending === 0")
        return self.photos()

    def at(self, x: float, y: float) -> tuple[float, float]:
        """The page position of photo pixel (x, y)."""
        left, top, scale = self.page.evaluate(
            "() => { const box = canvas.getBoundingClientRect();"
            " return [box.left + PAD, box.top + PAD, scale]; }"
        )
        return left + x * scale, top + y * scale

    def text(self, element: str) -> str:
        return self.page.inner_text(f"#{element}")


@pytest.fixture
def review(browser: Any, dataset: Path) -> Iterator[Review]:
    server = make_server(dataset, port=0)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    try:
        review = Review(
            context.new_page(), dataset, f"http://127.0.0.1:{server.server_address[1]}/"
        )
        review.open()
        yield review
        assert review.errors == [], f"the page's console: {review.errors}"
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_enter_checks_a_whole_photo_with_one_key(review: Review) -> None:
    before = review.photos()
    assert review.text("where").startswith("photo 1 of 2 (0 checked)")
    assert review.text("state") == "not checked"
    review.page.keyboard.press("Enter")
    table, empty = review.saved(lambda photos: photos[0].checked)
    assert table == before[0].accepted()  # every card checked, readings and corners unchanged
    assert table.cards[0].confidence == 0.99 and len(table.cards) == 12
    assert empty == before[1]
    review.shown(2)  # on to the next photo not checked
    assert review.text("where").startswith("photo 2 of 2 (1 checked)")
    review.page.keyboard.press("Enter")
    assert review.saved(lambda photos: photos[1].checked)[1].cards == ()
    review.page.wait_for_function("() => document.getElementById('status').textContent"
                                  ".includes('all 2 photos checked')")  # fmt: skip


def test_dragging_a_corner_moves_it_and_saves(review: Review) -> None:
    before = review.photos()[0].cards
    x, y = before[4].corners[1]
    page = review.page
    page.mouse.move(*review.at(x, y))
    page.mouse.down()
    start = review.at(x, y)
    page.mouse.move(start[0] + 12, start[1] + 8, steps=4)
    page.mouse.up()
    page.mouse.move(start[0] + 60, start[1] + 60)  # let go: the corner stays
    cards = review.saved(lambda photos: photos[0].cards[4].checked)[0].cards
    scale = review.at(1, 0)[0] - review.at(0, 0)[0]
    moved = cards[4].corners - before[4].corners
    assert np.allclose(moved[1], [12 / scale, 8 / scale], atol=2.5), moved
    assert np.abs(np.delete(moved, 1, axis=0)).max() == 0
    assert cards[4].card == before[4].card and cards[4].confidence == 0.99
    assert cards[:4] == before[:4] and cards[5:] == before[5:]
    assert not review.photos()[0].checked  # one card checked, not the photo


def test_a_corner_let_go_outside_the_picture_ends_the_drag(review: Review) -> None:
    before = review.photos()[0].cards[0]
    page = review.page
    page.mouse.move(*review.at(*before.corners[0]))
    page.mouse.down()
    page.mouse.move(*review.at(before.corners[0][0], -200), steps=3)  # above the picture
    page.mouse.up()
    card = review.saved(lambda photos: photos[0].cards[0].checked)[0].cards[0]
    page.mouse.move(*review.at(800, 600))
    time.sleep(0.2)
    assert review.photos()[0].cards[0] == card  # no longer dragged


def test_a_corner_off_the_photo_can_be_dragged(review: Review, dataset: Path) -> None:
    # A card cut by the photo's edge: its corner lies off the photo, in the margin round it.
    (table, empty) = review.photos()
    card = table.cards[0]
    corners = card.corners - [card.corners[:, 0].min() + 12, 0]  # 12 px off the left edge
    k = int(corners[:, 0].argmin())
    table = replace(table, cards=(replace(card, corners=corners), *table.cards[1:]))
    save_photos(dataset, [table, empty])
    review.page.reload()
    review.shown(1)
    page = review.page
    page.mouse.move(*review.at(*corners[k]))
    page.mouse.down()
    page.mouse.move(*review.at(corners[k][0] + 20, corners[k][1]), steps=3)
    page.mouse.up()
    moved = review.saved(lambda photos: photos[0].cards[0].checked)[0].cards[0].corners
    assert np.allclose(moved[k], corners[k] + [20, 0], atol=2.5), (moved, corners)
    assert np.allclose(np.delete(moved, k, axis=0), np.delete(corners, k, axis=0), atol=0.01)


def test_adding_reading_and_deleting_a_card(review: Review) -> None:
    page = review.page
    page.keyboard.press("ArrowRight")
    review.shown(2)
    page.mouse.move(*review.at(400, 278))
    page.keyboard.press("a")
    (card,) = review.saved(lambda photos: len(photos[1].cards) == 1)[1].cards
    assert card.card is None and card.checked and card.confidence is None
    assert np.allclose(card.corners.mean(axis=0), [400, 278], atol=2)
    assert "card 1: not read" in review.text("card")
    page.keyboard.type("3gst")  # as fast as keys go: every save lands, in order
    (card,) = review.saved(
        lambda photos: (
            photos[1].cards[0].card is not None
            and photos[1].cards[0].card.label == "3 green striped squiggles"
        )
    )[1].cards
    assert card.checked and card.confidence is None and not card.partial
    page.keyboard.press("k")
    assert review.saved(lambda photos: photos[1].cards[0].partial)
    page.keyboard.press("x")
    assert review.saved(lambda photos: photos[1].cards == ())[0] == review.photos()[0]
    assert review.text("card") == ""


def test_attribute_keys_change_the_clicked_card_and_a_reload_shows_them(review: Review) -> None:
    before = review.photos()[0].cards
    page = review.page
    page.mouse.click(*review.at(*before[6].corners.mean(axis=0)))
    assert review.text("card").startswith(f"card 7: {before[6].card.label}")
    page.keyboard.type("2rdek")
    cards = review.saved(lambda photos: photos[0].cards[6].partial)[0].cards
    assert cards[6].card.label == "2 red open diamonds"
    assert cards[6].checked and cards[6].confidence is None
    assert np.array_equal(cards[6].corners, before[6].corners)
    assert cards[:6] == before[:6] and cards[7:] == before[7:]
    page.reload()
    review.shown(1)
    page.keyboard.press("Tab")
    assert review.text("card").startswith(f"card 1: {before[0].card.label}")
    page.keyboard.press("Shift+Tab")  # back round to the last
    assert review.text("card") == "card 12: " + before[11].card.label + " 99%"
    page.mouse.click(*review.at(*before[6].corners.mean(axis=0)))
    assert review.text("card") == "card 7: 2 red open diamonds (partial)"


def test_arrows_go_between_photos_and_the_page_opens_on_one_not_checked(review: Review) -> None:
    page = review.page
    page.keyboard.press("ArrowRight")
    review.shown(2)
    assert page.evaluate("() => [image.naturalWidth, image.naturalHeight]") == [800, 600]
    page.keyboard.press("ArrowRight")  # the last: stays
    review.shown(2)
    page.keyboard.press("ArrowLeft")
    review.shown(1)
    assert page.evaluate("() => [image.naturalWidth, image.naturalHeight]") == [1600, 1200]
    page.keyboard.press("Enter")
    review.saved(lambda photos: photos[0].checked)
    page.reload()
    review.shown(2)  # the first photo not checked
    page.keyboard.press("ArrowLeft")
    review.shown(1)
    assert review.text("state") == "checked"
    page.keyboard.press("u")
    review.saved(lambda photos: not photos[0].checked)
    assert review.text("state") == "not checked"


def test_z_snaps_a_rough_corner_onto_the_card(review: Review) -> None:
    true = review.photos()[0].cards[2].corners
    page = review.page
    start = review.at(*true[2])
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 5, start[1] + 4, steps=2)
    page.mouse.up()
    rough = review.saved(lambda photos: photos[0].cards[2].checked)[0].cards[2].corners
    page.keyboard.press("z")
    snapped = (
        review.saved(lambda photos: not np.array_equal(photos[0].cards[2].corners, rough))[0]
        .cards[2]
        .corners
    )
    assert np.abs(snapped - true).max() < np.abs(rough - true).max()


def test_the_page_serves_no_missing_files(review: Review, tmp_path: Path) -> None:
    # A photo moved away since labelling: the page says so, in one line.
    shutil.move(tmp_path / "empty.jpg", tmp_path / "moved.jpg")
    review.page.keyboard.press("ArrowRight")
    review.page.wait_for_function(
        "() => document.getElementById('status').textContent.startsWith('photo not shown')"
    )
    assert "empty.jpg" in review.text("status")
    review.errors.clear()  # the browser logs the failed image itself
