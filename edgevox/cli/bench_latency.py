"""``edgevox bench latency [MANIFEST.tsv]``: end-to-end voice latency of the application itself.

The bench builds the application from a config (``default`` unless ``--config``) the way
``edgevox run default`` does - ``load_config`` then :meth:`edgevox.app.App.build` - and
replaces only the two devices: the microphone by a :class:`LiveMic` that plays clips in
real time (20 ms blocks, paced by the clock) and the speaker by a real-time ``NullOut``.
What is measured is therefore the product's loop: its VAD, endpointing, STT, agent and
memory, chunker, TTS and settings. Per turn the latency observer records the user's last
voiced frame -> transcript -> first token -> first chunk -> first audio out. Also:

* turns against clips: an utterance cut in two by endpointing is SPLIT, two clips heard
  as one turn are MERGED (from ``SpeechStarted``/``SpeechEnded`` inside each clip's
  window), so a latency gained by cutting users off shows up;
* a naive baseline on the same clips (endpointing silence, then transcribe, then the
  whole reply, then the whole speech) and its ratio to the loop;
* barge-in: speech over the reply, time to ``AudioOut.clear()`` (target <= 150 ms), on
  the same config with ``voice.echo_guard: off`` (half-duplex ignores speech over the
  reply, so there is no barge-in to time);
* safety stop: "stop" spoken during a reply with the config's echo guard; time from its
  transcript to every cancellation being issued (target <= 100 ms) and to the turn's end;
* ``--load N``: N busy-loop processes run during the measured part; ``--compare-load``
  measures idle, then loaded, in one run and prints the loaded/idle ratio.

Clips: from the manifest (columns ``file``, ``duration_s``, ``transcript``, ``category``),
``--clips`` of them shared out in turn among short commands, spoken digits and read
sentences of 3-10 s, each group's share spread evenly over its rows (fixed, not picked by
hand), plus ``--pauses`` digit strings made of two or three real digit clips with a
400-500 ms pause between words, where endpointing cuts people off. Without a manifest a
few sentences are synthesized with the app's voice. Every clip is followed by silence
until the reply has played. The barge-in and stop trials run once, under the first
measured condition.

Rejected: wiring engines and a ``VoiceLoop`` by hand (what this bench did before). It
measured settings and an agent the product does not use, and drifted from it.

Modules: this one is the command (options, conditions, the result and its printing);
:mod:`~edgevox.cli.bench_clips` picks and reads the clips, :mod:`~edgevox.cli.bench_live`
plays them in real time (with the busy load) and counts turns against them, and
:mod:`~edgevox.cli.bench_latency_passes` builds the app and runs each pass and trial.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

from edgevox.cli.args import COUNT, whole
from edgevox.cli.bench_clips import (
    DEFAULT_MANIFEST,
    PAUSE_CASES,
    Clip,
    load_clips,
    stop_clip,
    synthesized_clips,
    synthesized_stop,
)
from edgevox.cli.bench_latency_passes import LatencyBench
from edgevox.cli.bench_live import BusyLoad
from edgevox.errors import ConfigError

TARGETS_S = {"idle": {"p50": 0.5, "p95": 0.8}, "loaded": {"p50": 0.7}}
"""speech_end->first_audio targets per condition."""
TRIAL_TARGETS_S = {"barge_in_audio_stop": 0.15, "stop_cancel": 0.1}


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    from edgevox.voice.stop_phrases import StopPhraseMatcher

    bench = LatencyBench(args)
    config = bench.config
    matcher = StopPhraseMatcher(config.safety.stop_phrases or ("stop",))

    def is_stop(text: str) -> bool:
        return matcher.match(text) is not None

    manifest = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    if args.manifest and not manifest.is_file():
        raise ConfigError(f"bench latency: manifest {manifest}: no such file")
    clips: list[Clip] = []
    if manifest.is_file():
        from edgevox.config.build import make_vad

        # A VAD of its own (the config's kind) cuts the pause cases' words; the app's is untouched.
        vad = make_vad(config.vad, config.audio.sample_rate_hz) if args.pauses else None
        clips = load_clips(manifest, args.clips, args.pauses, is_stop, vad)
    busy = args.load or (os.cpu_count() or 1)
    conditions = (
        [("idle", 0), ("loaded", busy)] if args.compare_load else [("loaded" if args.load else "idle", args.load)]
    )
    passes = []
    stop_cancel: dict[str, Any] = {"n": 0}
    stop_to_done: dict[str, Any] = {"n": 0}
    stop_trials: list[str] = []
    barge: dict[str, Any] = {"n": 0}
    trial_pids: list[int] = []
    if not clips and manifest.is_file():
        raise ConfigError(f"bench latency: {manifest}: no usable clips (see --help for the groups used)")
    for n, (condition, processes) in enumerate(conditions):
        built = None
        if not clips:  # no manifest: say a few sentences with the app's own voice
            built = bench.build()
            assert bench.engines is not None  # the first build keeps its engines
            clips = synthesized_clips(bench.engines.tts, args.clips)
        passes.append(bench.measure(clips, condition, processes, built))
        if n == 0 and (args.barge_ins or args.stops):
            with BusyLoad(processes) as load:
                trial_pids = load.pids
                barge = bench.barge_ins([c for c in clips if c.group != "pause"], args.barge_ins)
                if args.stops:
                    audio = stop_clip(manifest, is_stop) if manifest.is_file() else None
                    if audio is None:
                        assert bench.engines is not None  # measure() built the app
                        audio = synthesized_stop(bench.engines.tts)
                    stop_cancel, stop_to_done, stop_trials = bench.stops(audio, args.stops)
    idle = next((p for p in passes if p["condition"] == "idle"), None)
    loaded = next((p for p in passes if p["condition"] == "loaded"), None)
    ratio = None
    if idle and loaded:
        a = idle["summary"]["speech_end->first_audio"].get("p50")
        b = loaded["summary"]["speech_end->first_audio"].get("p50")
        ratio = b / a if a and b else None
    return {
        "config": str(args.config),
        "app": config.name,
        "manifest": str(manifest) if manifest.is_file() else None,
        "clips": [{"name": c.name, "said": c.text, "group": c.group} for c in clips],
        "load_s": bench.load_s,
        "passes": passes,
        "loaded_over_idle_p50": ratio,
        "barge_in_audio_stop": barge,
        "stop_cancel": stop_cancel,
        "stop_transcript->turn_done": stop_to_done,
        "stop_trials": stop_trials,
        "trial_busy_pids": trial_pids,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average_1min": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
        "clean_stop": bench.clean,
        "settings": {
            "end_silence_ms": config.endpointing.end_silence_ms,
            "pause_ms": config.endpointing.pause_ms,
            "speculative_stt": config.voice.speculative_stt,
            "tts_priority_ms": config.voice.tts_priority_ms,
            "first_fragment_words": config.voice.first_fragment_words,
            "echo_guard": config.voice.echo_guard,
            "llm.max_tokens": config.llm.max_tokens,
        },
    }


# --- printing -----------------------------------------------------------------------------------


def _row(name: str, stats: dict[str, Any], note: str = "") -> str:
    if not stats.get("n"):
        return f"{name:28s} {0:3d}"
    return (
        f"{name:28s} {stats['n']:3d} {stats['p50'] * 1000:8.0f} {stats['p95'] * 1000:8.0f} "
        f"{stats['max'] * 1000:8.0f}  {note}".rstrip()
    )


def _verdict(stats: dict[str, Any], targets: dict[str, float]) -> str:
    if not stats.get("n"):
        return ""
    parts = [f"{k} <= {v * 1000:.0f} ms {'ok' if stats[k] <= v else 'MISSED'}" for k, v in targets.items()]
    return "target: " + ", ".join(parts)


def _print_pass(p: dict[str, Any], trace: bool) -> None:
    busy = f"{p['busy_processes']} busy processes" if p["busy_processes"] else "no busy processes"
    print(f"\n{p['condition'].upper()} ({busy})")
    print(f"{'measure':28s} {'n':>3s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}")
    targets = TARGETS_S[p["condition"]]
    for name, stats in p["summary"].items():
        print(_row(name, stats, _verdict(stats, targets) if name == "speech_end->first_audio" else ""))
    ratio = p["ratio_naive_over_loop_p50"]
    print(f"naive baseline / loop (p50): {ratio:.2f}x" if ratio else "naive baseline / loop: no loop figure")
    print(
        f"{p['utterances']} utterances heard for {p['clips']} clips + {p['pause_cases']} pause cases, "
        f"{p['turns']} turns, {p['echo_ignored']} ignored as echo (spoken during a reply)"
    )
    print(
        f"clips split {len(p['split'])}, merged {p['merged']}, missed {len(p['missed'])}; "
        f"pause cases split {len(p['pause_split'])} of {p['pause_cases']}, merged {p['pause_merged']}, "
        f"missed {len(p['pause_missed'])}"
    )
    for what in ("split", "missed", "pause_split", "pause_missed", "stuck"):
        if p[what]:
            print(f"  {what.replace('_', ' ')}: " + ", ".join(p[what]))
    print(f"speculative transcripts: {p['speculative_transcripts']} of {p['turns']} turns")
    if trace:
        for h in p["heard"]:
            print(
                f"  said {h['said']!r:42s} heard {h['heard']!r}"
                + (f" ({h['utterances']} utterances)" if h["utterances"] != 1 else "")
            )
        print("per turn, ms after the last voiced frame:")
        for row in p["trace"]:
            marks = " ".join(f"{k}={v}" for k, v in row["ms_after_speech_end"].items() if k != "speech_end")
            spec = " (speculative STT)" if row["speculative_stt"] else ""
            print(f"  turn {row['turn_id']:3d}: {marks}{spec}  first chunk {row['first_chunk']!r}")


def _print(result: dict[str, Any], trace: bool) -> None:
    groups: dict[str, int] = {}
    for c in result["clips"]:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    print(
        f"config {result['config']} ({result['app']}): "
        + ", ".join(f"{n} {g}" for g, n in groups.items())
        + f"; models loaded in {result['load_s']:.1f} s; peak RSS {result['peak_rss_mb']:.0f} MB"
    )
    print(
        f"CPUs {result['cpu_count']}, load average {result['load_average_1min']:.1f} (other work skews timings; "
        "compare ratios taken in one run)"
    )
    for p in result["passes"]:
        _print_pass(p, trace)
    if result["loaded_over_idle_p50"]:
        print(f"\nloaded / idle (p50 speech_end->first_audio): {result['loaded_over_idle_p50']:.2f}x")
    print(f"\nTRIALS (under the first condition: {result['passes'][0]['condition']})")
    for name in ("barge_in_audio_stop", "stop_cancel", "stop_transcript->turn_done"):
        target = TRIAL_TARGETS_S.get(name)
        print(_row(name, result[name], _verdict(result[name], {"p50": target}) if target else ""))
    print("stop trials, how the talking turn ended: " + (", ".join(result["stop_trials"]) or "none"))
    print("settings: " + ", ".join(f"{k}={v}" for k, v in result["settings"].items()))
    if not result["clean_stop"]:
        print("shutdown was not clean")


def _run(args: argparse.Namespace) -> int:
    result = run_bench(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result, bool(args.trace))
    return 0 if result["clean_stop"] else 1


def add_latency_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``latency`` to the ``edgevox bench`` sub-commands."""
    p = bench_subparsers.add_parser(
        "latency",
        help="end-of-speech -> first audio latency of the application built from a config",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument(
        "manifest",
        nargs="?",
        help=f"TSV with columns file, duration_s, transcript, category (default {DEFAULT_MANIFEST})",
    )
    p.add_argument(
        "--config", default="default", help="config file or builtin name to build the app from (default: default)"
    )
    p.add_argument("--clips", type=COUNT, default=30, help="clips from the manifest (0 = every usable one; default 30)")
    p.add_argument(
        "--pauses",
        type=whole(high=len(PAUSE_CASES)),
        default=3,
        help="digit strings with 400-500 ms pauses (default 3)",
    )
    p.add_argument("--barge-ins", type=COUNT, default=3, help="barge-in trials")
    p.add_argument("--stops", type=COUNT, default=3, help="safety-stop trials")
    p.add_argument("--load", type=whole(high=1024), default=0, help="busy-loop processes during the measured part")
    p.add_argument(
        "--compare-load",
        action="store_true",
        help="measure idle, then with --load processes (default: one per CPU), and print the ratio",
    )
    p.add_argument(
        "--end-silence-ms", type=whole(low=1, high=60_000), default=None, help="override endpointing.end_silence_ms"
    )
    p.add_argument("--pause-ms", type=whole(high=60_000), default=None, help="override endpointing.pause_ms")
    p.add_argument(
        "--speculative", action=argparse.BooleanOptionalAction, default=None, help="override voice.speculative_stt"
    )
    p.add_argument("--tts-priority-ms", type=whole(high=60_000), default=None, help="override voice.tts_priority_ms")
    p.add_argument(
        "--first-fragment-words", type=whole(high=1000), default=None, help="override voice.first_fragment_words"
    )
    p.add_argument(
        "--trace", action="store_true", help="also print what each clip was heard as, and every turn's marks"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=_run)
    return p


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - for running the module directly
    parser = argparse.ArgumentParser(prog="edgevox bench")
    add_latency_parser(parser.add_subparsers(dest="bench"))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
