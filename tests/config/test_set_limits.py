"""A ``--set`` value is held to the limits of a config file (issue 25): a value nested 5,000
deep was a ``RecursionError`` traceback; now it is one line, as it is in a file."""

from __future__ import annotations

import pytest

from edgevox.config import parse_config
from edgevox.config.loader import MAX_DEPTH, MAX_NODES
from edgevox.errors import ConfigError

DEEP_LIST = "[" * 5000 + "]" * 5000
DEEP_JSON = '{"a":' * 5000 + "1" + "}" * 5000
DEEP_FLOW = "{a: " * 5000 + "1" + "}" * 5000


def error_of(*sets: str) -> str:
    with pytest.raises(ConfigError) as err:
        parse_config("", source="robot.yaml", sets=list(sets), env={})
    message = str(err.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("value", [DEEP_LIST, DEEP_JSON, DEEP_FLOW], ids=["list", "json", "yaml-flow"])
def test_a_value_nested_thousands_deep_is_one_line_not_a_recursion_error(value):
    message = error_of(f"agent.x={value}")
    assert message.startswith("--set agent.x=")
    assert "nested more than 62 levels deep" in message  # 64 less the two levels of the key
    assert len(message) < 300  # the option is cut short, not echoed 10,000 characters long


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [MAX_DEPTH - 4, MAX_DEPTH - 3])
def test_a_set_value_is_accepted_exactly_when_the_same_value_in_the_file_is(levels):
    # agents.assistant.options.x: the file nests the value under 4 levels of mappings.
    in_file = f"agents:\n  assistant:\n    options:\n      x: {nested(levels)}\n"
    try:
        parse_config(in_file, source="robot.yaml", env={})
        file_ok = True
    except ConfigError as exc:
        assert "nested more than" in str(exc)
        file_ok = False
    try:
        parse_config("", sets=[f"agents.assistant.options.x={nested(levels)}"], env={})
        set_ok = True
    except ConfigError as exc:
        assert "nested more than" in str(exc)
        set_ok = False
    assert file_ok == set_ok == (levels + 4 <= MAX_DEPTH)


def test_aliases_that_expand_past_the_limit_are_refused_as_in_a_file():
    laughs = "[&a [1,1,1,1,1,1,1,1,1,1], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a], &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]"
    laughs += ", &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c], &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d], [*e,*e]]"
    message = error_of(f"agents.assistant.options.x={laughs}")
    assert f"expand this value to more than {MAX_NODES:,} entries" in message


def test_a_key_appearing_twice_in_a_set_value_is_refused_as_in_a_file():
    assert error_of("agents.assistant.options={a: 1, a: 2}").endswith("key 'agents.assistant.options.a' appears twice")


def test_a_key_path_deeper_than_a_config_may_be_is_refused():
    message = error_of(".".join(["a"] * 100) + "=1")
    assert "the key has 100 levels; a config is nested at most 64 levels deep" in message


def test_an_ordinary_set_value_still_works():
    config = parse_config("", sets=["llm.temperature=0.3", "agents.assistant.options={a: [1, 2]}"], env={})
    assert config.llm.temperature == 0.3
    assert config.agents["assistant"].options == {"a": [1, 2]}


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_cli_prints_one_line_for_a_deep_set_value(command, capsys):
    from edgevox.cli.main import main

    assert main([command, "text", "--set", f"agent.x={DEEP_LIST}"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err
    assert err.count("\n") == 1 and "nested more than 62 levels deep" in err
