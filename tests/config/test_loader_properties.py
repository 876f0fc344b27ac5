"""Property tests of the config loader: any text, any bytes, any YAML structure and any value
at any key either loads or raises one :class:`ConfigError` line naming the source; nothing
else escapes, and whatever loads holds only finite numbers."""

from __future__ import annotations

import math

import yaml
from hypothesis import given
from hypothesis import strategies as st

from edgevox.config import AppConfig, builtin_configs, parse_config
from edgevox.config.loader import decode_config
from edgevox.errors import ConfigError

SOURCE = "robot.yaml"
HOME = yaml.safe_load(builtin_configs()["home_robot"].read_text())


def _loads_or_one_line(text: str, env: dict[str, str] | None = None) -> AppConfig | None:
    try:
        return parse_config(text, source=SOURCE, env=env or {})
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith(SOURCE), message
        assert "\n" not in message, message
        return None


def _numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, float):
        yield value


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10)
    | st.sampled_from([".inf", "-.inf", ".nan", "1e999", "${X}", "${X:-1e400}", "$${X}", "~", "0x10"])
)
trees = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10) | scalars, inner, max_size=5),
    max_leaves=30,
)


@given(st.text(max_size=300))
def test_any_text_loads_or_is_one_line(text):
    _loads_or_one_line(text)


@given(st.binary(max_size=300))
def test_any_bytes_decode_or_are_one_line(raw):
    try:
        decode_config(raw, SOURCE)
    except ConfigError as exc:
        assert str(exc).startswith(SOURCE) and "\n" not in str(exc)


@given(trees)
def test_any_yaml_structure_loads_or_is_one_line(tree):
    _loads_or_one_line(yaml.safe_dump(tree, allow_unicode=True))


def _leaf_paths(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, (*path, k))
    elif not isinstance(value, list):
        yield path


LEAVES = sorted(_leaf_paths(HOME), key=str)


@given(st.sampled_from(LEAVES), scalars)
def test_any_value_at_any_key_of_a_real_config_loads_or_is_one_line(path, value):
    data = yaml.safe_load(builtin_configs()["home_robot"].read_text())
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    config = _loads_or_one_line(yaml.safe_dump(data), env={"X": "2"})
    if config is not None:
        assert all(math.isfinite(x) for x in _numbers(config.model_dump()))


def test_a_key_with_a_line_break_is_reported_on_one_line():
    # found by the property test above: an unknown key "\n" made a two-line message
    text = yaml.safe_dump({"\n": None, "stt\tx": 1})
    assert _loads_or_one_line(text) is None
