"""The review page of ``setvision label review``: a local web page over a dataset folder.

Served by the standard library (:mod:`http.server`) on 127.0.0.1 only. The page
(``review.html``, package data) shows each photo with its cards, and saves every change at once
through this JSON API:

=====================================  ===================================================
``GET /``                               the page
``GET /api/photos``                     ``{"photos": [PHOTO, ...]}`` in the dataset's order
``GET /api/photos/N/image``             photo N as displayed (EXIF orientation applied), JPEG
``POST /api/photos/N``                  PHOTO: replaces photo N (its ``file`` must match);
                                        answers ``{"photo": PHOTO}`` as saved
``POST /api/photos/N/snap``             ``{"corners"}``: the card's sides snapped onto the
                                        paper edges nearby (:func:`vision.dataset.snap.snap_quad`)
=====================================  ===================================================

PHOTO is ``{"file", "width", "height", "checked", "note", "cards": [{"corners": [[x, y] x 4],
"count", "colour", "shape", "fill" (all null for a card not read), "partial", "confidence",
"checked"}]}``. Saves go through :func:`vision.dataset.store.update_photos` (whole files, under
the folder's lock). Errors answer ``{"error": "one line"}`` with status 400 or 404 (415 for a
body that is not ``application/json``).
"""

from __future__ import annotations

import json
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Final

from vision.dataset.records import (
    LabelledCard,
    LabelledPhoto,
    card_attributes,
    card_from_attributes,
)
from vision.dataset.store import load_photos, photo_path, update_photos
from vision.errors import SetVisionError

__all__ = ["DEFAULT_PORT", "card_json", "make_server", "photo_from_json", "photo_json"]

#: The port the review page is served on unless told (``--port``); 0 picks a free one.
DEFAULT_PORT: Final = 8736
#: The largest request body taken (a photo of a few hundred cards is some 100 kB).
MAX_BODY: Final = 4_000_000
#: JPEG quality of the photos sent to the page.
JPEG_QUALITY: Final = 90

_PHOTO: Final = re.compile(r"^/api/photos/(\d+)(/image|/snap)?$")


def card_json(card: LabelledCard) -> dict[str, Any]:
    """One card as the page sees it (attributes null when not read)."""
    attributes = card_attributes(card.card) or dict.fromkeys(("count", "colour", "shape", "fill"))
    return {
        "corners": card.corners.tolist(),
        **attributes,
        "partial": card.partial,
        "confidence": card.confidence,
        "checked": card.checked,
    }


def photo_json(photo: LabelledPhoto) -> dict[str, Any]:
    """One photo as the page sees it."""
    return {
        "file": photo.file,
        "width": photo.width,
        "height": photo.height,
        "checked": photo.checked,
        "note": photo.note,
        "cards": [card_json(c) for c in photo.cards],
    }


