"""The Stop button's own listener: a port and a thread that serve nothing but the safety stop.

The page posts its STOP here (``stop_url`` in the page), not to the web server, so the stop
never waits behind what the web server's loop is doing: 300 pages connecting at once (each
accepted, parsed and answered on the loop, ~0.5 ms apiece on a 2-core robot) put a stop
sent to the same loop 150-500 ms behind them. Here one thread, ``edgevox-dashboard-control``,
waits in ``select`` on this port alone and runs the stop itself.

What it answers, and nothing else::

    OPTIONS /api/stop   the browser's CORS preflight: allowed for the dashboard page's origin only
    POST    /api/stop   the safety stop, with the same guard as the web server's route
                        (loopback client, the page's token, the page's origin, a known Host)

Bounded: at most ``MAX_CONNECTIONS`` connections at once (the oldest is dropped for a new
one), a request head of at most ``MAX_HEAD_BYTES``, ``REQUEST_TIMEOUT_S`` to send it; the
answer is a few hundred bytes, written once (a client that does not take it is dropped).

Rejected alternative: a priority route inside the web server - every route there is served
by the one loop the flood keeps busy.
"""

from __future__ import annotations

import json
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 32
MAX_HEAD_BYTES = 8192
REQUEST_TIMEOUT_S = 2.0
STOP_PATH = "/api/stop"

Guard = Callable[[str, dict[str, str]], str]
"""``(client address, headers with lower-case names) -> ""`` if allowed, else why not."""


class ControlListener:
    """The Stop button's listener (module docstring). ``start()`` binds, ``stop(timeout_s)``
    closes and joins; ``port`` is the port it listens on."""

    def __init__(
        self, sock: socket.socket, stop: Callable[[], dict[str, Any]], guard: Guard, origins: frozenset[str]
    ) -> None:
        self._sock = sock
        self._stop = stop
        self._guard = guard
        self.origins = origins
        """The origins allowed to send the stop cross-origin: the dashboard page's."""
        self.port: int = sock.getsockname()[1]
        self.served = 0
        """Stops answered (any status)."""
        self.dropped = 0
        """Connections dropped: too many, too slow, too large, or not taking the answer."""
        self._selector = selectors.DefaultSelector()
        self._conns: dict[socket.socket, tuple[float, bytearray]] = {}
        self._wake_r, self._wake_w = socket.socketpair()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="edgevox-dashboard-control", daemon=True)

    def start(self) -> ControlListener:
        self._sock.setblocking(False)
        self._selector.register(self._sock, selectors.EVENT_READ)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._thread.start()
        return self

    def stop(self, deadline: float) -> threading.Thread | None:
        """Close the listener; the thread if it did not end by ``deadline`` (monotonic)."""
        self._closing = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        if self._thread.is_alive():
            self._thread.join(max(0.0, deadline - time.monotonic()))
        return self._thread if self._thread.is_alive() else None

    # --- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._closing:
                for key, _ in self._selector.select(self._next_timeout()):
                    sock = key.fileobj
                    if sock is self._sock:
                        self._accept()
                    elif sock is self._wake_r:
                        pass
                    else:
                        assert isinstance(sock, socket.socket)
                        self._read(sock)
                self._expire()
        finally:
            for conn in list(self._conns):
                self._drop(conn, counted=False)
            self._selector.close()
            for sock in (self._sock, self._wake_r, self._wake_w):
                sock.close()

    def _next_timeout(self) -> float | None:
        if not self._conns:
            return None
        first = min(started for started, _ in self._conns.values())
        return max(0.0, first + REQUEST_TIMEOUT_S - time.monotonic())

    def _accept(self) -> None:
        try:
            conn, _addr = self._sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        if len(self._conns) >= MAX_CONNECTIONS:
            oldest = min(self._conns, key=lambda c: self._conns[c][0])
            self._drop(oldest)
        conn.setblocking(False)
        self._conns[conn] = (time.monotonic(), bytearray())
        self._selector.register(conn, selectors.EVENT_READ)

    def _expire(self) -> None:
        now = time.monotonic()
        for conn, (started, _) in list(self._conns.items()):
            if now - started > REQUEST_TIMEOUT_S:
                self._drop(conn)

    def _drop(self, conn: socket.socket, *, counted: bool = True) -> None:
        self._conns.pop(conn, None)
        try:
            self._selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()
        self.dropped += counted

    def _read(self, conn: socket.socket) -> None:
        try:
            data = conn.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return
        buf = self._conns[conn][1]
        buf += data
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > MAX_HEAD_BYTES:
                self._drop(conn)
            return
        self._conns.pop(conn, None)
        self._selector.unregister(conn)
        try:
            status, headers, body = self._answer(conn, bytes(buf[:end]))
        except Exception as exc:  # noqa: BLE001 - one bad request must not end the Stop button
            log.exception("dashboard: the stop listener failed on a request")
            status, headers, body = 500, {}, {"ok": False, "error": f"internal error: {exc!r}"}
        self._respond(conn, status, headers, body)

    def _answer(self, conn: socket.socket, head: bytes) -> tuple[int, dict[str, str], dict[str, Any] | None]:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return 400, {}, {"ok": False, "error": "not an HTTP request"}
        method, path, _version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if path.split("?", 1)[0] != STOP_PATH:
            return 404, {}, {"ok": False, "error": f"this port serves {STOP_PATH} only"}
        origin = headers.get("origin")
        cors = {"Access-Control-Allow-Origin": origin, "Vary": "Origin"} if origin in self.origins else {}
        if method == "OPTIONS":
            if not cors:
                return 403, {}, {"ok": False, "error": "cross-origin request refused"}
            allow = {"Access-Control-Allow-Methods": "POST", "Access-Control-Allow-Headers": "X-EdgeVox-Token"}
            return 204, {**cors, **allow, "Access-Control-Max-Age": "600"}, None
        if method != "POST":
            return 405, {"Allow": "POST, OPTIONS"}, {"ok": False, "error": f"{method} {STOP_PATH}: use POST"}
        if origin is not None and not cors:
            return 403, {}, {"ok": False, "error": "cross-origin request refused"}
        try:
            client = conn.getpeername()[0]
        except OSError:
            client = ""
        refused = self._guard(client, headers)
        if refused:
            return 403, cors, {"ok": False, "error": refused}
        self.served += 1
        result = self._stop()
        return (200 if result.get("ok") else 409), cors, result

    def _respond(self, conn: socket.socket, status: int, headers: dict[str, str], body: dict[str, Any] | None) -> None:
        payload = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", "Connection: close", "Cache-Control: no-store"]
        if body is not None:
            head.append("Content-Type: application/json")
        head.append(f"Content-Length: {len(payload)}")
        head += [f"{k}: {v}" for k, v in headers.items()]
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload
        try:
            sent = conn.send(data)  # a few hundred bytes: fits any socket buffer at once
            if sent < len(data):
                self.dropped += 1
        except OSError:
            self.dropped += 1
        finally:
            conn.close()


_REASONS = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    421: "Misdirected Request",
    500: "Internal Server Error",
}

__all__ = ["STOP_PATH", "ControlListener"]
