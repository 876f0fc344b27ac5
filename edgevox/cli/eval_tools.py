"""``edgevox eval tools CASES.jsonl [--config CONFIG]``: tool-calling accuracy and speed.

Prints one line per case (``ok``/``FAIL``, the request, the first call made or the
question asked, the expected call, what decided it, latency), then ``accuracy: X
(k/n)``, ``false actions: N`` (calls made that the cases did not expect; a question is
never one) and ``clarifications: N``; with ``--max-false-actions N`` the command exits
1 when there were more (one line says why). Then the same
for the unconstrained baseline (same model, no grammar, free text parsed) unless
``--no-baseline``, and the speed ratio (baseline mean latency / agent mean latency).

Decision time: each case line also gives the time of its first decision (``decide N ms``,
the decoder alone: no tool, no reply), and ``decision time (llm): p50/p95/max`` summarises
the decisions the LLM made (the schema resolver was unsure), next to those of the fast path.

The agent comes from ``--config`` (its ``agent:``; default the builtin
``home_robot`` config, whose agent factory is
:func:`edgevox.examples.home_robot.build_home_robot_agent`). If the config package
cannot build it, the home-robot agent is built directly over the embedded model.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import TYPE_CHECKING, Any

from edgevox.cli.args import COUNT

if TYPE_CHECKING:
    from edgevox.agents.base import Agent
    from edgevox.agents.decoders import Decision, DecisionRequest, ToolDecoder
    from edgevox.engines.base import LLM


def add_tools_parser(eval_sub: Any) -> None:
    parser = eval_sub.add_parser("tools", help="tool-calling accuracy of an agent on JSONL cases, vs a baseline")
    parser.add_argument(
        "cases", help='JSONL file: {"text": ..., "expect": {"name", "arguments"} | null | "clarify"} per line'
    )
    parser.add_argument("--config", default="home_robot", help="config name or YAML path (default: home_robot)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unconstrained baseline")
    parser.add_argument("--limit", type=COUNT, default=0, help="only the first N cases")
    parser.add_argument(
        "--max-false-actions",
        type=COUNT,
        default=None,
        metavar="N",
        help="exit 1 when the agent made more than N calls the cases did not expect",
    )
    parser.set_defaults(func=run_eval_tools)


def build_agent(config: str) -> tuple[Agent, LLM]:
    """(agent, llm) for ``config``."""
    from edgevox.config import load_config
    from edgevox.config.build import make_agents, make_llm

    app = load_config(config)
    llm = make_llm(app.llm)
    agents = make_agents(app, llm)
    name = app.agent or next(iter(agents))
    return agents[name], llm


def run_eval_tools(args: argparse.Namespace) -> int:
    from edgevox.agents.evaluation import (
        accuracy,
        clarifications,
        describe_call,
        evaluate_agent,
        evaluate_baseline,
        false_actions,
        load_cases,
        mean_latency_s,
    )

    cases = load_cases(args.cases)
    if args.limit:
        cases = cases[: args.limit]
    from edgevox.agents.llm_agent import LLMAgent

    agent, llm = build_agent(args.config)
    if not isinstance(agent, LLMAgent):
        print(f"edgevox: error: agent of config {args.config!r} has no tools to evaluate")
        return 2
    warm = getattr(llm, "warmup", None)  # llama.cpp's prompt-cache warm-up; not in the LLM protocol
    if warm is not None:
        warm(agent.instructions)
    from edgevox.runtime.context import AgentContext

    timer = DecisionTimer(agent.decoder)
    agent.decoder = timer

    def make_ctx() -> AgentContext:
        timer.cases.append([])
        return AgentContext(session_id=f"eval-{len(timer.cases) - 1}")

    try:
        outcomes = evaluate_agent(agent, cases, make_ctx)
    finally:
        agent.decoder = timer.decoder
    by: dict[str, int] = {}
    for o, decisions in zip(outcomes, timer.cases, strict=True):
        by[o.decided_by] = by.get(o.decided_by, 0) + 1
        mark = "ok  " if o.ok else "FAIL"
        extra = f" error={o.error}" if o.error else ""
        extra += " FALSE ACTION" if o.false_action else ""
        got = f"asks {o.clarify!r}" if o.clarify else describe_call(o.got)
        print(
            f"{mark} {o.case.text!r} -> {got} | expected {describe_call(o.case.expect)}"
            f" | by {o.decided_by or '?'} {o.latency_s * 1000:.0f} ms"
            f"{f' (decide {decisions[0][1] * 1000:.0f} ms)' if decisions else ''}{extra}"
        )
    k = sum(o.ok for o in outcomes)
    print(f"accuracy: {accuracy(outcomes):.3f} ({k}/{len(outcomes)})")
    n_false = false_actions(outcomes)
    print(f"false actions: {n_false} (calls made that the cases did not expect)")
    print(f"clarifications: {clarifications(outcomes)} (questions asked instead of acting)")
    status = 0
    if args.max_false_actions is not None and n_false > args.max_false_actions:
        print(f"edgevox: {n_false} false actions > --max-false-actions {args.max_false_actions}")
        status = 1
    agent_ms = mean_latency_s(outcomes) * 1000
    print(
        f"mean latency: {agent_ms:.0f} ms per case; decided by: {', '.join(f'{k}={v}' for k, v in sorted(by.items()))}"
    )
    for who in sorted({d for case in timer.cases for d, _ in case}):
        times = [s for case in timer.cases for d, s in case if d == who]
        print(
            f"decision time ({who}, n={len(times)}): p50 {percentile(times, 50) * 1000:.0f} ms, "
            f"p95 {percentile(times, 95) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        )
    close = getattr(agent, "close", None)
    if close is not None:
        close()
    if args.no_baseline:
        return status
    base = evaluate_baseline(llm, agent.tools, cases, instructions=getattr(agent, "instructions", ""))
    for o in base:
        mark = "ok  " if o.ok else "FAIL"
        print(f"baseline {mark} {o.case.text!r} -> {describe_call(o.got)} | {o.latency_s * 1000:.0f} ms")
    kb = sum(o.ok for o in base)
    base_ms = mean_latency_s(base) * 1000
    print(f"baseline accuracy: {accuracy(base):.3f} ({kb}/{len(base)})")
    print(f"baseline false actions: {false_actions(base)}")
    print(f"baseline mean latency: {base_ms:.0f} ms per case")
    ratio = base_ms / agent_ms if agent_ms > 0 else float("inf")
    print(f"speed ratio (baseline / agent): {ratio:.1f}x")
    return status


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


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (the smallest value with ``pct`` percent at or below it)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]
