from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, Optional, TypedDict

import annotated_types as at
import pytest
from pydantic import Field

from edgevox.agents.tool_schema import parse_docstring
from edgevox.agents.tools import ToolBox, tool
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


@pytest.mark.parametrize(
    "doc",
    [
        "Drive.\n\nParameters\n----------\ndistance_m : float\n    Distance in metres,\n    -5 to 5.\n",
        "Drive.\n\n:param distance_m: Distance in metres,\n    -5 to 5.\n:returns: what happened\n",
        "Drive.\n\nArgs:\n    distance_m (float): Distance in metres,\n        -5 to 5.\n",
    ],
    ids=["numpy", "rest", "google"],
)
def test_numpy_rest_and_google_docstrings_describe_and_bound_the_parameters(doc):
    def drive(distance_m: float) -> str:
        return "ok"

    drive.__doc__ = doc
    built = ToolBox([drive]).get("drive")
    assert built is not None and built.description == "Drive."
    assert built.parameters["properties"]["distance_m"] == {
        "type": "number",
        "description": "Distance in metres, -5 to 5.",
        "minimum": -5,
        "maximum": 5,
    }
    assert built.invoke({"distance_m": 6}).error == (
        "tool 'drive' argument 'distance_m': expected a number <= 5 (maximum), got 6"
    )


# --- values that reach actuators: finite numbers and bounds -------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinities_are_rejected_with_a_tool_error(bad):
    result = move.invoke({"distance_m": bad})
    assert not result.ok and result.error_kind == "arguments"
    assert result.error == f"tool 'move' argument 'distance_m': expected a finite number, got {bad!r}"


def test_nan_is_not_an_integer_and_json_infinity_is_rejected():
    import json

    @tool
    def repeat(times: int) -> str:
        return "ok"

    assert "finite integer" in repeat.invoke({"times": float("nan")}).error
    assert "finite number" in move.invoke(json.loads('{"distance_m": Infinity}')).error
    assert "finite number" in move.invoke(json.loads('{"distance_m": 1e400}')).error


def test_a_float_parameter_takes_a_huge_int_unless_it_is_beyond_float_range():
    assert move.invoke({"distance_m": 10**20}).ok
    result = move.invoke({"distance_m": 10**400})
    assert not result.ok and "expected a finite number, got 1000" in result.error and len(result.error) < 120


def test_annotated_bounds_appear_in_the_schema_and_are_enforced():
    @tool
    def drive(
        distance_m: Annotated[float, Field(ge=-5, le=5)],
        speed: Annotated[float, at.Gt(0), at.Lt(2), "metres per second"] = 1.0,
        level: Annotated[int, at.Interval(ge=0, le=10)] | None = None,
    ) -> str:
        return "ok"

    props = drive.parameters["properties"]
    assert props["distance_m"] == {"type": "number", "minimum": -5, "maximum": 5}
    assert props["speed"]["exclusiveMinimum"] == 0 and props["speed"]["exclusiveMaximum"] == 2
    assert props["speed"]["description"] == "metres per second"
    assert props["level"]["anyOf"][0] == {"type": "integer", "minimum": 0, "maximum": 10}
    assert drive.invoke({"distance_m": 5}).ok and drive.invoke({"distance_m": -5.0}).ok
    cases = {
        "distance_m": (7, "expected a number <= 5 (maximum), got 7"),
        "speed": (2, "expected a number < 2 (exclusiveMaximum), got 2"),
    }
    for name, (value, message) in cases.items():
        args = {"distance_m": 1, name: value}
        assert drive.invoke(args).error == f"tool 'drive' argument {name!r}: {message}"
    assert "minimum" in drive.invoke({"distance_m": -5.5}).error
    assert "exclusiveMinimum" in drive.invoke({"distance_m": 1, "speed": 0}).error
    assert not drive.invoke({"distance_m": 1, "level": 11}).ok and drive.invoke({"distance_m": 1, "level": None}).ok


def test_bounds_on_a_non_numeric_parameter_are_a_build_error():
    with pytest.raises(TypeError, match="bounds"):

        @tool
        def say(text: Annotated[str, Field(ge=0)]) -> str:
            return text


@pytest.mark.parametrize(
    ("doc", "bounds"),
    [
        ("Distance in meters, -5 to 5.", {"minimum": -5, "maximum": 5}),
        ("Brightness between 0 and 100", {"minimum": 0, "maximum": 100}),
        ("Brightness in percent (0-100).", {"minimum": 0, "maximum": 100}),
        ("Speed (0.1-2.5 m/s)", {"minimum": 0.1, "maximum": 2.5}),
        ("Angle, from -180 to 180 degrees.", {"minimum": -180, "maximum": 180}),
        ("Distance in meters. Negative for backwards.", {}),
        ("Room number, e.g. 3.", {}),
        ("Go to 5 rooms", {}),  # no number before "to"
        ("1 to 2 times, or 3 to 4", {}),  # two ranges: do not guess
        ("From 10 to 5", {}),  # not increasing
    ],
)
def test_docstring_ranges_are_read_conservatively(doc, bounds):
    from edgevox.language.bounds import docstring_bounds

    assert docstring_bounds(doc) == bounds


def test_a_docstring_range_bounds_the_parameter():
    @tool
    def dim(room: str, level: int, speed: float = 1.0) -> str:
        """Dim a light.

        Args:
            room: Which room, 1 to 3 words.
            level: Brightness in percent (0-100).
            speed: How fast, between 0.5 and 2.
        """
        return "ok"

    props = dim.parameters["properties"]
    assert "minimum" not in props["room"]  # strings take no bounds
    assert props["level"]["minimum"] == 0 and props["level"]["maximum"] == 100
    assert dim.invoke({"room": "hall", "level": 100}).ok
    assert dim.invoke({"room": "hall", "level": 101}).error == (
        "tool 'dim' argument 'level': expected an integer <= 100 (maximum), got 101"
    )
    assert "between 0.5" not in dim.invoke({"room": "hall", "level": 1, "speed": 3}).error
    assert "<= 2 (maximum)" in dim.invoke({"room": "hall", "level": 1, "speed": 3}).error


def test_the_grammar_builder_accepts_bounded_schemas():
    from edgevox.agents.grammar import arguments_grammar, tool_call_grammar

    @tool
    def drive(distance_m: Annotated[float, Field(ge=-5, le=5)], level: int = 3) -> str:
        """Drive.

        Args:
            level: Gear (1-5).
        """
        return "ok"

    assert "root" in arguments_grammar(drive) and "root" in tool_call_grammar([drive])


def test_a_plain_function_that_returns_a_coroutine_is_awaited_not_reported_as_a_success():
    async def fetch() -> str:
        return "fetched"

    @tool
    def start_fetch() -> str:
        """Start a fetch."""
        return fetch()  # type: ignore[return-value]

    result = start_fetch.invoke({})
    assert result.ok and result.value == "fetched"


def test_home_robot_tools_bound_their_motions():
    from edgevox.examples.home_robot import SimulatedRobot, home_robot_tools

    tools = {getattr(t, "tool", t).name: getattr(t, "tool", t) for t in home_robot_tools(SimulatedRobot())}
    for name, args in (
        ("move", {"distance_m": 1e300}),
        ("set_timer", {"minutes": -5}),
        ("turn", {"direction": "left", "degrees": 10000}),
    ):
        result = tools[name].invoke(args)
        assert not result.ok and result.error_kind == "arguments", (name, result)
