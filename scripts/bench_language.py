"""Decision time of the language layer per command, idle and with one core kept busy.

    python scripts/bench_language.py [SET_FOLDER ...]   (default: every folder of evals/tools)

For each request of the sets' dev cases it times the rule path the running app takes before
any LLM: the parse, the intent, the request frame and the matching against every tool frame
(``SchemaResolver.propose``), after one warm-up pass (models and parses loaded, caches cleared
between the measured passes so each request is parsed anew). The baseline in the same run is a
plain tokenisation of the same text (``language.terms.tokenize``): the ratio shows what the
parser and the lexicon cost on top. Printed: p50 / p95 / max in ms, idle, then with a second
process spinning on one core (the machine has two).
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _spin(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    x = 0
    while not stop.is_set():
        x = (x * 31 + 7) % 1_000_003


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def _measure(resolvers: list, texts: list[list[str]]) -> tuple[list[float], list[float]]:
    from edgevox.language.nlp import parse
    from edgevox.language.terms import tokenize

    rules, base = [], []
    for resolver, batch in zip(resolvers, texts, strict=True):
        for text in batch:
            parse.cache_clear()
            t0 = time.perf_counter()
            resolver.propose(text)
            rules.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            tokenize(text)
            base.append(time.perf_counter() - t0)
    return rules, base


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from edgevox.agents.evaluation import load_cases
    from edgevox.agents.resolver import SchemaResolver
    from edgevox.cli.eval_tools import load_tool_module

    folders = [Path(a) for a in argv] or sorted(p for p in (ROOT / "evals" / "tools").iterdir() if p.is_dir())
    resolvers, texts = [], []
    for folder in folders:
        tools = [getattr(t, "tool", t) for t in load_tool_module(folder / "tools.py")]
        resolvers.append(SchemaResolver(tools))
        texts.append([c.text for c in load_cases(folder / "dev.jsonl")])
    _measure(resolvers, texts)  # warm-up: spaCy, WordNet, pint loaded; frames read
    for label, busy in (("idle", False), ("one core busy", True)):
        stop = multiprocessing.Event()
        spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True) if busy else None
        if spinner is not None:
            spinner.start()
        try:
            rules, base = _measure(resolvers, texts)
        finally:
            if spinner is not None:
                stop.set()
                spinner.join(5)
        ms = [r * 1000 for r in rules]
        bms = [b * 1000 for b in base]
        print(
            f"{label}: rule-path decision per command (n={len(ms)}): p50 {_pct(ms, 50):.1f} ms, "
            f"p95 {_pct(ms, 95):.1f} ms, max {max(ms):.1f} ms; baseline tokenize p50 {_pct(bms, 50):.3f} ms "
            f"(ratio p50 {statistics.median(ms) / max(statistics.median(bms), 1e-6):.0f}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
