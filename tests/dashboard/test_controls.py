"""The page's controls and the server's bounds, through real sockets on 127.0.0.1: the Stop
button's own listener (its CORS preflight and guard), the text box (``POST /api/say``), the
cap on open streams, and a client that never reads being cut off."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

from edgevox.dashboard.server import TOKEN_HEADER
from edgevox.runtime.events import AgentEvent
from edgevox.voice.events import Stopped, TranscriptEvent

from .conftest import home_robot, text_app

DASH = "dashboard: {enabled: true, port: 0}\n"


def call(port: int, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, Any, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, body=body or None, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, resp.headers, json.loads(data) if data else None
    finally:
        conn.close()


def test_the_stop_listener_grants_the_preflight_to_the_page_only_and_guards_the_stop(running):
    app = home_robot(**{"dashboard.enabled": True, "dashboard.port": 0})
    events = running(app)
    dash = app.dashboard
    assert dash is not None and dash.stop_port not in (0, dash.port)
    assert dash.stop_url == f"http://127.0.0.1:{dash.stop_port}/api/stop"
    page = dash.url.rstrip("/")
    preflight = {
        "Origin": page,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": TOKEN_HEADER,
    }

    status, headers, _ = call(dash.stop_port, "OPTIONS", "/api/stop", preflight)
    assert status == 204 and headers["Access-Control-Allow-Origin"] == page
    assert headers["Access-Control-Allow-Headers"] == TOKEN_HEADER
    status, headers, answer = call(
        dash.stop_port, "OPTIONS", "/api/stop", {**preflight, "Origin": "http://evil.example"}
    )
    assert (
        status == 403
        and "Access-Control-Allow-Origin" not in headers
        and answer["error"] == "cross-origin request refused"
    )

    app.submit_text("go to the kitchen")
    assert app.wait_idle(5.0)
    (goal,) = app.runtime.activities.running("skill")
    token = {TOKEN_HEADER: dash.token}
    refused = [
        call(dash.stop_port, "POST", "/api/stop", {}),
        call(dash.stop_port, "POST", "/api/stop", {TOKEN_HEADER: "guessed"}),
        call(dash.stop_port, "POST", "/api/stop", {**token, "Origin": "http://evil.example"}),
        call(dash.stop_port, "POST", "/api/stop", {**token, "Host": "evil.example"}),
        call(dash.stop_port, "GET", "/api/stop", token),
        call(dash.stop_port, "POST", "/api/state", token),
    ]
    assert [(status, answer["error"]) for status, _, answer in refused] == [
        (403, f"missing or wrong {TOKEN_HEADER} header"),
        (403, f"missing or wrong {TOKEN_HEADER} header"),
        (403, "cross-origin request refused"),
        (403, "Host 'evil.example' refused"),
        (405, "GET /api/stop: use POST"),
        (404, "this port serves /api/stop only"),
    ]
    assert not goal.done and not [e for e in events if isinstance(e, Stopped)]

    status, headers, answer = call(dash.stop_port, "POST", "/api/stop", {**token, "Origin": page})
    assert status == 200 and answer["ok"] and "skill go_to" in answer["stopped"]["cancelled"]
    assert headers["Access-Control-Allow-Origin"] == page  # the page may read the answer
    assert goal.wait(1.0) and app.runtime.activities.running("skill") == []
    assert dash.control is not None and dash.control.served == 1  # the refused ones ran no stop


def test_a_request_that_never_finishes_does_not_hold_the_stop_listener(running):
    app = home_robot(**{"dashboard.enabled": True, "dashboard.port": 0})
    running(app)
    dash = app.dashboard
    assert dash is not None
    with socket.create_connection(("127.0.0.1", dash.stop_port)) as stuck:
        stuck.sendall(b"POST /api/stop HTTP/1.1\r\n")  # and never the rest
        status, _, answer = call(dash.stop_port, "POST", "/api/stop", {TOKEN_HEADER: dash.token})
        assert status == 200 and answer["ok"]


def test_the_text_box_sends_a_typed_turn_and_bad_input_gets_one_clear_line(running):
    app = text_app(DASH)
    events = running(app)
    dash = app.dashboard
    assert dash is not None
    token = {TOKEN_HEADER: dash.token, "Content-Type": "application/json"}

    status, _, answer = call(dash.port, "POST", "/api/say", token, json.dumps({"text": "hello robot"}).encode())
    assert status == 200 and answer["ok"] and answer["turn_id"] >= 1
    assert app.wait_idle(5.0)
    (typed,) = [e for e in events if isinstance(e, TranscriptEvent)]
    assert typed.text == "hello robot" and typed.turn_id == answer["turn_id"]

    bad = [
        call(dash.port, "POST", "/api/say", token, b"hello"),
        call(dash.port, "POST", "/api/say", token, json.dumps({"text": 3}).encode()),
        call(dash.port, "POST", "/api/say", token, json.dumps({"text": "  "}).encode()),
        call(dash.port, "POST", "/api/say", token, json.dumps({"text": "x" * 2001}).encode()),
        call(dash.port, "POST", "/api/say", {}, json.dumps({"text": "hi"}).encode()),
        call(dash.port, "POST", "/api/say", {**token, "Origin": "http://evil.example"}, b'{"text": "hi"}'),
    ]
    assert [(status, answer["error"]) for status, _, answer in bad] == [
        (400, 'send JSON {"text": "what to say to the robot"}'),
        (400, 'send JSON {"text": "what to say to the robot"}'),
        (400, "the text is empty: type what to say to the robot"),
        (413, "the text has 2001 characters: at most 2000"),
        (403, f"missing or wrong {TOKEN_HEADER} header"),
        (403, "cross-origin request refused"),
    ]
    assert len([e for e in events if isinstance(e, TranscriptEvent)]) == 1


def open_stream(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return sock


def read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"closed before the head: {data!r}"
        data += chunk
    return data.split(b"\r\n", 1)[0]


def test_one_page_more_than_max_pages_is_refused_with_503(running):
    app = text_app("dashboard: {enabled: true, port: 0, max_pages: 2}\n")
    running(app)
    dash = app.dashboard
    assert dash is not None
    pages = [open_stream(dash.port) for _ in range(2)]
    try:
        assert [read_head(p) for p in pages] == [b"HTTP/1.1 200 OK"] * 2
        status, _, answer = call(dash.port, "GET", "/api/events", {})
        assert status == 503 and answer["error"] == "2 pages are open already (dashboard.max_pages); close one"
        assert dash.state.status()["pages"]["refused"] == 1
    finally:
        for p in pages:
            p.close()


def test_a_client_that_never_reads_is_cut_off_and_counted(running):
    app = text_app("dashboard: {enabled: true, port: 0, client_queue: 10}\n")
    running(app)
    dash = app.dashboard
    assert dash is not None
    silent = socket.socket()
    silent.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    silent.connect(("127.0.0.1", dash.port))
    silent.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{dash.port}\r\n\r\n".encode())
    silent.settimeout(10)
    try:
        # its feed holds 10 messages: more than that while it does not read cut it off
        for _ in range(100_000):
            if dash.state.status()["pages"]["shed"]:
                break
            app.bus.publish(AgentEvent("robot.tick", {"blob": "x" * 300}))
        received = b""
        while True:  # the server aborted it: what it still had comes, then the end (or a reset)
            try:
                chunk = silent.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
        assert received.startswith(b"HTTP/1.1 200 OK")
        pages = dash.state.status()["pages"]
        assert pages["shed"] == 1 and pages["open"] == 0 and pages["dropped"] >= 10
    finally:
        silent.close()
