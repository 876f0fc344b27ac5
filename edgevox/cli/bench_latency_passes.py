"""The latency bench's passes over one app: build it with the live microphone, play the clips,
wait for each reply, time the naive baseline, and run the barge-in and safety-stop trials.

:class:`LatencyBench` builds the apps (the first loads the models; later ones share its engines)
and returns each part's figures as plain dicts; :mod:`edgevox.cli.bench_latency` runs the
conditions, assembles the result and prints it.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.cli.bench_clips import SAMPLE_RATE_HZ, Clip
from edgevox.cli.bench_live import BusyLoad, LiveMic, Playback, count_turns, utterances

if TYPE_CHECKING:
    from edgevox.config.build import LoadedEngines


class _Tap:
    """Every event of one app's bus, for the bench's own waits (an observer on the publisher's thread)."""

    def __init__(self) -> None:
        self._events: list[Any] = []
        self._lock = threading.Lock()

    def record(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)

    def seen(self, cls: type, **fields: Any) -> list[Any]:
        with self._lock:
            events = list(self._events)
        return [e for e in events if isinstance(e, cls) and all(getattr(e, k) == v for k, v in fields.items())]


def _wait(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)  # CLI polling of a live run, not test synchronisation
    return predicate()


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The bench plays the microphone and the speaker; the tuning options override the config."""
    out: dict[str, Any] = {"audio.input.source": "device", "audio.input.file": None, "audio.output.sink": "device"}
    for option, key in (
        ("end_silence_ms", "endpointing.end_silence_ms"),
        ("pause_ms", "endpointing.pause_ms"),
        ("speculative", "voice.speculative_stt"),
        ("tts_priority_ms", "voice.tts_priority_ms"),
        ("first_fragment_words", "voice.first_fragment_words"),
    ):
        if getattr(args, option, None) is not None:
            out[key] = getattr(args, option)
    return out


class LatencyBench:
    """Builds the apps (the first loads the models; later ones share its engines) and runs the parts."""

    def __init__(self, args: argparse.Namespace) -> None:
        from edgevox.config import load_config

        self.args = args
        self.overrides = config_overrides(args)
        self.config = load_config(args.config, overrides=self.overrides)
        self.engines: LoadedEngines | None = None
        self.load_s = 0.0
        self.clean = True

    def build(self, **extra: Any) -> tuple[Any, LiveMic, _Tap, Any]:
        from edgevox.app import App, Engines
        from edgevox.config import build as wiring
        from edgevox.config import load_config
        from edgevox.engines.audio_wav import NullOut
        from edgevox.voice.latency import LatencyObserver

        config = load_config(self.args.config, overrides={**self.overrides, **extra}) if extra else self.config
        mic = LiveMic(config.audio.sample_rate_hz, config.audio.input.block_ms)
        if self.engines is None:
            t0 = time.perf_counter()
            # The voice is made by the app's own factory (config.build); only its rate is needed
            # first, for the output.
            tts = wiring.make_tts(config.tts)
            given = Engines(tts=tts)
        else:
            # The heavy engines are shared; the VAD is not (Silero carries its stream state along).
            tts = self.engines.tts
            given = Engines(stt=self.engines.stt, llm=self.engines.llm, tts=tts)
        given.audio_in = mic
        given.audio_out = NullOut(
            sample_rate_hz=tts.sample_rate_hz, realtime=True, block_ms=config.audio.output.block_ms
        )
        app = App.build(config, engines=given)
        if self.engines is None:
            self.engines = app.engines
            self.load_s = time.perf_counter() - t0
            app.engines.stt.transcribe(np.zeros(SAMPLE_RATE_HZ, dtype=np.float32))  # builds Whisper's buffers
            for _ in app.engines.tts.synthesize("Okay."):
                pass
        tap = _Tap()
        app.add_observer(tap.record)
        observer = LatencyObserver().attach(app.bus)
        return app, mic, tap, observer

    def stop(self, app: Any) -> None:
        self.clean = bool(app.stop(timeout_s=10.0)) and self.clean

    def settle(self, app: Any, tap: _Tap, playback: Playback, timeout_s: float = 90.0) -> bool:
        """Wait until the clip has been played, its utterances ended and their replies played,
        then for the echo tail (speech right after a reply would count as echo)."""
        from edgevox.voice.events import SpeechEnded, SpeechStarted

        config = app.config
        deadline = time.monotonic() + timeout_s
        if not playback.done.wait(timeout_s):
            return False
        quiet_s = (config.endpointing.end_silence_ms + 200) / 1000

        def utterances_ended() -> bool:
            started = {e.turn_id for e in tap.seen(SpeechStarted)}
            return time.time() >= playback.ended_at + quiet_s and started <= {e.turn_id for e in tap.seen(SpeechEnded)}

        ok = _wait(utterances_ended, deadline - time.monotonic())
        ok = app.wait_idle(max(0.1, deadline - time.monotonic())) and ok
        echo_s = (config.voice.echo_tail_ms + (app.loop.echo_delay_ms or 0.0) + 200) / 1000  # the loop's echo tail
        gap_end = time.monotonic() + echo_s
        _wait(lambda: time.monotonic() >= gap_end, 5)
        return app.wait_idle(max(0.1, deadline - time.monotonic())) and ok

    @staticmethod
    def naive_baseline(app: Any, clips: list[Clip], endpoint_waits_s: list[float]) -> list[float]:
        """THE NAIVE BASELINE, deliberately not the product's loop: the only place this bench
        drives engines itself. The app's own STT, agent and TTS, each stage run to completion
        on the whole clip (the same endpointing silence the loop waited for that clip, then
        transcribe, then the whole reply, then the whole speech), under the same load; seconds
        per clip. The silence is the loop's own (``endpoint_waits_s``), not the shortest
        ``end_silence_ms``: a pipeline that ends a statement or a number sooner would cut people
        off, which is not the comparison this baseline is for (overlap against sequence)."""
        from edgevox.agents.base import AgentStream

        agent = app.agent
        ctx = app.runtime.pool.make_ctx(session_id="bench-naive", agent_name=app.config.main_agent)
        naive: list[float] = []
        for clip, wait_s in zip(clips, endpoint_waits_s, strict=True):
            t = time.perf_counter()
            text = app.engines.stt.transcribe(clip.audio).text
            run = agent.stream(text, ctx)
            reply = "".join(run.text_deltas() if isinstance(run, AgentStream) else run)
            for _ in app.engines.tts.synthesize(reply or "Okay."):
                pass  # the whole speech must exist before the first sample can play
            naive.append(wait_s + time.perf_counter() - t)
        return naive

    @staticmethod
    def endpoint_waits(tap: Any, windows: list[tuple[float, float]], end_silence_s: float) -> list[float]:
        """Per clip, the silence the loop waited before ending its utterance (the longest, when
        the clip was heard as several; ``end_silence_s`` for a clip that was not heard)."""
        from edgevox.voice.events import SpeechEnded

        count = count_turns(windows, utterances(tap.seen(object)))
        ends = {e.turn_id: e.timestamp - e.last_voiced_at for e in tap.seen(SpeechEnded) if not e.ignored}
        waits = [[ends[t] for t in ids if t in ends] for ids in count.per_clip]
        return [max(w) if w else end_silence_s for w in waits]

    def measure(self, clips: list[Clip], condition: str, busy: int, built: Any = None) -> dict[str, Any]:
        """One pass over the clips and the naive baseline, on a fresh app (or ``built``, from
        :meth:`build`), with ``busy`` processes."""
        from edgevox.voice.events import Chunk, SpeechEnded, TranscriptEvent, TurnStarted
        from edgevox.voice.latency import summarize

        app, mic, tap, observer = built or self.build()
        app.start()
        windows: list[tuple[float, float]] = []
        stuck: list[str] = []
        naive: list[float] = []
        try:
            with BusyLoad(busy) as load:
                for clip in clips:
                    playback = mic.play(clip.audio)
                    if not self.settle(app, tap, playback):
                        stuck.append(clip.name)
                    windows.append((playback.started_at, playback.ended_at))
                waits = self.endpoint_waits(tap, windows, app.config.endpointing.end_silence_ms / 1000)
                naive = self.naive_baseline(app, clips, waits)
                pids = load.pids
        finally:
            self.stop(app)
        count = count_turns(windows, utterances(tap.seen(object)))
        heard = {t for ids in count.per_clip for t in ids}
        ignored = {e.turn_id for e in tap.seen(SpeechEnded) if e.ignored and e.turn_id in heard}
        turns = {e.turn_id for e in tap.seen(TurnStarted) if e.turn_id in heard}
        """Utterances that became turns (not empty, not a stop phrase, not ignored as echo)."""
        transcripts = {e.turn_id: e for e in tap.seen(TranscriptEvent) if e.turn_id in heard}
        summary = observer.summary(turn_ids=turns)
        for key in ("barge_in_audio_stop", "stop_cancel"):
            summary.pop(key, None)
        summary["stt_compute"] = summarize([e.stt_s for t, e in transcripts.items() if t in turns])
        summary["naive_baseline"] = summarize(naive)
        loop_p50 = summary["speech_end->first_audio"].get("p50")
        first_chunks = {e.turn_id: e.text for e in tap.seen(Chunk) if e.index == 0}
        trace = []
        for turn in observer.turns():
            if turn.turn_id in turns and "speech_end" in turn.marks:
                origin = turn.marks["speech_end"]
                trace.append(
                    {
                        "turn_id": turn.turn_id,
                        "ms_after_speech_end": {k: round((v - origin) * 1000) for k, v in turn.marks.items()},
                        "speculative_stt": bool(
                            transcripts.get(turn.turn_id) and transcripts[turn.turn_id].speculative
                        ),
                        "first_chunk": first_chunks.get(turn.turn_id, ""),
                    }
                )
        singles = [i for i, c in enumerate(clips) if c.group != "pause"]
        pauses = [i for i, c in enumerate(clips) if c.group == "pause"]
        return {
            "condition": condition,
            "busy_processes": busy,
            "busy_pids": pids,
            "summary": summary,
            "ratio_naive_over_loop_p50": summary["naive_baseline"]["p50"] / loop_p50 if loop_p50 else None,
            "utterances": len(heard),
            "turns": len(turns),
            "echo_ignored": len(ignored),
            "clips": len(singles),
            "pause_cases": len(pauses),
            "split": [clips[i].name for i in count.split if i in singles],
            "merged": len([t for t in count.merged if any(t in count.per_clip[i] for i in singles)]),
            "missed": [clips[i].name for i in count.missed if i in singles],
            "pause_split": [clips[i].name for i in count.split if i in pauses],
            "pause_missed": [clips[i].name for i in count.missed if i in pauses],
            "pause_merged": len([t for t in count.merged if any(t in count.per_clip[i] for i in pauses)]),
            "stuck": stuck,
            "speculative_transcripts": sum(1 for t, e in transcripts.items() if e.speculative and t in turns),
            "heard": [
                {
                    "said": c.text,
                    "heard": " | ".join(
                        transcripts[t].text + (" (ignored as echo)" if t in ignored else "")
                        for t in ids
                        if t in transcripts
                    ),
                    "utterances": len(ids),
                }
                for c, ids in zip(clips, count.per_clip, strict=True)
            ],
            "trace": trace,
        }

    def barge_ins(self, clips: list[Clip], trials: int) -> dict[str, Any]:
        """Speech over the reply, on the config with the echo guard off (so speech may barge in)."""
        from edgevox.voice.events import FirstAudio

        if trials == 0 or not clips:
            return {"n": 0}
        app, mic, tap, observer = self.build(**{"voice.echo_guard": "off", "voice.barge_in": True})
        app.start()
        try:
            for trial in range(trials):
                clip = clips[trial % len(clips)]
                before = len(tap.seen(FirstAudio))
                app.submit_text("Tell me a long story about a robot.")
                if _wait(lambda b=before: len(tap.seen(FirstAudio)) > b, 60):
                    self.settle(app, tap, mic.play(clip.audio))
                app.wait_idle(60)
        finally:
            self.stop(app)
        return observer.summary()["barge_in_audio_stop"]

    def stops(self, stop_audio: np.ndarray, trials: int) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        """ "Stop" spoken during a long reply, with the config's own echo guard."""
        from edgevox.voice.events import FirstAudio, Stopped, TranscriptEvent, TurnDone
        from edgevox.voice.latency import summarize

        if trials == 0:
            return {"n": 0}, {"n": 0}, []
        app, mic, tap, observer = self.build()
        app.start()
        to_done: list[float] = []
        ended_as: list[str] = []
        topics = ("a robot", "the sea", "a city on Mars", "a lost cat", "a forest")
        try:
            for trial in range(trials):
                before = len(tap.seen(FirstAudio))
                turn_id = app.submit_text(f"Tell me a long story about {topics[trial % len(topics)]}.")
                if not _wait(lambda b=before: len(tap.seen(FirstAudio)) > b, 60):
                    ended_as.append("no reply audio")
                    app.wait_idle(60)
                    continue
                n_stops = len(tap.seen(Stopped))
                mic.play(stop_audio)
                if _wait(lambda n=n_stops: len(tap.seen(Stopped)) > n, 30):
                    _wait(lambda t=turn_id: bool(tap.seen(TurnDone, turn_id=t)), 10)
                    done = tap.seen(TurnDone, turn_id=turn_id, status="stopped")
                    heard = [e for e in tap.seen(TranscriptEvent) if e.stop_phrase]
                    if done and heard:
                        to_done.append(done[0].timestamp - heard[-1].timestamp)
                    ended = tap.seen(TurnDone, turn_id=turn_id)
                    ended_as.append(ended[0].status if ended else "turn still running")
                else:
                    texts = [e.text for e in tap.seen(TranscriptEvent)][-1:]
                    ended_as.append("no stop heard: " + repr(texts))
                app.wait_idle(60)
        finally:
            self.stop(app)
        return observer.summary()["stop_cancel"], summarize(to_done), ended_as