def photo_from_json(data: Any, old: LabelledPhoto) -> LabelledPhoto:
    """The photo the page sent, in place of ``old`` (its file and size are kept).

    Raises:
        ValueError: the data is not a photo of the page's shape, or names another file.
    """
    if not isinstance(data, dict) or not isinstance(data.get("cards"), list):
        raise ValueError("expected a photo: an object with a 'cards' list")
    if data.get("file", old.file) != old.file:
        raise ValueError(f"photo {data.get('file')!r} is not {old.file!r} (reload the page)")
    cards = []
    for n, item in enumerate(data["cards"], start=1):
        try:
            confidence = item.get("confidence")
            cards.append(
                LabelledCard(
                    corners=item["corners"],
                    card=card_from_attributes(item),
                    partial=bool(item.get("partial", False)),
                    confidence=None if confidence is None else float(confidence),
                    checked=bool(item.get("checked", False)),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            what = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise ValueError(f"card {n}: {what}") from None
    return LabelledPhoto(
        file=old.file,
        width=old.width,
        height=old.height,
        cards=tuple(cards),
        checked=bool(data.get("checked", False)),
        note=str(data.get("note", old.note)),
    )


class _Handler(BaseHTTPRequestHandler):
    server: _ReviewServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the page's requests are not the user's business."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path in ("/", "/index.html"):
            page = resources.files("vision.dataset").joinpath("review.html").read_bytes()
            self._send(HTTPStatus.OK, page, "text/html; charset=utf-8")
        elif self.path == "/api/photos":
            photos = self.server.photos()
            self._json(HTTPStatus.OK, {"photos": [photo_json(p) for p in photos]})
        elif (found := _PHOTO.match(self.path)) and found.group(2) == "/image":
            self._image(int(found.group(1)))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {self.path}"})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        found = _PHOTO.match(self.path)
        if not found or found.group(2) == "/image":
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {self.path}"})
            return
        # Only JSON (a type browsers ask about before sending it across sites), so that another
        # web page open in the browser cannot post a form to this one and change the dataset.
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "expected application/json"})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            if not 0 < length <= MAX_BODY:
                raise ValueError(f"expected a JSON body of 1 to {MAX_BODY} bytes, got {length}")
            body = json.loads(self.rfile.read(length))
            index = int(found.group(1))
            if found.group(2) == "/snap":
                self._json(HTTPStatus.OK, {"corners": self.server.snap(index, body)})
            else:
                self._json(HTTPStatus.OK, {"photo": photo_json(self.server.save(index, body))})
        except IndexError as error:
            self._json(HTTPStatus.NOT_FOUND, {"error": str(error)})
        except (ValueError, SetVisionError, OSError) as error:  # JSONDecodeError is one
            self._json(HTTPStatus.BAD_REQUEST, {"error": " ".join(str(error).split())})

    def _image(self, index: int) -> None:
        import cv2

        try:
            frame = self.server.frame(index)
        except IndexError as error:
            self._json(HTTPStatus.NOT_FOUND, {"error": str(error)})
            return
        except (SetVisionError, ValueError, OSError) as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": " ".join(str(error).split())})
            return
        _, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        self._send(HTTPStatus.OK, data.tobytes(), "image/jpeg")

    def _json(self, status: HTTPStatus, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: HTTPStatus, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


class _ReviewServer(ThreadingHTTPServer):
    """The HTTP server and the dataset folder it serves."""

    daemon_threads = True

    def __init__(self, folder: Path, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.folder = folder
        self.lock = threading.Lock()

    def photos(self) -> list[LabelledPhoto]:
        with self.lock:
            return load_photos(self.folder)

    def _photo(self, photos: list[LabelledPhoto], index: int) -> LabelledPhoto:
        if not 0 <= index < len(photos):
            raise IndexError(f"no photo {index}: the dataset has {len(photos)}")
        return photos[index]

    def frame(self, index: int) -> Any:
        from vision.io import load_image

        photo = self._photo(self.photos(), index)
        return load_image(photo_path(self.folder, photo.file))

    def save(self, index: int, data: Any) -> LabelledPhoto:
        saved: list[LabelledPhoto] = []

        def change(photos: list[LabelledPhoto]) -> list[LabelledPhoto]:
            new = photo_from_json(data, self._photo(photos, index))
            photos[index] = new
            saved.append(new)
            return photos

        with self.lock:
            update_photos(self.folder, change)
        return saved[0]

    def snap(self, index: int, data: Any) -> list[list[float]]:
        import numpy as np

        from vision.dataset.records import portrait_order
        from vision.dataset.snap import snap_quad

        if not isinstance(data, dict):
            raise ValueError("expected {'corners': [[x, y] x 4]}")
        corners = portrait_order(data.get("corners", []))
        snapped = snap_quad(self.frame(index), corners)
        return portrait_order(np.asarray(snapped)).tolist()


def make_server(folder: Path, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> _ReviewServer:
    """The review server of the dataset in ``folder``, bound but not yet serving (call
    ``serve_forever``; ``server_address`` says the port when ``port`` is 0).

    Raises:
        OSError: the port is taken.
    """
    return _ReviewServer(folder, (host, port))
