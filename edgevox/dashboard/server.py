"""The dashboard's web server: one static page, a JSON snapshot, a server-sent-event stream,
a text box and the Stop button, served by starlette on uvicorn from a thread of its own
(the routes are ``routes.py``, a page's stream ``stream.py``, the Stop button's own port
``control.py``).

The Stop button is answered first, whatever the pages do. Nothing a page does can keep the
loop busy or fill what the stop waits on:

* at most ``max_pages`` streams are open (one more gets 503 at once, counted);
* each message is encoded once for all pages (``state.py``), and a page's stream writes
  whatever is queued in one write;
* a page whose queue fills, or whose write is not taken within ``stream.WRITE_TIMEOUT_S`` (a
  client that never reads), is shed: its connection is aborted (counted) - never waited on;
* snapshots and status reads run on the loop's default executor, not on the loop;
* the page's STOP goes to a port and a thread of its own (``control.py``), which the web
  server's loop never delays; ``POST /api/stop`` here stays for scripts, and runs the stop
  (like a typed turn) on a thread of its own per request (``edgevox-dashboard-stop`` /
  ``-say``), so no pool that other work can fill stands between it and the voice loop.

Threads: uvicorn runs its own asyncio loop on ``edgevox-dashboard``; the state's subscriber
thread only queues messages (``dashboard/feed.py``).

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
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

import uvicorn

from edgevox.dashboard.config import DashboardConfig, is_loopback
from edgevox.dashboard.control import ControlListener
from edgevox.dashboard.routes import TOKEN_HEADER, asgi, host_allowed
from edgevox.dashboard.state import DashboardState
from edgevox.dashboard.views import jsonable
from edgevox.errors import ConfigError
from edgevox.runtime.lifecycle import ComponentState, StopReport, component_lifecycle, stop_timeout

if TYPE_CHECKING:
    from edgevox.app import App

log = logging.getLogger(__name__)

LISTEN_BACKLOG = 1024
"""Connections the kernel holds until the loop accepts them: a burst of pages must not leave
the Stop button's connection waiting for a SYN retry (1 s) outside a full queue."""
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
            max_pages=config.max_pages,
        )
        self.token = secrets.token_urlsafe(24)
        """What ``POST /api/stop`` requires in ``X-EdgeVox-Token`` (written into the page)."""
        self.url = ""
        """``http://HOST:PORT/`` once started (the real port when ``port`` is 0)."""
        self.port = 0
        self._life = component_lifecycle("Dashboard", noun="Dashboard")
        self._server: _Server | None = None
        self.control: ControlListener | None = None
        """The Stop button's listener once started (``served``, ``dropped``)."""
        self.stop_port = 0
        """The Stop button's own port (``control.py``), written into the page."""
        self.page_hosts: frozenset[str] = frozenset()
        """Names the page may be reached by (its origins may use the Stop button's port)."""
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._workers: set[threading.Thread] = set()
        self._workers_lock = threading.Lock()
        self._page = resources.files("edgevox").joinpath("data/dashboard.html").read_text(encoding="utf-8")

    @property
    def running(self) -> bool:
        return self._life.state is ComponentState.RUNNING

    @property
    def stop_url(self) -> str:
        """Where the Stop button posts (its own port and thread, ``control.py``); "" until started."""
        return self.url.replace(f":{self.port}/", f":{self.stop_port}/api/stop") if self.stop_port else ""

    def start(self) -> Dashboard:
        """Bind, subscribe and serve (caller's thread returns once the server accepts)."""
        self._life.to(ComponentState.STARTING, "start()")
        try:
            sock = _bind(self.config.host, self.config.port)
            self.port = sock.getsockname()[1]
            host = self.config.host
            shown = f"[{host}]" if ":" in host else host
            self.url = f"http://{shown}:{self.port}/"
            try:
                control_sock = _bind(host, 0)
            except BaseException:
                sock.close()  # not yet handed to the server's thread, which closes it otherwise
                raise
            self.stop_port = control_sock.getsockname()[1]
            self.page_hosts = frozenset({shown, "localhost", "127.0.0.1", "[::1]"})
            self.control = ControlListener(
                control_sock,
                self.safety_stop,
                self._control_guard,
                frozenset(f"http://{name}:{self.port}" for name in self.page_hosts),
            ).start()
            self.state.attach()
            server = self._server = _Server(
                uvicorn.Config(
                    asgi(self),
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
        loop = asyncio.get_running_loop()
        while True:
            status = await loop.run_in_executor(None, self.state.status)
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
        if self.control is not None:
            late = self.control.stop(deadline)
            if late is not None:
                report = StopReport.merge([report, StopReport.abandoned_threads([late.name])])
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            report = StopReport.merge([report, StopReport().join([self._thread], deadline)])
        with self._workers_lock:
            workers = list(self._workers)
        if workers:
            report = StopReport.merge([report, StopReport().join(workers, deadline)])
        self._life.to(ComponentState.STOPPED)
        return report

    def safety_stop(self) -> dict[str, Any]:
        """The Stop button: the voice loop's safety stop (what saying "stop" does)."""
        loop = self.app.loop
        if not loop.running:
            return {"ok": False, "error": "the application is not running"}
        stopped = loop.safety_stop(reason=STOP_REASON)
        return {"ok": True, "stopped": jsonable(stopped.to_dict())}

    def _control_guard(self, client: str, headers: dict[str, str]) -> str:
        """The Stop listener's guard (``control.py``): why a stop is refused, or ""."""
        if not is_loopback(client):
            return "the Stop button answers loopback clients only"
        if not host_allowed(headers.get("host", ""), {"localhost", self.config.host.lower().strip("[]")}):
            return f"Host {headers.get('host', '')!r} refused"
        if not secrets.compare_digest(headers.get(TOKEN_HEADER.lower(), ""), self.token):
            return f"missing or wrong {TOKEN_HEADER} header"
        return ""

    def say(self, text: str) -> dict[str, Any]:
        """The text box: a typed turn, as ``App.submit_text`` (a stop phrase stops at once)."""
        if not self.app.loop.running:
            return {"ok": False, "error": "the application is not running"}
        return {"ok": True, "turn_id": self.app.submit_text(text)}

    async def on_worker(self, name: str, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run ``work`` on a fresh thread ``edgevox-dashboard-NAME`` and await its answer (server
        loop). A thread per request, not a pool: the Stop button never queues behind anything."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()

        def settle(result: dict[str, Any] | None, error: BaseException | None) -> None:
            if answer.done():
                return
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(result or {})

        def run() -> None:
            try:
                result, error = work(), None
            except Exception as exc:  # noqa: BLE001 - handed to the request, which answers 500
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:
                pass  # the server's loop is closed: nobody is waiting
            finally:
                with self._workers_lock:
                    self._workers.discard(threading.current_thread())

        thread = threading.Thread(target=run, name=f"edgevox-dashboard-{name}", daemon=True)
        with self._workers_lock:
            self._workers.add(thread)
        thread.start()
        return await answer


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

    def abort(self, client: Any) -> bool:
        """Cut the connection of ``client`` (the scope's ``(host, port)``) without flushing what
        it has not read (server loop). uvicorn exposes no transport to the application, so this
        looks it up among the server's connections; False if it was not found."""
        wanted = tuple(client) if client else None
        for proto in list(getattr(self.server_state, "connections", ())):
            if wanted is not None and tuple(getattr(proto, "client", None) or ()) == wanted:
                transport = getattr(proto, "transport", None)
                if transport is not None:
                    transport.abort()
                    return True
        return False


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
        sock.listen(LISTEN_BACKLOG)
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


__all__ = ["TOKEN_HEADER", "Dashboard"]
