"""The dashboard's web server, through real HTTP on 127.0.0.1 (urllib): the page, the snapshot,
the event stream, the Stop button's guard and the safety stop it runs, and its lifecycle in
the App (a busy port, open streams at shutdown) and on the command line."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from edgevox.cli.main import main
from edgevox.config.loader import parse_config
from edgevox.dashboard.server import TOKEN_HEADER
from edgevox.errors import ConfigError
from edgevox.voice.events import Stopped

from ..cli.conftest import write_config
from .conftest import TEXT_APP, home_robot, text_app

DASH = "dashboard: {enabled: true, port: 0}\n"
REPO = Path(__file__).resolve().parents[2]


def request(url: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, Any, bytes]:
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


class Stream:
    """The page's server-sent events, read line by line (socket timeout 5 s)."""

    def __init__(self, url: str) -> None:
        self.resp = urllib.request.urlopen(url + "api/events", timeout=5)
        assert self.resp.headers["Content-Type"].startswith("text/event-stream")

    def next(self) -> dict[str, Any]:
        while True:
            line = self.resp.readline()
            assert line, "the stream ended"
            if line.startswith(b"data: "):
                return json.loads(line[6:])

    def until(self, predicate) -> dict[str, Any]:
        while True:
            message = self.next()
            if predicate(message):
                return message

    def close(self) -> None:
        self.resp.close()


def test_the_page_the_snapshot_and_the_stream_are_served_and_a_turn_streams_live(running):
    app = text_app(DASH)
    running(app)
    url = app.dashboard.url
    assert url.startswith("http://127.0.0.1:") and app.dashboard.port > 0

    status, headers, body = request(url)
    page = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert f'content="{app.dashboard.token}"' in page and "dash-test" in page
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert "<script src" not in page and "https://" not in page and "@import" not in page  # works offline

    status, _, body = request(url + "api/state")
    assert status == 200 and json.loads(body)["type"] == "snapshot"

    stream = Stream(url)
    try:
        assert stream.next()["type"] == "snapshot"  # a page gets the present first, then what changes
        turn_id = app.submit_text("hello robot")
        done = stream.until(lambda m: m["type"] == "turn" and m["turn"]["status"] == "completed")["turn"]
    finally:
        stream.close()
    assert done["turn_id"] == turn_id and done["user"] == "hello robot" and done["reply"] == "Hello."
    assert {"transcript", "first_token", "first_chunk"} <= set(done["marks"])


def test_a_page_that_closes_is_forgotten_and_the_other_pages_see_it(running):
    app = text_app(DASH)
    running(app)

    def pages_open(n: int):
        return lambda m: m["type"] == "status" and m["status"]["pages"]["open"] == n

    first, second = Stream(app.dashboard.url), Stream(app.dashboard.url)
    try:
        second.until(pages_open(2))
        first.close()  # the browser tab is closed: its queue must not live on
        second.until(pages_open(1))
    finally:
        first.close()
        second.close()


def test_the_stop_endpoint_runs_the_safety_stop_only_for_the_pages_token_and_origin(running):
    app = home_robot(**{"dashboard.enabled": True, "dashboard.port": 0})
    events = running(app)
    url = app.dashboard.url + "api/stop"
    app.submit_text("go to the kitchen")
    assert app.wait_idle(5.0)
    (goal,) = app.runtime.activities.running("skill")

    refused = [
        request(url, method="POST"),
        request(url, method="POST", headers={TOKEN_HEADER: "guessed"}),
        request(url, method="POST", headers={TOKEN_HEADER: app.dashboard.token, "Origin": "http://evil.example"}),
        request(url, method="POST", headers={TOKEN_HEADER: app.dashboard.token, "Host": "evil.example"}),
        request(app.dashboard.url + "api/stop", headers={TOKEN_HEADER: app.dashboard.token}),  # GET
    ]
    assert [status for status, _, _ in refused] == [403, 403, 403, 421, 405]
    assert not goal.done and not [e for e in events if isinstance(e, Stopped)]

    status, _, body = request(url, method="POST", headers={TOKEN_HEADER: app.dashboard.token})
    answer = json.loads(body)
    assert status == 200 and answer["ok"] and "skill go_to" in answer["stopped"]["cancelled"]
    assert goal.wait(1.0) and app.runtime.activities.running("skill") == []
    (stopped,) = [e for e in events if isinstance(e, Stopped)]
    assert stopped.reason == "stop button on the dashboard"  # the same safety stop as a spoken "stop"
    assert app.wait_idle(5.0)


def test_a_busy_port_is_one_config_error_naming_the_key_and_the_app_cleans_up():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        app = text_app(f"dashboard: {{enabled: true, port: {port}}}\n")
        with pytest.raises(ConfigError, match=rf"dashboard.port = {port}: already in use.*0 for any free one"):
            app.start()
    assert app.stop(2.0)  # nothing left running (the thread-leak guard checks too)


def test_stopping_the_app_ends_open_streams_and_reports_the_dashboard_clean():
    app = text_app(DASH)
    app.start()
    stream = Stream(app.dashboard.url)
    try:
        assert stream.next()["type"] == "snapshot"
        report = app.stop(3.0)
        stream.resp.read()  # to the end: the server ended the stream (a hang would time out)
        assert stream.resp.isclosed()
    finally:
        stream.close()
    assert report and report.parts["dashboard"].clean
    with pytest.raises((urllib.error.URLError, http.client.HTTPException, OSError)):
        urllib.request.urlopen(app.dashboard.url, timeout=2)


def test_a_non_loopback_host_is_refused_at_load_unless_allowed():
    with pytest.raises(ConfigError, match=r"dashboard.host = 0.0.0.0: not a loopback address.*allow_remote: true"):
        parse_config(TEXT_APP + "dashboard: {host: 0.0.0.0}\n", env={})
    assert parse_config(TEXT_APP + "dashboard: {host: 0.0.0.0, allow_remote: true}\n", env={}).dashboard.allow_remote
    with pytest.raises(ConfigError, match=r"dashboard.port"):
        parse_config(TEXT_APP + "dashboard: {port: 70000}\n", env={})


@pytest.mark.parametrize("command", ["run", "console"])
def test_the_commands_serve_the_dashboard_and_print_its_url(command: str, tmp_path: Path, capsys):
    config = write_config(tmp_path)
    assert main([command, str(config), "--say", "hi", "--json", "--dashboard-port", "0"]) == 0
    captured = capsys.readouterr()
    assert "dashboard: http://127.0.0.1:" in captured.err
    assert all(json.loads(line) for line in captured.out.splitlines())  # stdout stays JSON lines


@pytest.mark.slow
def test_a_running_edgevox_process_serves_its_conversation_live(tmp_path: Path):
    config = write_config(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = [sys.executable, "-m", "edgevox", "run", str(config), "--text", "--json", "--dashboard-port", "0"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stderr is not None and proc.stdin is not None
        lines = []
        for line in proc.stderr:  # the URL is printed once the server accepts
            lines.append(line)
            if line.startswith("dashboard: "):
                break
        else:
            pytest.fail(f"no dashboard URL printed: {''.join(lines)}")
        url = line.split(" ", 1)[1].strip()
        stream = Stream(url)
        try:
            assert stream.next()["type"] == "snapshot"
            proc.stdin.write("hello there\n")
            proc.stdin.flush()
            done = stream.until(lambda m: m["type"] == "turn" and m["turn"]["status"] == "completed")["turn"]
        finally:
            stream.close()
        assert done["user"] == "hello there" and done["reply"] == "Hello from the robot. How can I help?"
        proc.stdin.close()  # end of input: the run ends, and the dashboard with it
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
