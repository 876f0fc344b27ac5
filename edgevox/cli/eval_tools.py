"""``edgevox eval tools SET [SET ...]``: does the agent do what users ask, on their own tool sets?

A SET is either

- a folder holding ``tools.py`` (module-level ``@tool``/``@skill`` functions, the way a robot
  builder writes them) and case files ``dev.jsonl`` / ``held.jsonl`` (``--split`` picks:
  ``dev`` by default, ``held`` for the held-out half, ``all``): an agent over those tools and
  the config's LLM is built for it; or
- a JSONL case file, evaluated on the agent of ``--config`` (default the builtin
  ``home_robot``).

Each case runs as a user would take it (see :mod:`edgevox.agents.evaluation`): the request,
first through the stop-phrase check the app applies before any agent, and when the robot
asks, the user's answer. One line per case (``ok``/``FAIL``, the request, the calls made or
the question asked, what was expected, what decided it, the decision time), then per set
and overall: accuracy, commands done right (first time or after one question), must-ask
cases asked, false actions, wrong arguments, missed actions, clarifications and decision
latency p50/p95 for the rule path and the LLM path. ``--max-false-actions N`` exits 1 when
the total is higher. ``--baseline`` also runs the unconstrained baseline (same model, no
grammar, free text parsed) on the same cases.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgevox.cli.args import COUNT

if TYPE_CHECKING:
    from edgevox.agents.base import Agent
    from edgevox.agents.decoders import Decision, DecisionRequest, ToolDecoder
    from edgevox.agents.evaluation import Case, CaseOutcome
    from edgevox.engines.base import LLM
    from edgevox.voice.stop_phrases import StopPhraseMatcher

SET_INSTRUCTIONS = "You are a helpful robot. Answer in one short sentence."
"""Instructions of the agent built for a tool-set folder."""


def add_tools_parser(eval_sub: Any) -> None:
    parser = eval_sub.add_parser("tools", help="tool-calling accuracy of an agent on tool sets and their cases")
    parser.add_argument(
        "sets",
        nargs="+",
        metavar="SET",
        help="a folder with tools.py and dev.jsonl/held.jsonl, or a JSONL case file for --config's agent",
    )
    parser.add_argument("--config", default="home_robot", help="config name or YAML path (default: home_robot)")
    parser.add_argument("--split", choices=("dev", "held", "all"), default="dev", help="case files of a folder set")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key (e.g. llm.model=PATH.gguf); repeatable")  # fmt: skip
    parser.add_argument("--baseline", action="store_true", help="also run the unconstrained baseline")
    parser.add_argument("--limit", type=COUNT, default=0, help="only the first N cases of each set")
    parser.add_argument("--quiet", action="store_true", help="print only failed cases and the figures")
    parser.add_argument(
        "--max-false-actions",
        type=COUNT,
        default=None,
        metavar="N",
        help="exit 1 when the agent made more than N calls the cases did not expect",
    )
    parser.set_defaults(func=run_eval_tools)


def load_tool_module(path: Path) -> list[Any]:
    """The ``@tool`` and ``@skill`` objects a ``tools.py`` defines, in the order written."""
    from edgevox.agents.skills import Skill
    from edgevox.agents.tools import Tool
    from edgevox.errors import ConfigError

    name = f"edgevox_eval_set_{path.parent.name}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look the module up while it runs
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module: say what failed and where
        raise ConfigError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from None
    tools = [v for v in vars(module).values() if isinstance(v, (Tool, Skill))]
    if not tools:
        raise ConfigError(f"{path}: defines no @tool or @skill function")
    return tools


def set_cases(path: Path, split: str) -> list[Case]:
    from edgevox.agents.evaluation import load_cases
    from edgevox.errors import ConfigError

    names = ["dev.jsonl", "held.jsonl"] if split == "all" else [f"{split}.jsonl"]
    files = [path / n for n in names]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ConfigError(f"{missing[0]}: case file not found (a set folder holds tools.py, dev.jsonl, held.jsonl)")
    return [c for f in files for c in load_cases(f)]


def build_agent(config: str, overrides: Sequence[str] = (), *, llm: LLM | None = None) -> tuple[Agent, LLM]:
    """(agent, llm) of ``config`` (for a JSONL case file); ``llm``: an engine already loaded."""
    from edgevox.config import load_config
    from edgevox.config.build import make_agents

    app = load_config(config, sets=list(overrides))
    llm = llm or build_llm(config, overrides)
    agents = make_agents(app, llm)
    return agents[app.agent or next(iter(agents))], llm


def build_llm(config: str, overrides: Sequence[str] = ()) -> LLM:
    """The LLM of ``config`` (for the agents built over tool-set folders)."""
    from edgevox.config import load_config
    from edgevox.config.build import make_llm

    return make_llm(load_config(config, sets=list(overrides)).llm)


def stop_check(config: str, overrides: Sequence[str] = ()) -> StopPhraseMatcher | None:
    """The app's stop-phrase layer for ``config`` (None when its safety stop is off)."""
    from edgevox.config import load_config
    from edgevox.voice.stop_phrases import StopPhraseMatcher

    safety = load_config(config, sets=list(overrides)).safety
    return StopPhraseMatcher(safety.stop_phrases, negations=safety.negations) if safety.enabled else None


