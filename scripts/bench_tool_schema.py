"""Tool schemas and argument checks: edgevox's own code against pydantic and docstring_parser, in one run.

Prints, for a few tools like the ones robots use (scalars with bounds, Literal, Optional, a
list of dataclasses):

* build: milliseconds to build the schema (``edgevox.agents.tools.build_tool``) against a
  pydantic model made from the signature (``create_model`` + ``model_json_schema``);
* validate: microseconds per call of ``Tool.validate`` against the model's ``model_validate``
  (strict, ``extra="forbid"``, ``allow_inf_nan=False``: the closest pydantic settings);
* verdicts: arguments small models really emit, and where pydantic (strict or lax) decides
  otherwise than edgevox (``True`` as an integer, ``"3"`` as an integer, ``2.0`` as an integer,
  a dict for a dataclass, ``typing.TypedDict`` on Python < 3.12);
* docstrings: microseconds per parse, the old hand-written Google-only parser (from git,
  ``--baseline-rev``) against ``docstring_parser`` (Google, NumPy, reST), and what each reads
  from a NumPy and a reST docstring.

    python scripts/bench_tool_schema.py [--baseline-rev 92f1400]
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import subprocess
import sys
import time
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from pydantic import ConfigDict, Field, ValidationError, create_model

from edgevox.agents.tool_schema import parse_docstring
from edgevox.agents.tools import build_tool
from edgevox.errors import ToolArgumentError

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass
class Pose:
    """A pose.

    Args:
        x: metres east
        y: metres north
    """

    x: float
    y: float
    frame: Literal["map", "odom"] = "map"


class Box(TypedDict):
    width: float
    label: str


def move(distance_m: Annotated[float, Field(ge=-5, le=5)], speed: float = 0.5) -> str:
    """Drive straight.

    Args:
        distance_m: Distance in metres, negative is backwards.
        speed: Metres per second (0.1-1.0).
    """
    return "ok"


def turn(direction: Literal["left", "right"], degrees: int = 90) -> str:
    """Turn in place.

    Args:
        direction: Which way.
        degrees: How far, 1 to 360.
    """
    return "ok"


def plan(waypoints: list[Pose], mode: Literal["fast", "safe"] = "safe", speed: float | None = None) -> str:
    """Plan a path through waypoints."""
    return "ok"


def pack(box: Box) -> str:
    """Pack a box."""
    return "ok"


STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
LAX = ConfigDict(extra="forbid", allow_inf_nan=False)


def model_for(func: Any, config: ConfigDict) -> Any:
    hints = typing.get_type_hints(func, include_extras=True)
    fields = {
        name: (hints[name], ... if p.default is inspect.Parameter.empty else p.default)
        for name, p in inspect.signature(func).parameters.items()
    }
    return create_model(func.__name__, __config__=config, **fields)


def per_call(fn: Any, n: int) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def verdict(check: Any) -> str:
    try:
        out = check()
    except (ToolArgumentError, ValidationError) as exc:
        if isinstance(exc, ValidationError):
            return f"rejected ({exc.errors()[0]['type']})"
        return "rejected"
    except Exception as exc:  # noqa: BLE001 - a build error is a verdict too
        return f"error {type(exc).__name__}"
    return f"accepted -> {out!r}"[:60]


def load_old_parser(rev: str) -> Any:
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:edgevox/agents/tool_schema.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("old_tool_schema")
    exec(compile(source, f"{rev}:tool_schema.py", "exec"), module.__dict__)  # noqa: S102 - our own file from git
    return module.parse_docstring


NUMPY_DOC = """Move.

Parameters
----------
distance_m : float
    Distance in metres, -5 to 5.
speed : float, optional
    Metres per second.
"""
REST_DOC = """Move.

:param distance_m: Distance in metres, -5 to 5.
:param speed: Metres per second.
:returns: what happened
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-rev", default="92f1400", help="git revision holding the hand-written docstring parser")
    args = ap.parse_args(argv)

    print("build (ms per tool)             edgevox   pydantic   pydantic/edgevox")
    for func in (move, turn, plan):
        ours = per_call(lambda f=func: build_tool(f), 200) * 1e3
        theirs = per_call(lambda f=func: model_for(f, STRICT).model_json_schema(), 50) * 1e3
        print(f"  {func.__name__:28s} {ours:9.3f} {theirs:10.3f} {theirs / ours:12.1f}x")

    print("\nvalidate (us per call)          edgevox   pydantic   pydantic/edgevox")
    # (edgevox's arguments: JSON as the model wrote it; pydantic strict's: a Pose, which strict
    # Python mode wants instead of a dict)
    calls = [
        (move, {"distance_m": 1.5}, {"distance_m": 1.5}),
        (turn, {"direction": "left", "degrees": 45}, {"direction": "left", "degrees": 45}),
        (plan, {"waypoints": [{"x": 1.0, "y": 2.0}], "mode": "fast"}, {"waypoints": [Pose(1.0, 2.0)], "mode": "fast"}),
    ]
    for func, ours_arguments, arguments in calls:
        t, m = build_tool(func), model_for(func, STRICT)
        ours = per_call(lambda t=t, a=ours_arguments: t.validate(a), 5000) * 1e6
        theirs = per_call(lambda m=m, a=arguments: m.model_validate(a), 5000) * 1e6
        print(f"  {func.__name__:28s} {ours:9.2f} {theirs:10.2f} {theirs / ours:12.2f}x")

    print("\nverdicts on what small models emit   edgevox | pydantic strict | pydantic lax")
    cases: list[tuple[str, Any, dict[str, Any]]] = [
        ("degrees=true", turn, {"direction": "left", "degrees": True}),
        ("degrees='45'", turn, {"direction": "left", "degrees": "45"}),
        ("degrees=45.0", turn, {"direction": "left", "degrees": 45.0}),
        ("distance_m=nan", move, {"distance_m": float("nan")}),
        ("distance_m=7 (le=5)", move, {"distance_m": 7}),
        ("waypoints=[{x,y}] (a dict)", plan, {"waypoints": [{"x": 1, "y": 2}]}),
        ("unknown key", move, {"distance_m": 1, "fast": True}),
    ]
    for label, func, arguments in cases:
        t = build_tool(func)
        cols = [verdict(lambda t=t, a=arguments: t.validate(dict(a)))]
        for config in (STRICT, LAX):
            cols.append(
                verdict(lambda c=config, f=func, a=arguments: model_for(f, c).model_validate(dict(a)).model_dump())
            )
        print(f"  {label:28s} " + " | ".join(cols))
    print(
        f"  {'typing.TypedDict parameter':28s} "
        + verdict(lambda: build_tool(pack).name)
        + " | "
        + verdict(lambda: model_for(pack, STRICT))
    )

    old = load_old_parser(args.baseline_rev)
    google = inspect.getdoc(move) or ""
    print("\ndocstrings (us per parse)       old        docstring_parser")
    for label, doc in (("Google", google), ("NumPy", NUMPY_DOC), ("reST", REST_DOC)):
        a = per_call(lambda d=doc: old(d), 2000) * 1e6
        b = per_call(lambda d=doc: parse_docstring(d), 2000) * 1e6
        print(f"  {label:28s} {a:9.1f} {b:12.1f}")
        print(f"      old reads {old(doc)}")
        print(f"      new reads {parse_docstring(doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
