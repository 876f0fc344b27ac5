"""The live web dashboard: ``edgevox run CONFIG --dashboard`` (``docs/dashboard.md``).

``config.py`` (the ``dashboard:`` section), ``state.py`` (what the panels show, collected
from the App's bus), ``views.py`` (JSON views of the App's parts), ``feed.py`` (one open
page's bounded queue), ``server.py`` (starlette on uvicorn, on a thread of its own),
``routes.py`` (its routes and their guards), ``stream.py`` (one page's event stream) and
``control.py`` (the Stop button's own port and thread). The page itself is
``edgevox/data/dashboard.html``: plain JavaScript, inline CSS and SVG, no build step.

The App owns its dashboard (``app.dashboard``, made by :func:`make_dashboard` when
``dashboard.enabled``); starlette and uvicorn (the ``dashboard`` extra) are imported only
by ``server.py``, so importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edgevox.dashboard.config import DashboardConfig
from edgevox.errors import MissingDependencyError

if TYPE_CHECKING:
    from edgevox.app import App
    from edgevox.dashboard.server import Dashboard


def make_dashboard(config: DashboardConfig, app: App) -> Dashboard:
    """The dashboard of ``app`` (not started); MissingDependencyError without the extra."""
    try:
        from edgevox.dashboard.server import Dashboard
    except ImportError as exc:
        if exc.name in ("starlette", "uvicorn") or (exc.name or "").startswith(("starlette.", "uvicorn.")):
            raise MissingDependencyError(
                (exc.name or "starlette").split(".")[0], "dashboard", "the web dashboard"
            ) from None
        raise
    return Dashboard(config, app)


__all__ = ["DashboardConfig", "make_dashboard"]