def run_eval_tools(args: argparse.Namespace) -> int:
    from edgevox.agents.evaluation import evaluate_agent, load_cases
    from edgevox.agents.llm_agent import LLMAgent
    from edgevox.errors import ConfigError
    from edgevox.language import warm_up
    from edgevox.runtime.context import AgentContext

    overrides = tuple(getattr(args, "overrides", ()) or ())
    stop = stop_check(args.config, overrides)
    warm_up()  # as App.start does: no decision pays for loading the parser and WordNet
    everything: list[CaseOutcome] = []
    timings: list[tuple[str, float]] = []
    loaded: LLM | None = None  # one engine for every set of the run
    for spec in args.sets:
        path = Path(spec)
        if path.is_dir():
            llm = loaded = loaded or build_llm(args.config, overrides)
            agent: Any = LLMAgent(path.name, SET_INSTRUCTIONS, tools=load_tool_module(path / "tools.py"), llm=llm)
            cases = set_cases(path, args.split)
        elif path.is_file():
            agent, llm = build_agent(args.config, overrides, llm=loaded)
            loaded = llm
            cases = load_cases(path)
        else:
            raise ConfigError(f"{spec}: no such set (a folder with tools.py and dev.jsonl, or a JSONL case file)")
        if not isinstance(agent, LLMAgent):
            print(f"edgevox: error: the agent of {args.config!r} has no tools to evaluate")
            return 2
        if args.limit:
            cases = cases[: args.limit]
        warm = getattr(llm, "warmup", None)  # llama.cpp's prompt-cache warm-up; not in the LLM protocol
        if warm is not None:
            warm(agent.instructions)
        timer = DecisionTimer(agent.decoder)
        agent.decoder = timer

        def make_ctx(timer: DecisionTimer = timer, name: str = path.name) -> AgentContext:
            timer.cases.append([])
            return AgentContext(session_id=f"eval-{name}-{len(timer.cases) - 1}")

        try:
            outcomes = evaluate_agent(agent, cases, make_ctx, stop_check=stop)
        finally:
            agent.decoder = timer.decoder
            agent.close()
        decisions = iter(timer.cases)
        for o in outcomes:
            first = [] if o.stopped else next(decisions, [])
            timings.extend(first[:1])
            if not (args.quiet and o.ok):
                print(case_line(path.name, o, first))
        print_summary(path.name, outcomes, [t for c in timer.cases for t in c[:1]])
        everything += outcomes
        if args.baseline:
            run_baseline(llm, agent, cases)
    if len(args.sets) > 1:
        print_summary("overall", everything, timings)
    n_false = sum(o.false_action for o in everything)
    if args.max_false_actions is not None and n_false > args.max_false_actions:
        print(f"edgevox: {n_false} false actions > --max-false-actions {args.max_false_actions}")
        return 1
    return 0


