"""A different model per agent: ``agents.<name>.llm`` sets ``llm:`` keys over the top-level
section; agents whose model file and load options come out the same share one engine.

Scripted engines (``edgevox.testing:ScriptedLLM`` as a custom engine) prove the wiring and
sharing from YAML; the embedded SmolLM2 model proves it with real inference
(``test_agent_llms_real_model``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from edgevox.app import App
from edgevox.check import check_config
from edgevox.config import parse_config
from edgevox.config.build import llm_key, make_agents, make_engines, make_llm, make_llms
from edgevox.errors import ConfigError
from edgevox.runtime.context import AgentContext
from edgevox.testing import ScriptedLLM

# Three agents: the greeter and the helper use `llm:` as it is (the helper only answers
# shorter and cooler: per-call keys, same engine); the planner names other options, so it
# gets an engine of its own.
TEAM = """\
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {default: "main engine"}
  max_tokens: 64
  temperature: 0.5
audio:
  input: {source: text}
  output: {sink: none}
agents:
  greeter: {}
  helper:
    llm: {max_tokens: 16, temperature: 0.0}
  planner:
    llm:
      options: {default: "planner engine"}
      max_tokens: 32
"""


def test_agents_with_the_same_model_share_one_engine_and_one_with_its_own_gets_another():
    app = parse_config(TEAM, env={})
    engines = make_engines(app)
    llms = make_llms(app, main=engines.llm)
    assert llms["greeter"] is llms["helper"] is engines.llm
    assert llms["planner"] is not engines.llm
    assert len({id(e) for e in llms.values()}) == 2  # two engines for three agents
    agents = make_agents(app, engines.llm, llms=llms)
    ctx = AgentContext(session_id="u")
    # Across turns each agent keeps answering from its own engine.
    for _ in range(2):
        assert agents["greeter"].run("hi", ctx).text == "main engine"
        assert agents["helper"].run("hi", ctx).text == "main engine"
        assert agents["planner"].run("plan", ctx).text == "planner engine"
    main, own = engines.llm, llms["planner"]
    assert isinstance(main, ScriptedLLM) and isinstance(own, ScriptedLLM)
    assert len(main.calls) == 4 and len(own.calls) == 2
    # Per-call keys: the agent's own, else llm:'s.
    assert {(c.max_tokens, c.temperature) for c in main.calls} == {(64, 0.5), (16, 0.0)}
    assert {(c.max_tokens, c.temperature) for c in own.calls} == {(32, 0.5)}


def test_the_app_built_from_yaml_gives_each_agent_its_engine():
    app = App.build(parse_config(TEAM, env={}))
    try:
        assert app.agents["planner"].llm is not app.engines.llm
        assert app.agents["greeter"].llm is app.agents["helper"].llm is app.engines.llm
        assert app.agents["planner"].run("plan").text == "planner engine"
        assert app.agents["greeter"].run("hi").text == "main engine"
    finally:
        app.stop()


def test_make_agents_without_engines_per_agent_loads_the_missing_ones_once():
    app = parse_config(
        TEAM.replace("  greeter: {}\n", "  greeter: {}\n  critic:\n    llm: {options: {default: 'planner engine'}}\n"),
        env={},
    )
    built: list[dict] = []

    def make(cfg):
        built.append(cfg.options)
        return ScriptedLLM(default=cfg.options["default"])

    main = ScriptedLLM(default="main engine")
    llms = make_llms(app, main=main, make=make)
    # The critic and the planner name the same options: one engine built for both.
    assert built == [{"default": "planner engine"}]
    assert llms["critic"] is llms["planner"] and llms["greeter"] is main
    agents = make_agents(app, main)  # no llms: it builds them itself (the real make_llm)
    assert agents["critic"].run("x").text == "planner engine"


def test_a_builtin_name_and_the_path_it_resolves_to_are_the_same_file():
    from edgevox.models import resolve

    app = parse_config(f"agents:\n  a: {{}}\n  b:\n    llm: {{model: '{resolve('smollm2-135m')}'}}\n", env={})
    assert llm_key(app.llm_for("a")) == llm_key(app.llm_for("b"))
    other = parse_config("agents:\n  a: {}\n  b:\n    llm: {context_tokens: 1024}\n", env={})
    assert llm_key(other.llm_for("a")) != llm_key(other.llm_for("b"))


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        ("  a:\n    llm: {modle: x}\n", r"unknown key 'agents.a.llm.modle'; did you mean 'agents.a.llm.model'\?"),
        ("  a:\n    max_tokens: 10\n    llm: {max_tokens: 20}\n", r"agents.a: max_tokens is set twice"),
        ("  a:\n    llm: {context_tokens: 100}\n", r"agents.a.llm: max_tokens = 256 is more than the context window"),
        (
            "  a:\n    max_tokens: 300\n    llm: {context_tokens: 200}\n",
            r"agents.a.max_tokens = 300 is more than its context_tokens = 200",
        ),
        ("  a:\n    llm: {threads: many}\n", r"agents.a.llm.threads"),
    ],
)
def test_a_bad_per_agent_model_key_is_one_line_naming_it(agents, message):
    with pytest.raises(ConfigError, match=message) as err:
        parse_config("agents:\n" + agents, env={})
    assert "\n" not in str(err.value)


def test_an_unknown_model_of_an_agent_names_the_agent_and_the_builtin_models():
    app = parse_config(
        "llm:\n  engine: edgevox.testing:ScriptedLLM\nagents:\n  a: {}\n  b:\n    llm: {engine: llama-cpp, model: smolm2-135m}\n",
        env={},
    )
    with pytest.raises(
        ConfigError, match=r"^agents.b.llm \(model 'smolm2-135m'\): .*did you mean the builtin 'smollm2-135m'"
    ) as err:
        make_llms(app)
    assert "\n" not in str(err.value)
    report = check_config(app)
    item = next(i for i in report.items if i.what == "agent b model")
    assert item.status == "fail" and "smolm2-135m" in item.detail


def test_check_says_which_agents_share_an_engine_and_resolves_the_others():
    app = parse_config(
        "agents:\n  a: {}\n  b:\n    llm: {temperature: 0.9}\n  c:\n    llm: {context_tokens: 1024}\n"
        "  d:\n    llm: {context_tokens: 1024, max_tokens: 20}\n",
        env={},
    )
    items = {i.what: i for i in check_config(app).items}
    assert items["agent b model"].detail == "smollm2-135m: shares the engine of llm:"
    assert items["agent c model"].status == "ok" and "smollm2-135m ->" in items["agent c model"].detail
    assert items["agent c model"].detail.endswith("its own engine (context_tokens 1024)")
    assert items["agent d model"].detail == "smollm2-135m: shares the engine of agent c"
    assert "agent a model" not in items


@pytest.mark.models
def test_with_the_embedded_model_one_file_is_loaded_once_and_other_load_options_make_a_second_engine():
    # Only one instruction-tuned model is embedded offline (SmolLM2-135M; gemma-3-270m is a
    # base model not installed here), so the second engine is the same file with a smaller
    # context window: two llama.cpp engines in one process, both answering for real.
    app = parse_config(
        "llm: {max_tokens: 8}\n"
        "agents:\n"
        "  greeter: {instructions: Greet the user.}\n"
        "  helper: {instructions: Help the user., llm: {temperature: 0.7}}\n"
        "  planner: {instructions: Plan one step., llm: {context_tokens: 1024}}\n",
        env={},
    )
    loads: list[int] = []

    def counting(cfg):
        loads.append(cfg.context_tokens)
        return make_llm(cfg)

    llms = make_llms(app, make=counting)
    assert loads == [2048, 1024]  # three agents, two loads
    assert llms["greeter"] is llms["helper"] and llms["planner"] is not llms["greeter"]
    assert (llms["greeter"].n_ctx, llms["planner"].n_ctx) == (2048, 1024)
    assert llms["greeter"].model_path == llms["planner"].model_path
    agents = make_agents(app, llms["greeter"], llms=llms)
    # All three at once: the two agents on the shared engine take turns on its lock, the
    # planner's engine runs beside them; every reply is real and complete.
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda n: agents[n].run("Say hello to Ana.", AgentContext(session_id=n)), agents))
    for result in results:
        assert result.ok, result.error
        assert result.text.strip()
    for engine in {id(e): e for e in llms.values()}.values():
        engine.close()
