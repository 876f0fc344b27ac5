from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, Optional, TypedDict

import pytest

from edgevox.agents.tools import ToolBox, parse_docstring, tool
from edgevox.errors import ToolArgumentError
from edgevox.runtime.context import AgentContext


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


@tool
def move(distance_m: float) -> str:
    """Drive straight.

    Args:
        distance_m: Distance in metres,
            negative is backwards.
    """
    return f"moved {distance_m}"


@tool
def plan(
    waypoints: list[Pose],
    mode: Literal["fast", "safe"] = "safe",
    speed: Optional[float] = None,  # noqa: UP045 - testing the Optional spelling on purpose
    box: Box | None = None,
    tags: Annotated[list[str], "free labels"] = (),
    count: int = 1,
    ctx: AgentContext | None = None,
) -> list[Pose]:
    """Plan a path through waypoints."""
    return waypoints


def test_schema_from_hints_and_google_docstring():
    assert move.name == "move"
    assert move.description == "Drive straight."
    assert move.parameters == {
        "type": "object",
        "properties": {"distance_m": {"type": "number", "description": "Distance in metres, negative is backwards."}},
        "required": ["distance_m"],
        "additionalProperties": False,
    }


def test_schema_literal_default_optional_nested_array_and_ctx_hidden():
    props = plan.parameters["properties"]
    assert plan.required == ["waypoints"]
    assert "ctx" not in props and plan.context_param == "ctx"
    assert props["mode"] == {"type": "string", "enum": ["fast", "safe"], "default": "safe"}
    assert props["speed"] == {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None}
    item = props["waypoints"]["items"]
    assert item["type"] == "object" and item["required"] == ["x", "y"]
    assert item["properties"]["frame"] == {"type": "string", "enum": ["map", "odom"], "default": "map"}
    assert item["properties"]["x"]["description"] == "metres east"
    assert props["box"]["anyOf"][0]["required"] == ["width", "label"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "description": "free labels", "default": []}
    assert props["count"] == {"type": "integer", "default": 1}


def test_validation_fills_defaults_and_builds_dataclasses():
    args = plan.validate({"waypoints": [{"x": 1, "y": 2.5}]})
    assert args["waypoints"] == [Pose(1, 2.5, "map")]
    assert args["mode"] == "safe" and args["count"] == 1 and args["speed"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"distance_m": "far"}, "tool 'move' argument 'distance_m': expected number, got 'far'"),
        ({"distance_m": True}, "tool 'move' argument 'distance_m': expected number, got true"),
        ({"distance_m": 1, "speed": 2}, "tool 'move': unknown argument 'speed' (known: distance_m)"),
        ({}, "tool 'move': missing required argument 'distance_m' (number)"),
    ],
)
def test_strict_validation_names_tool_argument_expected_and_got(args, message):
    with pytest.raises(ToolArgumentError) as info:
        move.validate(args)
    assert str(info.value) == message
    assert info.value.tool == "move"


def test_bool_is_not_an_integer_and_enum_is_checked_in_nested_values():
    with pytest.raises(ToolArgumentError, match=r"argument 'count': expected integer, got true"):
        plan.validate({"waypoints": [], "count": True})
    with pytest.raises(
        ToolArgumentError, match=r"argument 'waypoints\[0\].frame': expected one of 'map', 'odom', got 'gps'"
    ):
        plan.validate({"waypoints": [{"x": 1, "y": 2, "frame": "gps"}]})
    with pytest.raises(ToolArgumentError, match=r"unknown argument 'waypoints\[0\].z'"):
        plan.validate({"waypoints": [{"x": 1, "y": 2, "z": 0}]})
    with pytest.raises(ToolArgumentError, match=r"argument 'mode': expected one of 'fast', 'safe', got 'turbo'"):
        plan.validate({"waypoints": [], "mode": "turbo"})
    assert plan.validate({"waypoints": [], "count": 2.0})["count"] == 2


def test_exception_inside_tool_is_a_tool_failure_not_bad_arguments():
    @tool
    def explode(n: int) -> int:
        """Raise a TypeError from inside the tool."""
        return len(n)  # type: ignore[arg-type]

    failed = explode.invoke({"n": 3})
    assert not failed.ok and failed.error_kind == "execution"
    assert "tool 'explode' failed: TypeError" in failed.error
    bad = explode.invoke({"n": "3"})
    assert not bad.ok and bad.error_kind == "arguments"
    assert bad.error == "tool 'explode' argument 'n': expected integer, got '3'"


def test_context_is_injected_into_tools_that_ask_for_it():
    @tool
    def whoami(ctx: AgentContext) -> str:
        """Name of the running agent."""
        return ctx.agent_name

    assert whoami.parameters["properties"] == {}
    assert whoami.invoke({}, AgentContext(agent_name="robot")).value == "robot"


def test_google_docstring_sections_and_toolbox_rejects_duplicates():
    summary, args = parse_docstring(
        "Do it.\n\nArgs:\n    a (int): first\n        more\n    b: second\n\nReturns:\n    x\n"
    )
    assert summary == "Do it." and args == {"a": "first more", "b": "second"}
    with pytest.raises(ValueError, match="two tools are named 'move'"):
        ToolBox([move, move])