def case_line(set_name: str, o: CaseOutcome, decisions: list[tuple[str, float]]) -> str:
    from edgevox.agents.evaluation import describe_call

    mark = "ok  " if o.ok else "FAIL"
    if o.stopped:
        got = "(safety stop)"
    else:
        got = " + ".join(describe_call(c) for c in o.calls) or "(words)"
        if o.clarify:
            got = f"asks {o.clarify!r} -> " + got
    want = o.case.expect
    expected = " + ".join(describe_call(c) for c in want) if isinstance(want, list) else describe_call(want)
    if o.case.kind == "ask" and o.case.after is not None:
        expected += f", then {' + '.join(describe_call(c) for c in o.case.expected_calls())}"
    extra = " FALSE ACTION" if o.false_action else ""
    extra += f" error={o.error}" if o.error else ""
    when = f" (decide {decisions[0][1] * 1000:.0f} ms)" if decisions else ""
    return f"{mark} [{set_name}] {o.case.text!r} -> {got} | expected {expected} | by {o.decided_by or '?'}{when}{extra}"


def print_summary(name: str, outcomes: list[CaseOutcome], decisions: list[tuple[str, float]]) -> None:
    from edgevox.agents.evaluation import summarize
    from edgevox.voice.latency import percentile

    s = summarize(outcomes)
    print(
        f"== {name}: accuracy {s.accuracy:.3f} ({sum(o.ok for o in outcomes)}/{s.cases}); "
        f"commands done right {s.act_rate:.3f} ({s.acts_right}/{s.acts}, {s.acts_after_question} after a question); "
        f"must-ask asked {s.ask_rate:.3f} ({s.asks_asked}/{s.asks}); must-not-act {s.nots}; "
        f"false actions {s.false_actions}; wrong arguments {s.wrong_arguments}; missed {s.missed}; "
        f"clarifications {s.clarifications}; safety stops {s.stopped}"
    )
    for who in sorted({d for d, _ in decisions}):
        times = [t for d, t in decisions if d == who]
        print(
            f"   decision time ({who}, n={len(times)}): p50 {percentile(times, 50) * 1000:.0f} ms, "
            f"p95 {percentile(times, 95) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        )


def run_baseline(llm: LLM, agent: Any, cases: list[Case]) -> None:
    from edgevox.agents.evaluation import accuracy, describe_call, evaluate_baseline, false_actions, mean_latency_s

    base = evaluate_baseline(llm, agent.tools, cases, instructions=getattr(agent, "instructions", ""))
    for o in base:
        mark = "ok  " if o.ok else "FAIL"
        print(f"baseline {mark} {o.case.text!r} -> {describe_call(o.got)} | {o.latency_s * 1000:.0f} ms")
    print(
        f"baseline accuracy: {accuracy(base):.3f} ({sum(o.ok for o in base)}/{len(base)}); "
        f"false actions {false_actions(base)}; mean latency {mean_latency_s(base) * 1000:.0f} ms per case"
    )


class DecisionTimer:
    """Wraps an agent's decoder and times each decision (seconds, with what decided it).

    ``cases``: one list per case (the caller appends one when a case starts) of
    ``(decided_by, seconds)``, the first hop first."""

    def __init__(self, decoder: ToolDecoder) -> None:
        self.decoder = decoder
        self.cases: list[list[tuple[str, float]]] = []

    def decide(self, request: DecisionRequest) -> Decision:
        start = time.perf_counter()
        decision = self.decoder.decide(request)
        if not self.cases:
            self.cases.append([])
        self.cases[-1].append((decision.decided_by, time.perf_counter() - start))
        return decision
