"""Showing the live overlay: a window where OpenCV was built with HighGUI, or a local web page.

setvision depends on the headless OpenCV build (no window system needed), so the default view
is a web page served on this machine (``http://127.0.0.1:8765/``: the annotated picture as an
MJPEG stream, which every browser shows in an ``<img>``, and buttons). With the full OpenCV
build installed instead (``pip install opencv-python``), ``--view window`` opens a window.

Both give the same controls (:class:`Controls`): quit (``q`` or Esc), pause (space), save
the current frame as a photo (``s``) and, for the referee, undo its last event (``u``).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import SetVisionError

__all__ = ["DEFAULT_PORT", "Controls", "View", "WebView", "WindowView", "has_highgui"]

#: Port of the web view (8765: unassigned by IANA, clear of the usual 8000 and 8080).
DEFAULT_PORT: Final = 8765
#: JPEG quality of the web view's frames (the view, not the saved photos).
STREAM_QUALITY: Final = 80
#: Longest side of the web view's frames, pixels (a 4K camera is shown at 1280).
STREAM_LONG_SIDE: Final = 1280


@dataclass
class Controls:
    """What the person watching asked for; set by a view, read by the frame loop.

    Attributes:
        quit: stop now.
        paused: hold the current frame.
        save: save the current frame as a photo (cleared when done).
        undo: take back the referee's last event (cleared when done).
    """

    quit: bool = False
    paused: bool = False
    save: bool = False
    undo: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def press(self, key: str) -> None:
        """Act on a key: ``q``/Esc quit, space pause or go on, ``s`` save, ``u`` undo (the
        referee's last event)."""
        with self._lock:
            if key in ("q", "Q", "\x1b", "quit"):
                self.quit = True
            elif key in (" ", "pause"):
                self.paused = not self.paused
            elif key in ("s", "S", "save"):
                self.save = True
            elif key in ("u", "U", "undo"):
                self.undo = True


class View:
    """Shows frames; a view that shows nothing (``--no-window``)."""

    def show(self, image: npt.NDArray[np.uint8], state: dict[str, Any]) -> None:
        """Show an annotated frame and its JSON state."""

    def wait(self, seconds: float) -> None:
        """Let the view handle input for ``seconds`` (while paused)."""
        threading.Event().wait(seconds)

    def close(self) -> None:
        """Close the window or stop the server (idempotent)."""


def has_highgui() -> bool:
    """Whether this OpenCV build can open windows: its build information names a GUI backend
    (``GUI: NONE`` in the headless build)."""
    for line in cv2.getBuildInformation().splitlines():
        name, _, value = line.strip().partition(":")
        if name == "GUI":
            return value.strip().upper() not in ("", "NONE", "NO")
    return False


class WindowView(View):
    """An OpenCV HighGUI window (needs the full OpenCV build)."""

    def __init__(self, controls: Controls, title: str = "setvision live") -> None:
        if not has_highgui():
            raise SetVisionError(
                "this OpenCV build has no windows (opencv-python-headless): use the web view "
                "(--view web, the default) or install opencv-python"
            )
        self.controls = controls
        self.title = title
        try:
            cv2.namedWindow(title, cv2.WINDOW_NORMAL)
        except cv2.error as error:  # no display (ssh without X): said in one line
            raise SetVisionError(f"could not open a window: {error.err}") from None

    def show(self, image: npt.NDArray[np.uint8], state: dict[str, Any]) -> None:
        cv2.imshow(self.title, image)
        self._keys(1)

    def wait(self, seconds: float) -> None:
        self._keys(max(1, int(seconds * 1000)))

    def _keys(self, ms: int) -> None:
        key = cv2.waitKey(ms)
        if key >= 0:
            self.controls.press(chr(key & 0xFF))
        with contextlib.suppress(cv2.error):
            if cv2.getWindowProperty(self.title, cv2.WND_PROP_VISIBLE) < 1:
                self.controls.press("quit")  # the window was closed

    def close(self) -> None:
        with contextlib.suppress(cv2.error):
            cv2.destroyWindow(self.title)


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>setvision live</title>
<style>
body { background: #202020; color: #eee; font: 15px system-ui, sans-serif; margin: 0; }
header { display: flex; gap: .6em; align-items: center; padding: .5em 1em; }
button { font: inherit; padding: .3em .9em; }
#status { margin-left: auto; }
img { display: block; max-width: 100vw; max-height: calc(100vh - 3em); margin: 0 auto; }
</style></head>
<body>
<header>
<button id="pause" title="space">Pause</button>
<button id="save" title="s">Save frame</button>
<button id="undo" title="u">Undo</button>
<button id="quit" title="q">Quit</button>
<span id="status"></span>
</header>
<img id="view" src="/stream.mjpg" alt="the table, annotated">
<script>
async function send(what) {
  const r = await fetch("/control/" + what, {method: "POST"});
  const s = await r.json();
  document.getElementById("pause").textContent = s.paused ? "Go on" : "Pause";
  if (s.quit) document.getElementById("status").textContent = "stopped";
}
for (const what of ["pause", "save", "undo", "quit"])
  document.getElementById(what).onclick = () => send(what);
document.addEventListener("keydown", (e) => {
  const what = {" ": "pause", "s": "save", "u": "undo", "q": "quit", "Escape": "quit"}[e.key];
  if (what) { e.preventDefault(); send(what); }
});
setInterval(async () => {
  try {
    const s = await (await fetch("/state.json")).json();
    const n = s.cards ? s.cards.length : 0;
    document.getElementById("status").textContent =
      `frame ${s.frame ?? "-"}: ${n} cards, ${s.sets ? s.sets.length : 0} SETs` +
      (s.hand ? ", hand over the table" : "");
  } catch (e) { document.getElementById("status").textContent = "stopped"; }
}, 500);
</script>
</body></html>
"""


class WebView(View):
    """A local web page showing the annotated stream, with buttons and keys.

    Args:
        controls: where presses go.
        port: TCP port on 127.0.0.1 (0: any free port; :attr:`url` says which).
        host: address to serve on (``0.0.0.0`` to watch from another device on the network).

    Raises:
        SetVisionError: if the port is taken.
    """

    def __init__(self, controls: Controls, port: int = DEFAULT_PORT, host: str = "127.0.0.1"):
        self.controls = controls
        self._frame = threading.Condition()
        self._jpeg: bytes | None = None
        self._state: dict[str, Any] = {}
        self._count = 0
        self._closed = False
        view = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # no request log on the terminal

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", _PAGE.encode())
                elif self.path == "/state.json":
                    with view._frame:
                        body = json.dumps(view._state).encode()
                    self._send(200, "application/json", body)
                elif self.path == "/frame.jpg":
                    with view._frame:
                        jpeg = view._jpeg
                    if jpeg is None:
                        self._send(503, "text/plain", b"no frame yet")
                    else:
                        self._send(200, "image/jpeg", jpeg)
                elif self.path == "/stream.mjpg":
                    self._stream()
                else:
                    self._send(404, "text/plain", b"not found")

            def do_POST(self) -> None:  # noqa: N802
                what = self.path.removeprefix("/control/")
                if what not in ("pause", "save", "undo", "quit"):
                    self._send(404, "text/plain", b"not found")
                    return
                view.controls.press(what)
                c = view.controls
                body = {"paused": c.paused, "quit": c.quit, "save": c.save, "undo": c.undo}
                self._send(200, "application/json", json.dumps(body).encode())

            def _send(self, code: int, kind: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def _stream(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                seen = -1
                with contextlib.suppress(OSError):  # the browser went away
                    while True:
                        with view._frame:
                            view._frame.wait_for(
                                lambda last=seen: view._closed or view._count != last,
                                timeout=1.0,
                            )
                            if view._closed:
                                return
                            jpeg, seen = view._jpeg, view._count
                        if jpeg is None:
                            continue
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n")
                        self.wfile.write(f"Content-Length: {len(jpeg)}\r\n\r\n".encode())
                        self.wfile.write(jpeg + b"\r\n")

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        try:
            self._server = Server((host, port), Handler)
        except OSError as error:
            raise SetVisionError(
                f"the web view could not listen on {host}:{port} ({error.strerror or error}): "
                "give another --port"
            ) from None
        self.url = f"http://{host}:{self._server.server_address[1]}/"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="setvision-web", daemon=True
        )
        self._thread.start()

    def show(self, image: npt.NDArray[np.uint8], state: dict[str, Any]) -> None:
        h, w = image.shape[:2]
        f = STREAM_LONG_SIDE / max(h, w)
        if f < 1:
            image = cv2.resize(image, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA)
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, STREAM_QUALITY])
        with self._frame:
            if ok:
                self._jpeg = data.tobytes()
            self._state = state
            self._count += 1
            self._frame.notify_all()

    def close(self) -> None:
        with self._frame:
            if self._closed:
                return
            self._closed = True
            self._frame.notify_all()
        self._server.shutdown()
        self._server.server_close()
