"""The dashboard's web server: one static page, a JSON snapshot, a server-sent-event stream
and the Stop button, served by starlette on uvicorn from a thread of its own.

Routes::

    GET  /             the page (edgevox/data/dashboard.html: plain JavaScript, inline SVG/CSS)
    GET  /api/state    everything the page shows, as JSON (DashboardState.snapshot)
    GET  /api/events   text/event-stream: a snapshot first, then event/turn/skill/status messages
    POST /api/stop     the safety stop (VoiceLoop.safety_stop, what saying "stop" does)

Threads: uvicorn runs its own asyncio loop on ``edgevox-dashboard``; the safety stop runs
on that loop's default executor (it waits up to 0.1 s for cancelled work to end). The
state's subscriber thread only queues messages (``dashboard/feed.py``).

Security: loopback by default (``dashboard.allow_remote`` is needed for anything else, and
a warning is logged). Every request's ``Host`` must be an IP address, ``localhost`` or the
configured host, so a web page on another site cannot reach the server through DNS
rebinding. ``POST /api/stop`` answers loopback clients only and needs the
``X-EdgeVox-Token`` header holding the token written into the page: another site's page
can neither read that token nor send a custom header without a CORS preflight, which this
server never grants.

Rejected alternative: ``http.server`` from the standard library - one thread per open
stream, and no clean way to end those streams at shutdown.
"""

from __future__ import annotations

import asyncio
import errno
import html
import ipaddress
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator
from importlib import resources
from typing import TYPE_CHECKING, Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from edgevox.dashboard.config import DashboardConfig, is_loopback
from edgevox.dashboard.feed import ClientFeed
from edgevox.dashboard.state import DashboardState
from edgevox.dashboard.views import jsonable
from edgevox.errors import ConfigError
from edgevox.runtime.lifecycle import ComponentState, StopReport, component_lifecycle, stop_timeout

if TYPE_CHECKING:
    from edgevox.app import App

log = logging.getLogger(__name__)

TOKEN_HEADER = "X-EdgeVox-Token"
HEARTBEAT_S = 15.0
"""A comment line on an idle stream this often, so a closed page is noticed."""
START_TIMEOUT_S = 10.0
STOP_REASON = "stop button on the dashboard"


class Dashboard:
    """The live dashboard of one :class:`~edgevox.app.App` (which owns it: ``app.dashboard``).

    ``start()`` binds the port (a busy port is a :class:`~edgevox.errors.ConfigError` naming
    ``dashboard.port``), subscribes to the bus and serves; ``url`` is then where to look.
    ``stop(timeout_s)`` ends every open page's stream, stops the server, joins its thread and
    returns a :class:`StopReport`.
    """

    def __init__(self, config: DashboardConfig, app: App) -> None:
        self.config = config
        self.app = app
        self.state = DashboardState(
            app,
            max_events=config.max_events,
            max_turns=config.max_turns,
            max_skills=config.max_skills,
            client_queue=config.client_queue,
            bus_queue=config.bus_queue,
        )
        self.token = secrets.token_urlsafe(24)
        """What ``POST /api/stop`` requires in ``X-EdgeVox-Token`` (written into the page)."""
        self.url = ""
        """``http://HOST:PORT/`` once started (the real port when ``port`` is 0)."""
        self.port = 0
        self._life = component_lifecycle("Dashboard", noun="Dashboard")
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._page = resources.files("edgevox").joinpath("data/dashboard.html").read_text(encoding="utf-8")

    @property
    def running(self) -> bool:
        return self._life.state is ComponentState.RUNNING

    def start(self) -> Dashboard:
        """Bind, subscribe and serve (caller's thread returns once the server accepts)."""
        self._life.to(ComponentState.STARTING, "start()")
        try:
            sock = _bind(self.config.host, self.config.port)
            self.port = sock.getsockname()[1]
            host = self.config.host
            shown = f"[{host}]" if ":" in host else host
            self.url = f"http://{shown}:{self.port}/"
            self.state.attach()
            server = self._server = _Server(
                uvicorn.Config(
                    _asgi(self),
                    log_config=None,
                    log_level=None,
                    access_log=False,
                    lifespan="off",
                    loop="asyncio",
                    http="h11",
                    ws="none",
                    timeout_graceful_shutdown=1,
                )
            )
            server.poll = self._poll_status
            self._thread = threading.Thread(target=self._serve, args=(sock,), name="edgevox-dashboard", daemon=True)
            self._thread.start()
            if not server.ready.wait(START_TIMEOUT_S) or self._failure is not None:
                raise ConfigError(
                    f"dashboard: the web server did not start on {self.url} ({self._failure!r}); "
                    "check dashboard.host and dashboard.port"
                )
        except BaseException:
            self._life.to(ComponentState.FAILED)
            self.stop(2.0)
            raise
        self._life.to(ComponentState.RUNNING)
        if not is_loopback(self.config.host):
            log.warning("dashboard: serving on %s, reachable from the network (dashboard.allow_remote)", self.url)
        log.info("dashboard: %s", self.url)
        return self

    def _serve(self, sock: socket.socket) -> None:
        assert self._server is not None
        try:
            self._server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - reported by start() or stop(), never lost
            self._failure = exc
        finally:
            sock.close()
            self._server.ready.set()  # a start() still waiting learns it failed

    async def _poll_status(self) -> None:
        """Send the polled status to every page when it changed (server loop)."""
        last = ""
        while True:
            status = self.state.status()
            text = json.dumps(status, sort_keys=True)
            if text != last:
                last = text
                self.state.broadcast({"type": "status", "status": status})
            await asyncio.sleep(self.config.refresh_s)

    def stop(self, timeout_s: float | None = None, *, timeout: float | None = None) -> StopReport:
        """End the pages' streams, stop the server, join its thread; the report names what is left."""
        deadline = time.monotonic() + stop_timeout(timeout_s, timeout, 2.0)
        if not self._life.to_if(
            ComponentState.STOPPING, ComponentState.NEW, ComponentState.RUNNING, ComponentState.FAILED
        ):
            return StopReport()
        report = self.state.close(max(0.05, deadline - time.monotonic()))
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            report = StopReport.merge([report, StopReport().join([self._thread], deadline)])
        self._life.to(ComponentState.STOPPED)
        return report

    def safety_stop(self) -> dict[str, Any]:
        """The Stop button: the voice loop's safety stop (what saying "stop" does)."""
        loop = self.app.loop
        if not loop.running:
            return {"ok": False, "error": "the application is not running"}
        stopped = loop.safety_stop(reason=STOP_REASON)
        return {"ok": True, "stopped": jsonable(stopped.to_dict())}


