"""Config validation: every error is one line naming the file, line, key path and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgevox.config import builtin_configs, load_config, parse_config, resolve_config_path
from edgevox.config.schema import AppConfig
from edgevox.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def error_of(text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, source="robot.yaml", env=env or {})
    message = str(info.value)
    assert "\n" not in message, "config errors must be one line"
    assert "Traceback" not in message
    return message


def test_an_unknown_key_names_the_file_line_path_and_the_nearest_valid_key():
    message = error_of("name: r\nstt:\n  beam_sise: 2\n")
    assert message == "robot.yaml:3: unknown key 'stt.beam_sise'; did you mean 'stt.beam_size'?"


def test_an_unknown_key_deep_inside_agents_is_found_too():
    message = error_of("agents:\n  helper:\n    instrctions: hi\n")
    assert (
        message == "robot.yaml:3: unknown key 'agents.helper.instrctions'; did you mean 'agents.helper.instructions'?"
    )


def test_an_unknown_key_with_no_close_match_lists_the_valid_keys():
    message = error_of("zzzz: 1\n")
    assert message.startswith("robot.yaml:1: unknown key 'zzzz' (valid keys: agent, agents, audio,")


def test_an_unknown_key_in_the_bridges_section_is_an_error():
    assert "did you mean 'bridges.zenoh.namespace'" in error_of("bridges:\n  zenoh:\n    namespase: x\n")


def test_a_value_out_of_range_names_the_value_the_limit_and_the_whole_range():
    assert error_of("stt:\n  beam_size: 0\n") == "robot.yaml:2: stt.beam_size = 0: must be >= 1 (allowed: 1 to 32)"


def test_a_boolean_is_not_accepted_as_a_number():
    assert error_of("llm:\n  seed: true\n") == "robot.yaml:2: llm.seed = true: expected an integer, got a boolean"
    assert error_of("llm:\n  threads: true\n") == (
        "robot.yaml:2: llm.threads = true: expected 'auto' or an integer, got a boolean"
    )


def test_a_string_is_not_silently_converted_to_an_integer():
    assert "expected an integer, got a string" in error_of("llm:\n  seed: '3'\n")


def test_a_choice_lists_the_allowed_values():
    message = error_of("voice:\n  echo_guard: loud\n")
    assert (
        message == "robot.yaml:2: voice.echo_guard = loud: must be one of 'aec', 'half_duplex', 'energy_gate' or 'off'"
    )


def test_a_malformed_code_reference_says_what_a_reference_looks_like():
    message = error_of("agents:\n  a:\n    tools: [my_tools.move]\n")
    assert message.startswith("robot.yaml:3: agents.a.tools.0 = my_tools.move: expected a 'package.module:attribute'")


def test_an_unknown_agent_name_suggests_the_nearest_one():
    message = error_of("agent: asistant\nagents:\n  assistant: {}\n")
    assert (
        message
        == "robot.yaml:1: agent: no agent or workflow named 'asistant'; did you mean 'assistant'? (defined: assistant)"
    )


def test_handoffs_and_workflow_steps_must_name_defined_agents():
    assert "agents.a.handoffs: no agent or workflow named 'c'" in error_of("agents:\n  a: {handoffs: [c]}\n  b: {}\n")
    message = error_of("agents:\n  a: {}\nworkflows:\n  w: {type: sequence, steps: [a, x]}\n")
    assert "workflows.w.steps: no agent or workflow named 'x'" in message


def test_a_background_agent_needs_exactly_one_of_task_and_function():
    text = "background_agents:\n  - name: b\n    agent: assistant\n    trigger: {events: [x.y]}\n"
    assert "give exactly one of 'task'" in error_of(text)


def test_a_file_input_without_a_file_says_how_to_fix_it():
    assert "set audio.input.file (or use --input FILE.wav)" in error_of("audio:\n  input: {source: file}\n")


def test_duplicate_keys_are_an_error_not_a_silent_override():
    assert error_of("llm:\n  threads: 2\n  threads: 3\n") == "robot.yaml:3: key 'llm.threads' appears twice"


def test_invalid_yaml_names_line_and_column():
    assert error_of("agents: [\n").startswith("robot.yaml:2:1: invalid YAML:")


def test_the_top_level_must_be_a_mapping():
    assert "top level must be a mapping" in error_of("- a\n- b\n")


def test_several_errors_show_the_first_and_count_the_rest():
    assert error_of("stt:\n  beam_size: 0\nllm:\n  threads: 0\n").endswith(
        "must be >= 1 (allowed: 1 to 32) (and 1 more error)"
    )


def test_env_variables_are_interpolated_with_defaults_and_numbers_stay_numbers():
    cfg = parse_config(
        "name: ${ROBOT}-${SITE:-lab}\nllm:\n  threads: ${THREADS:-3}\n  temperature: ${TEMP}\n",
        env={"ROBOT": "rex", "TEMP": "0.5"},
    )
    assert cfg.name == "rex-lab"
    assert cfg.llm.threads == 3
    assert cfg.llm.temperature == 0.5


def test_a_missing_env_variable_is_a_clear_error_naming_it():
    message = error_of("llm:\n  model: ${MODEL_PATH}\n")
    assert (
        message
        == "robot.yaml:2: llm.model: environment variable MODEL_PATH is not set; export MODEL_PATH=... or write ${MODEL_PATH:-default}"
    )


def test_a_doubled_dollar_is_a_literal():
    assert parse_config("name: $${NOT_A_VAR}\n", env={}).name == "${NOT_A_VAR}"


def test_overrides_apply_before_validation():
    cfg = parse_config("", overrides={"audio.input.file": "q.wav", "audio.output.sink": "none"}, env={})
    assert cfg.audio.input.source == "file" and cfg.audio.input.file == "q.wav"
    assert cfg.audio.output.sink == "none"


def test_an_empty_config_is_the_default_application():
    cfg = parse_config("", env={})
    assert cfg == AppConfig()
    assert cfg.main_agent == "assistant"
    assert cfg.safety.stop_phrases == ["stop", "halt", "freeze"]


def test_builtin_names_resolve_to_the_packaged_configs():
    names = builtin_configs()
    assert {"default", "home_robot", "text"} <= set(names)
    assert resolve_config_path("default") == names["default"]
    assert resolve_config_path("text.yaml") == names["text"]


def test_an_unknown_config_name_suggests_a_builtin():
    with pytest.raises(ConfigError, match=r"no such file and not a builtin config; did you mean 'default'\?"):
        resolve_config_path("defualt")


def test_the_packaged_configs_are_the_repository_configs():
    # edgevox/configs is a link to the canonical top-level configs/ directory.
    packaged = {p.name: p.read_text() for p in builtin_configs().values()}
    canonical = {p.name: p.read_text() for p in (REPO / "configs").glob("*.yaml")}
    assert packaged == canonical


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path):
    cfg = load_config(path, env={})
    assert cfg.main_agent in cfg.agents or cfg.main_agent in cfg.workflows


def test_stop_phrases_and_negations_follow_the_spoken_language_unless_the_file_sets_them():
    german = parse_config("stt:\n  language: de\n", source="robot.yaml")
    assert german.safety.stop_phrases == ["stopp", "stop", "halt", "anhalten"]
    assert "nicht" in german.safety.negations
    own = parse_config("stt:\n  language: de\nsafety:\n  stop_phrases: [halt]\n", source="robot.yaml")
    assert own.safety.stop_phrases == ["halt"] and "nicht" in own.safety.negations
    english = parse_config("", source="robot.yaml")
    assert english.safety.stop_phrases == ["stop", "halt", "freeze"] and "don't" in english.safety.negations


def test_a_language_without_default_stop_phrases_asks_for_them():
    message = error_of("stt:\n  language: ja\n")
    assert "safety.stop_phrases" in message and "no default stop phrases for language 'ja'" in message
    assert "list them in safety.stop_phrases" in message
    given = parse_config("stt:\n  language: ja\nsafety:\n  stop_phrases: [止まれ]\n", source="robot.yaml")
    assert given.safety.stop_phrases == ["止まれ"] and given.safety.negations == []
