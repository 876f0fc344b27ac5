"""Text libraries against the hand-written code they replaced, old and new in one run.

* speech text (``voice/speechtext.py`` + ``voice/spoken_numbers.py``, num2words): import
  time and cost per reply chunk over typical robot reply chunks, and what each says;
* WER (``voice/textnorm.py``, jiwer): cost per pair, short and long, and whether the counts agree;
* sentence ends (``voice/chunker.py``, pysbd at each ``.``): cost per streamed token, time
  to the first chunk, and the tricky-text table of ``tests/voice/test_chunker_boundaries.py``.

The old modules are read from git (``--baseline``, the commit before the change) into
temporary modules, so the figures come from the same process on the same machine.
    python scripts/bench_text_libs.py [--baseline 92f1400] [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib
import random
import re
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPLY_CHUNKS = [
    "Sure, I will move 2 meters forward.",
    "The battery is at 45%.",
    "It is 3:30 pm, and the kitchen is clear.",
    "I found 3 cups and 1 plate in the kitchen.",
    "**Done!** I moved to the kitchen.",
    "Okay.",
    "The temperature is 22°C and the humidity is 40%.",
    "Turning left 90° now, then I will stop.",
    "I can't do that, sorry.",
    "That robot was built in the 1990s.",
    "It costs $3.50 at the store.",
    "Moving at 0.5 m/s for 10 s.",
    "The 2nd door on the left is the lab.",
    "You are welcome! Anything else?",
    "I will be back in 5 minutes.",
    "The distance is 1,250 meters, about 1.25 km.",
    "My software is v2.3.1, released in 2024.",
    "Here is the plan: go to the hall, pick up the box, and come back.",
    "The weather today is sunny with a high of 25 degrees.",
    "I don't know where the keys are.",
]


def load_old(rev: str, path: str, name: str) -> Any:
    source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True)
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:{path}"
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source.stdout, module.__file__, "exec"), module.__dict__)
    return module


def per_call_us(fn: Any, items: list[Any], repeat: int) -> tuple[float, float]:
    """(median of per-run mean us per item, the worst single item in us)."""
    means, worst = [], 0.0
    for _ in range(repeat):
        started = time.perf_counter()
        for item in items:
            t = time.perf_counter()
            fn(item)
            worst = max(worst, time.perf_counter() - t)
        means.append((time.perf_counter() - started) / len(items))
    return statistics.median(means) * 1e6, worst * 1e6


def import_ms(statement: str) -> float:
    """Milliseconds ``statement`` takes in a fresh process; NaN if it fails (not installed)."""
    out = subprocess.run(
        [sys.executable, "-c", f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return float(out.stdout) * 1000 if out.returncode == 0 else float("nan")


def row(label: str, old: float, new: float, unit: str) -> None:
    print(f"  {label:44s} old {old:9.1f} {unit}   new {new:9.1f} {unit}   new/old {new / old:5.2f}")


def bench_speech(old: Any, repeat: int) -> None:
    new = importlib.import_module("edgevox.voice.speechtext")
    print("speech text (speechtext + spoken_numbers / num2words)")
    print(
        f"  import num2words: {import_ms('import num2words'):.1f} ms; inflect (not used, nan = not installed): {import_ms('import inflect'):.1f} ms"
    )
    print(f"  import edgevox.voice.speechtext (fresh process): {import_ms('import edgevox.voice.speechtext'):.1f} ms")
    chunks = [REPLY_CHUNKS[i % len(REPLY_CHUNKS)] for i in range(1000)]
    o_mean, o_worst = per_call_us(old.clean_for_speech, chunks, repeat)
    n_mean, n_worst = per_call_us(new.clean_for_speech, chunks, repeat)
    row("per reply chunk, mean (1000 chunks)", o_mean, n_mean, "us")
    row("per reply chunk, worst", o_worst, n_worst, "us")
    for text in ("the 1990s", "$3.50", "at 3:30 pm", "-5 °C", "v2.3.1", "in 2024", "3/4"):
        print(f"  {text!r:14s} old: {old.clean_for_speech(text)!r:52s} new: {new.clean_for_speech(text)!r}")


def bench_wer(old: Any, repeat: int) -> None:
    new = importlib.import_module("edgevox.voice.textnorm")
    print("WER (textnorm, alignment by jiwer)")
    rng = random.Random(7)
    vocab = "go forward back left right stop the kitchen to a robot turn slowly now please meters ten two".split()

    def pair(n: int) -> tuple[str, str]:
        ref = [rng.choice(vocab) for _ in range(n)]
        hyp = [w for w in ref if rng.random() > 0.1]
        for _ in range(n // 8):
            hyp.insert(rng.randrange(len(hyp) + 1), rng.choice(vocab))
        hyp = [rng.choice(vocab) if rng.random() < 0.1 else w for w in hyp]
        return " ".join(ref), " ".join(hyp)

    for n, count in ((8, 2000), (40, 300), (400, 10)):
        pairs = [pair(n) for _ in range(count)]
        o_mean, _ = per_call_us(lambda p: old.word_errors(*p, normalized=True), pairs, repeat)
        n_mean, _ = per_call_us(lambda p: new.word_errors(*p, normalized=True), pairs, repeat)
        row(f"per pair of {n}-word texts (normalised)", o_mean, n_mean, "us")
        totals = sum(
            old.word_errors(*p, normalized=True).errors == new.word_errors(*p, normalized=True).errors for p in pairs
        )
        kinds = sum(
            vars(old.word_errors(*p, normalized=True)) == vars(new.word_errors(*p, normalized=True)) for p in pairs
        )
        print(f"    same error total: {totals}/{count}; same split into S/D/I: {kinds}/{count} (ties)")
    texts = REPLY_CHUNKS * 50
    o_mean, _ = per_call_us(old.normalize, texts, repeat)
    n_mean, _ = per_call_us(new.normalize, texts, repeat)
    row("normalize() per reply sentence", o_mean, n_mean, "us")
    same = sum(old.normalize(t) == new.normalize(t) for t in REPLY_CHUNKS)
    print(f"    same normalised text: {same}/{len(REPLY_CHUNKS)}")
    for t in REPLY_CHUNKS:
        if old.normalize(t) != new.normalize(t):
            print(f"    {t!r}: old {old.normalize(t)!r} new {new.normalize(t)!r}")


def stream_tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text)


def bench_chunker(old: Any, repeat: int) -> None:
    new = importlib.import_module("edgevox.voice.chunker")
    table = importlib.import_module("tests.voice.test_chunker_boundaries")
    print("sentence ends (chunker, pysbd at each '.')")
    typical = [" ".join(REPLY_CHUNKS[i : i + 4]) for i in range(0, len(REPLY_CHUNKS), 4)]
    tricky = [" ".join(s) for s in table.TRICKY_TEXTS]

    def run(module: Any, reply: str) -> tuple[float, int, float]:
        """(seconds in feed/flush, tokens fed before the first chunk, seconds until it)."""
        chunker = module.Chunker()
        spent, first_tokens, first_s = 0.0, -1, 0.0
        for k, token in enumerate(stream_tokens(reply), start=1):
            t = time.perf_counter()
            got = chunker.feed(token)
            spent += time.perf_counter() - t
            if got and first_tokens < 0:
                first_tokens, first_s = k, spent
        t = time.perf_counter()
        chunker.flush()
        spent += time.perf_counter() - t
        return spent, first_tokens, first_s

    for module in (old, new):  # warm both (pysbd compiles its patterns on first use: ~8 ms once)
        run(module, tricky[0])
    for name, replies in ((f"{len(typical)} typical replies", typical), (f"{len(tricky)} tricky texts", tricky)):
        results = {}
        for label, module in (("old", old), ("new", new)):
            spent, first_tokens, first_s = [], [], []
            for _ in range(repeat):
                for reply in replies:
                    s, ft, fs = run(module, reply)
                    spent.append(s)
                    first_tokens.append(ft)
                    first_s.append(fs)
            tokens = sum(len(stream_tokens(r)) for r in replies) * repeat
            results[label] = (
                sum(spent) / tokens * 1e6,
                statistics.mean(first_tokens),
                statistics.mean(first_s) * 1e6,
                max(spent) * 1e6,
            )
        print(f"  {name}, streamed a word-token at a time:")
        row("per streamed token, mean", results["old"][0], results["new"][0], "us")
        row("tokens fed before the first chunk, mean", results["old"][1], results["new"][1], "tok")
        row("compute until the first chunk, mean", results["old"][2], results["new"][2], "us")
        row("one whole reply, worst", results["old"][3], results["new"][3], "us")

    def score(module: Any) -> tuple[int, int, list[str]]:
        settings = module.ChunkerSettings(first_clause_min_words=0, first_fragment_max_words=0)
        right = total = 0
        wrong = []
        for sentences in table.TRICKY_TEXTS:
            text = " ".join(sentences)
            chunker = module.Chunker(settings)
            out: list[str] = []
            for token in stream_tokens(text):
                out += chunker.feed(token)
            out += chunker.flush()
            ends_true = {len(" ".join(sentences[: k + 1])) for k in range(len(sentences) - 1)}
            ends_got = {len(" ".join(out[: k + 1])) for k in range(len(out) - 1)}
            dots = [m.end() for m in re.finditer(r"[.!?…]+[\"')\]]*(?=\s)", text)]
            for end in dots:
                total += 1
                if (end in ends_true) == (end in ends_got):
                    right += 1
                else:
                    wrong.append(f"{text[max(0, end - 18) : end]!r}|{text[end : end + 8]!r}")
        return right, total, wrong

    for label, module in (("old", old), ("new", new)):
        right, total, wrong = score(module)
        print(f"  tricky-text table, {label}: {right}/{total} sentence marks decided right; wrong: {', '.join(wrong)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="92f1400", help="git revision of the hand-written code")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    old_speech = load_old(args.baseline, "edgevox/voice/speechtext.py", "old_speechtext")
    old_textnorm = load_old(args.baseline, "edgevox/voice/textnorm.py", "old_textnorm")
    old_chunker = load_old(args.baseline, "edgevox/voice/chunker.py", "old_chunker")
    print(f"baseline {args.baseline} (hand-written) vs the working tree; {args.repeat} repeats, medians")
    bench_speech(old_speech, args.repeat)
    bench_wer(old_textnorm, args.repeat)
    bench_chunker(old_chunker, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
