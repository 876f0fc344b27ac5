"""The dashboard's HTTP routes and their guards (the web server is ``server.py``).

::

    GET  /             the page (edgevox/data/dashboard.html: plain JavaScript, inline SVG/CSS)
    GET  /api/state    everything the page shows, as JSON (DashboardState.snapshot)
    GET  /api/events   text/event-stream: a snapshot first, then event/turn/skill/status messages
    POST /api/say      a typed turn, ``{"text": ...}`` (App.submit_text: the stop check first)
    POST /api/stop     the safety stop, for scripts (the page uses its own port: ``control.py``)

Guards: every request's ``Host`` must be an IP address, ``localhost`` or the configured host
(DNS rebinding); ``/api/say`` and ``/api/stop`` answer loopback clients only, with the page's
token in ``X-EdgeVox-Token``, from the page's own origin. Bad input gets one line saying what
to send.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import json
import secrets
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from edgevox.dashboard.config import is_loopback
from edgevox.dashboard.stream import EventStream

if TYPE_CHECKING:
    from edgevox.dashboard.server import Dashboard

TOKEN_HEADER = "X-EdgeVox-Token"
MAX_SAY_CHARS = 2000
"""Longest typed turn ``POST /api/say`` accepts."""


def asgi(dash: Dashboard) -> ASGIApp:
    """The application ``dash`` serves: its routes behind the Host check."""
    page = (
        dash._page.replace("{{TOKEN}}", dash.token)
        .replace("{{NAME}}", html.escape(dash.app.config.name))
        .replace("{{STOP_PORT}}", str(dash.stop_port))
    )
    # Chromium refuses IPv6 literals in a CSP source list: such a page falls back to /api/stop
    stop_origins = sorted(f"http://{name}:{dash.stop_port}" for name in dash.page_hosts if not name.startswith("["))
    page_headers = _page_headers(stop_origins)

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=page_headers)

    async def state(request: Request) -> Response:
        snap = await asyncio.get_running_loop().run_in_executor(None, dash.state.snapshot)
        return JSONResponse(snap, headers={"Cache-Control": "no-store"})

    async def stop(request: Request) -> Response:
        refused = _refuse_control(request, dash.token, "the Stop button")
        if refused is not None:
            return refused
        result = await dash.on_worker("stop", dash.safety_stop)
        return JSONResponse(result, 200 if result["ok"] else 409)

    async def say(request: Request) -> Response:
        refused = _refuse_control(request, dash.token, "the text box")
        if refused is not None:
            return refused
        body = await request.body()
        try:
            text = json.loads(body).get("text") if body else None
        except (ValueError, AttributeError):
            text = None
        if not isinstance(text, str):
            return JSONResponse({"ok": False, "error": 'send JSON {"text": "what to say to the robot"}'}, 400)
        if not text.strip():
            return JSONResponse({"ok": False, "error": "the text is empty: type what to say to the robot"}, 400)
        if len(text) > MAX_SAY_CHARS:
            return JSONResponse(
                {"ok": False, "error": f"the text has {len(text)} characters: at most {MAX_SAY_CHARS}"}, 413
            )
        result = await dash.on_worker("say", lambda: dash.say(text))
        return JSONResponse(result, 200 if result["ok"] else 409)

    routes = [
        Route("/", index),
        Route("/api/state", state),
        Route("/api/events", EventStream(dash.state, lambda client: dash._server and dash._server.abort(client))),
        Route("/api/say", say, methods=["POST"]),
        Route("/api/stop", stop, methods=["POST"]),
    ]
    return _HostCheck(Starlette(routes=routes), dash.config.host)


def _page_headers(stop_origins: list[str]) -> dict[str, str]:
    """The page's headers: a Content-Security-Policy allowing only itself, and the Stop
    button's own port (``stop_origins``) for ``fetch``."""
    return {
        "Cache-Control": "no-store",
        "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        f"img-src 'self' data:; connect-src 'self' {' '.join(stop_origins)}; frame-ancestors 'none'",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
    }


def _refuse_control(request: Request, token: str, what: str) -> Response | None:
    """The guard of the page's controls (Stop, text box): loopback, the page's token, same origin."""
    client = request.client.host if request.client is not None else ""
    if not is_loopback(client):
        return JSONResponse({"ok": False, "error": f"{what} answers loopback clients only"}, 403)
    if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), token):
        return JSONResponse({"ok": False, "error": f"missing or wrong {TOKEN_HEADER} header"}, 403)
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host", ""):
        return JSONResponse({"ok": False, "error": "cross-origin request refused"}, 403)
    return None


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
        return host_allowed(host, self.allowed)


def host_allowed(host: str, allowed: set[str]) -> bool:
    """Whether a request's ``Host`` is an IP address or one of ``allowed`` (a port may follow)."""
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    name = name.lower().strip("[]")
    if name in allowed:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


__all__ = ["MAX_SAY_CHARS", "TOKEN_HEADER", "asgi", "host_allowed"]