class _Server(uvicorn.Server):
    """uvicorn's server, saying when it accepts and running the status poll beside it."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.poll: Any = None
        self._poll_task: asyncio.Task[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.poll is not None:
            self._poll_task = asyncio.get_running_loop().create_task(self.poll())
        self.ready.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._poll_task is not None:
            self._poll_task.cancel()
        await super().shutdown(sockets=sockets)


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or one ConfigError naming the key and the fix."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ConfigError(
            f"dashboard.host = {host}: cannot resolve it ({exc}); give an address such as 127.0.0.1"
        ) from None
    family, _type, _proto, _name, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(64)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"dashboard.port = {port}: already in use on {host}; choose another port (--dashboard-port), "
                "or 0 for any free one"
            ) from None
        raise ConfigError(f"dashboard: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.setblocking(False)
    return sock


# --- the ASGI application ---------------------------------------------------------------------


def _asgi(dash: Dashboard) -> ASGIApp:
    page = dash._page.replace("{{TOKEN}}", dash.token).replace("{{NAME}}", html.escape(dash.app.config.name))

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=_PAGE_HEADERS)

    async def state(request: Request) -> Response:
        return JSONResponse(dash.state.snapshot(), headers={"Cache-Control": "no-store"})

    async def events(request: Request) -> Response:
        return StreamingResponse(
            _stream(dash.state),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def stop(request: Request) -> Response:
        client = request.client.host if request.client is not None else ""
        if not is_loopback(client):
            return JSONResponse({"ok": False, "error": "the Stop button answers loopback clients only"}, 403)
        if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), dash.token):
            return JSONResponse({"ok": False, "error": f"missing or wrong {TOKEN_HEADER} header"}, 403)
        origin = request.headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host", ""):
            return JSONResponse({"ok": False, "error": "cross-origin request refused"}, 403)
        result = await asyncio.get_running_loop().run_in_executor(None, dash.safety_stop)
        return JSONResponse(result, 200 if result["ok"] else 409)

    routes = [
        Route("/", index),
        Route("/api/state", state),
        Route("/api/events", events),
        Route("/api/stop", stop, methods=["POST"]),
    ]
    return _HostCheck(Starlette(routes=routes), dash.config.host)


_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


async def _stream(state: DashboardState) -> AsyncIterator[str]:
    """One page's server-sent events: its snapshot, then every message (server loop)."""
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()

    def wake() -> None:  # any thread; at most one pending call per feed (feed.py)
        try:
            loop.call_soon_threadsafe(ready.set)
        except RuntimeError:
            pass  # the loop is closed: the stream is over anyway

    feed: ClientFeed = state.connect(wake)
    try:
        yield "retry: 1000\n\n"
        while True:
            ready.clear()
            messages, overflowed = feed.take()
            if overflowed:
                state.resync(feed)
                continue
            for message in messages:
                yield f"data: {json.dumps(message, separators=(',', ':'))}\n\n"
            if feed.closed and not messages:
                return
            if not messages:
                try:
                    await asyncio.wait_for(ready.wait(), HEARTBEAT_S)
                except asyncio.TimeoutError:
                    yield ": ping\n\n"
    finally:
        state.disconnect(feed)


class _HostCheck:
    """Refuse requests whose ``Host`` is a name other than ``localhost`` or the configured host
    (DNS rebinding: a page on another site that resolves its own name to this machine)."""

    def __init__(self, app: ASGIApp, host: str) -> None:
        self.app = app
        self.allowed = {"localhost", host.lower().strip("[]")}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not self._allowed(host):
                await JSONResponse({"ok": False, "error": f"Host {host!r} refused"}, 421)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _allowed(self, host: str) -> bool:
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        name = name.lower().strip("[]")
        if name in self.allowed:
            return True
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return False


__all__ = ["TOKEN_HEADER", "Dashboard"]
