"""JSON views of the App's parts for the dashboard page: events as log rows, the supervision
tree, background agents, the blackboard, and any value made safe for the browser's JSON.

Pure functions, stdlib only; each reads its part at the moment it is called (any thread).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from edgevox.runtime.events import Event

if TYPE_CHECKING:
    from edgevox.app import App

_ENVELOPE = ("kind", "source", "session_id", "timestamp", "seq")
MAX_TEXT = 400
"""Longest string the page gets (event fields, blackboard values); longer ones are cut."""
MAX_ITEMS = 50
"""Most list items or mapping keys of one value the page gets."""
MAX_KEYS = 200
"""Most blackboard keys the page gets."""


def jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON the browser can parse: strings cut at :data:`MAX_TEXT`, containers at
    :data:`MAX_ITEMS`, NaN and infinities as strings, anything else as its ``repr``."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"
    if depth >= 6:
        return jsonable(repr(value), depth)
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {str(k): jsonable(v, depth + 1) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            out["…"] = f"{len(items) - MAX_ITEMS} more"
        return out
    if isinstance(value, (list, tuple, set, frozenset, deque)):
        seq = list(value)
        out_list = [jsonable(v, depth + 1) for v in seq[:MAX_ITEMS]]
        if len(seq) > MAX_ITEMS:
            out_list.append(f"… {len(seq) - MAX_ITEMS} more")
        return out_list
    if hasattr(value, "to_dict"):
        try:
            return jsonable(value.to_dict(), depth + 1)
        except Exception:  # noqa: BLE001 - a broken to_dict is shown as its repr
            pass
    return jsonable(repr(value), depth)


def log_entry(event: Event) -> dict[str, Any]:
    """One row of the event panel: envelope, the event's own fields and a one-line summary."""
    data = event.to_dict()
    fields = {k: jsonable(v) for k, v in data.items() if k not in _ENVELOPE}
    shown = [f"{k}={_short(k, v)}" for k, v in fields.items() if v not in ("", None, [], {}, False)]
    return {
        "seq": event.seq,
        "kind": event.kind,
        "ts": event.timestamp,
        "source": event.source,
        "summary": " ".join(shown)[:MAX_TEXT],
        "fields": fields,
    }


def _short(key: str, value: Any) -> str:
    if isinstance(value, float) and not isinstance(value, bool):
        text = readable_number(key, value)
    else:
        text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


EPOCH_AFTER = 1e9
"""A ``*_at``/``*time*``/``timestamp`` float above this is a wall-clock time (after 2001)."""


def readable_number(key: str, value: float) -> str:
    """A float as people read it: a duration (``*_s``) as ``6 ms`` / ``2.40 s``, a wall-clock
    time as ``21:03:07``, anything else with at most 4 significant digits."""
    if not math.isfinite(value):
        return str(value)
    if key.endswith("_s"):
        return duration(value)
    if (key == "timestamp" or key.endswith("_at") or "time" in key) and value > EPOCH_AFTER:
        return time.strftime("%H:%M:%S", time.localtime(value))
    return f"{value:.4g}"


def duration(seconds: float) -> str:
    """``0.0063`` -> ``6.3 ms``, ``2.4`` -> ``2.40 s``, ``95`` -> ``1 min 35 s``."""
    if seconds < 0.001:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1000:.3g} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def _state_name(value: Any) -> str:
    return str(getattr(value, "value", value))


def supervision_tree(app: App) -> dict[str, Any]:
    sup = app.runtime.supervisor
    children: list[dict[str, Any]] = [
        {"name": "voice loop", "kind": "voice", "state": "running" if app.loop.running else "stopped"},
        {
            "name": f"supervisor {sup.name}",
            "kind": "supervisor",
            "state": _state_name(sup.state),
            "restarts": sup.restart_count,
            "strategy": sup.strategy,
            "children": [
                {"name": c.name, "kind": c.kind, "state": c.state, "restarts": c.restart_count}
                for c in sup.which_children()
            ],
        },
    ]
    for name, bridge in app.bridges:
        running = getattr(bridge, "running", None)
        state = "running" if running is True else "stopped" if running is False else "unknown"
        children.append({"name": f"bridge {name}", "kind": "bridge", "state": state})
    if app.delivery is not None:
        waiting = app.delivery.strategy.pending
        children.append({"name": f"delivery ({waiting} waiting)", "kind": "worker", "state": _state_name(app.state)})
    return {"name": f"App {app.config.name}", "kind": "app", "state": _state_name(app.state), "children": children}


def background_row(bg: Any) -> dict[str, Any]:
    return {
        "name": bg.name,
        "state": _state_name(bg.state),
        "queued": bg.queued,
        "max_queue": bg.max_queue,
        "dropped": bg.dropped_events,
        "stream_dropped": bg.dropped_stream_events,
        "runs": bg.runs,
        "restarts": bg.restart_count,
        "last_error": repr(bg.last_error) if getattr(bg, "last_error", None) else "",
    }


def blackboard_view(app: App) -> dict[str, Any]:
    if app.blackboard.closed:
        return {}
    values = app.blackboard.snapshot()
    keys = sorted(values)[:MAX_KEYS]
    return {k: jsonable(values[k]) for k in keys}


__all__ = [
    "background_row",
    "blackboard_view",
    "fleet_rows",
    "duration",
    "jsonable",
    "log_entry",
    "readable_number",
    "supervision_tree",
]


def fleet_rows(bridges: Iterable[tuple[str, Any]], now: float | None = None) -> list[dict[str, Any]]:
    """The robots a Zenoh bridge hears (its inventory, ``ZenohBridge.robots()``), one row each:
    id, namespace, present or left, seconds since last heard, the goals it runs."""
    from edgevox.integrations.zenoh_fleet import FleetPeer

    now = time.monotonic() if now is None else now
    rows = []
    for name, bridge in bridges:
        robots = getattr(bridge, "robots", None)
        for peer in robots() if callable(robots) else ():
            if isinstance(peer, FleetPeer):
                rows.append(
                    {
                        "bridge": name,
                        "id": peer.bridge_id,
                        "namespace": peer.namespace,
                        "present": peer.present,
                        "heard_s": round(now - peer.last_heard_at, 1),
                        "goals": list(peer.goals),
                    }
                )
    return rows


def bridge_losses(bridges: Iterable[tuple[str, Any]]) -> dict[str, dict[str, int]]:
    """Per bridge (``zenoh``, ``ros2``...), what it lost, dropped or refused for load and how often
    (:data:`~edgevox.integrations.limits.LOSSES` that are not zero); bridges without counters are left out."""
    from edgevox.integrations.limits import BridgeCounters

    out: dict[str, dict[str, int]] = {}
    for name, bridge in bridges:
        counters = getattr(bridge, "counters", None)
        if isinstance(counters, BridgeCounters):
            out[name] = counters.losses()
    return out
