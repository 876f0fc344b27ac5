"""``edgevox bench spoken-stop``: is a spoken "stop" heard over the robot's own voice?

The room is a private PulseAudio with a null sink (``edgevox.testing.pulse``): the robot's
speaker and a "user" stream play into the same sink, and the loop's microphone is the sink's
monitor, so the microphone hears the user mixed with the robot's reply, as in a room where the
robot hears itself. With ``--latency-ms 300`` the robot's speaker stream asks PulseAudio for
300 ms of latency (a Bluetooth speaker, or PulseAudio after underruns on a loaded CPU): its
echo reaches the microphone that much later than the reference says it played.

Each trial: the robot starts a long reply (real Piper speech, ``VoiceLoop.say``); a random
0.3-1.5 s into it, the user says one utterance. A *stop* trial (N of them) is heard when the
loop publishes ``Stopped`` for a spoken phrase within 4 s of the word's end; its latency is
from the end of the word (as the user's stream played it: the figure includes the device's
output latency) to that ``Stopped`` (every cancellation issued). An *other* trial (M of them:
near words such as "start", "top", "shop", "stopped", "don't stop", and ordinary requests)
counts a false stop if any spoken ``Stopped`` follows. Between trials the reply is ended with
``interrupt()`` (not a stop).

Voices: the embedded Piper voice at three speaking rates, each also shifted in pitch and tempo
by resampling (+-8 %: a higher and a lower voice), espeak-ng's voices when ``espeak-ng`` is
installed, and the recordings under ``--speech`` whose transcript is a stop phrase. Utterances
are peak-normalised to a random level in ``--user-level`` over a robot speaking at
``--robot-gain``; the printed mic SNR is the user's RMS over the echo's during the word.

Engines: the configured VAD, STT (Whisper) and TTS; the agent is a scripted one (it only
matters that the loop speaks). ``--guard`` runs the same trials once per echo guard, so the
guards are compared on identical audio and seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from edgevox.cli.args import COUNT, whole
from edgevox.cli.bench_live import BusyLoad
from edgevox.cli.bench_voices import RATE_HZ, Clip, espeak_voices, piper_voices, recorded_voices

STOPS = (
    "Stop!",
    "Stop.",
    "stop",
    "Stop right now.",
    "Stop, stop!",
    "Please stop.",
    "Robot, stop.",
    "Stop the robot.",
    "Okay, stop.",
    "Emergency stop!",
    "Halt!",
    "Freeze!",
)
OTHERS = (
    "Start.",
    "Start the robot.",
    "Top.",
    "Shop.",
    "Stopped.",
    "Don't stop.",
    "Please don't stop.",
    "Non-stop.",
    "Spot.",
    "Step.",
    "Stock.",
    "Store.",
    "Go to the kitchen.",
    "What time is it?",
    "Tell me more.",
    "That's good.",
    "Keep going.",
    "Hold on a second.",
)
REPLY = (
    "Here is a long reply so that the robot is still talking when you speak to it. "
    "It goes on about the weather, the garden, the plants that need water, and the cat. "
    "It keeps going for a good while longer, sentence after sentence, until it is interrupted."
)


def add_spoken_stop_parser(bench_subparsers: Any) -> argparse.ArgumentParser:
    p = bench_subparsers.add_parser(
        "spoken-stop",
        help="spoken stops over the robot's own voice in a PulseAudio room: heard, latency, false stops",
    )
    p.add_argument("--stops", type=COUNT, default=200, help="stop trials per setting (default 200)")
    p.add_argument("--others", type=whole(high=100000), default=200, help="non-stop trials per setting (default 200)")
    p.add_argument("--guard", nargs="+", default=["aec"], choices=["aec", "energy_gate", "half_duplex", "off"])
    p.add_argument("--latency-ms", nargs="+", type=whole(high=2000), default=[0, 300], help="robot speaker latency")
    p.add_argument("--robot-gain", type=float, default=0.3, help="the robot's output gain (default 0.3)")
    p.add_argument("--user-level", nargs=2, type=float, default=(0.4, 0.9), metavar=("LO", "HI"))
    p.add_argument("--speech", type=Path, default=Path("../shared/speech"), help="recordings with MANIFEST.tsv")
    p.add_argument("--busy", type=whole(high=64), default=0, metavar="N", help="keep N cores busy while measuring")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_spoken_stop_bench)
    return p


class _Room:
    """One VoiceLoop in the PulseAudio room with a user stream beside it (see the module docstring)."""

    def __init__(self, engines: Any, guard: str, latency_ms: int, robot_gain: float) -> None:
        from edgevox.agents.llm_agent import LLMAgent
        from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut
        from edgevox.runtime.bus import EventBus
        from edgevox.testing import ScriptedLLM
        from edgevox.voice.loop import VoiceLoop, VoiceSettings

        vad, stt, tts = engines
        self.bus = EventBus("spoken-stop-bench")
        self._cond = threading.Condition()
        self.stops: list[tuple[float, Any]] = []
        self.heard: list[tuple[float, str]] = []
        """(when, transcript) of every utterance the microphone heard."""
        self.ends: list[float] = []
        """When each utterance ended (the endpoint fired)."""
        self.bus.add_observer(self._on, name="spoken-stop-bench")
        self.user = SoundDeviceOut(device="pulse", sample_rate_hz=RATE_HZ, device_rate_hz=RATE_HZ)
        mic = SoundDeviceIn(device="pulse", device_rate_hz=RATE_HZ)
        speaker = _LateSpeaker(latency_ms, device="pulse", sample_rate_hz=tts.sample_rate_hz, device_rate_hz=RATE_HZ)
        settings = VoiceSettings(echo_guard=guard)
        agent = LLMAgent("chat", llm=ScriptedLLM(default="Okay."))
        self.loop = VoiceLoop(self.bus, vad, stt, agent, _Gain(tts, robot_gain), mic, speaker, settings)
        self.speaker = speaker
        self.erle: float | None = None
        self.linear_erle: tuple[float | None, float | None] = (None, None)
        """The linear stage's ERLE over the robot talking alone before the trials and after them."""
        """Echo return loss enhancement over the robot talking alone (AEC only)."""

    def _on(self, event: Any) -> None:
        from edgevox.voice.events import SpeechEnded, Stopped, TranscriptEvent

        if isinstance(event, Stopped) and event.phrase:
            with self._cond:
                self.stops.append((time.time(), event))
                self._cond.notify_all()
        elif isinstance(event, TranscriptEvent) and event.origin == "voice":
            with self._cond:
                self.heard.append((time.time(), event.text))
        elif isinstance(event, SpeechEnded):
            with self._cond:
                self.ends.append(time.time())

    def __enter__(self) -> _Room:
        self.user.start()
        self.loop.start()
        self.erle, linear = self._measure_erle()
        self.linear_erle = (linear, None)
        return self

    def measure_linear_erle_after(self) -> None:
        """After the trials: the linear stage's ERLE once it has adapted to the room."""
        self.linear_erle = (self.linear_erle[0], self._measure_erle()[1])

    def _measure_erle(self, seconds: float = 6.0) -> tuple[float | None, float | None]:
        """The robot talks alone for ``seconds``: echo return loss enhancement over it, of the
        canceller and of its linear stage (AEC only)."""
        from edgevox.voice.aec import erle_db

        aec = self.loop.echo_canceller
        before = (aec.energies, aec.linear_energies) if aec is not None else None
        self.speak_until_audible()
        time.sleep(seconds)  # the robot talks alone: nothing to wait for but time
        self.loop.interrupt()
        if not self.loop.wait_idle(20):
            raise RuntimeError("the loop did not settle after the echo measurement")
        if aec is None or before is None:
            return None, None
        return erle_db(before[0], aec.energies), erle_db(before[1], aec.linear_energies)

    def __exit__(self, *exc: object) -> None:
        self.loop.stop(10)
        self.user.stop()
        self.bus.close()

    def speak_until_audible(self) -> None:
        """The robot starts its reply; returns once it plays."""
        start = self.speaker.played_samples
        self.loop.say(REPLY)
        deadline = time.monotonic() + 20
        while self.speaker.played_samples - start < self.speaker.sample_rate_hz // 10:
            if time.monotonic() > deadline:
                raise TrialFailed("the robot's reply never played")
            time.sleep(0.01)  # polling the device position; there is no event per block

    def trial(self, clip: Clip, level: float, wait_s: float, *, is_stop: bool) -> tuple[float | None, float, list[str]]:
        """The user says ``clip`` ``wait_s`` into the reply: (seconds from the word's end to the
        spoken stop, or None; the mic SNR of the word over the echo in dB; what was heard).

        A stop is waited for up to 4 s after the word; then (and for other words at once) the
        utterance is given 1 s to end, the loop to settle (its transcripts all handled), so a
        late stop is counted for the trial whose words caused it."""
        self.speak_until_audible()
        time.sleep(wait_s)  # a random point of the reply: nothing to wait for but time
        echo = self.loop.speaker.reference.level(self.speaker.played_samples, self.speaker.sample_rate_hz // 2)
        with self._cond:
            seen, said = len(self.stops), len(self.heard)
        written = time.time()
        self.user.write(np.concatenate([clip.audio * level, np.zeros(RATE_HZ // 2, dtype=np.float32)]))
        word_end = written + clip.voiced_end_s
        user_rms = float(np.sqrt(np.mean(np.square(clip.audio[: int(clip.voiced_end_s * RATE_HZ)] * level))))
        snr = 20 * np.log10(max(user_rms, 1e-6) / max(echo, 1e-6))
        if is_stop:
            with self._cond:
                self._cond.wait_for(lambda: len(self.stops) > seen, timeout=max(0.0, word_end + 4.0 - time.time()))
        time.sleep(max(0.0, word_end + 1.0 - time.time()))  # the utterance's endpoint has fired
        self.loop.interrupt()
        if not self.loop.wait_idle(20):
            raise TrialFailed("the loop did not settle between trials")
        with self._cond:
            heard = self.stops[seen][0] - word_end if len(self.stops) > seen else None
            texts = [text for _, text in self.heard[said:]]
        return heard, float(snr), texts


class TrialFailed(RuntimeError):
    """A trial that could not be run (the reply never played, the loop did not settle): it is
    counted and reported, and the run goes on; three in a row end it."""


MAX_FAILED_IN_A_ROW = 3


class _LateSpeaker:
    """A SoundDeviceOut whose stream asks PulseAudio for ``latency_ms`` (PULSE_LATENCY_MSEC is
    read by libpulse when a stream connects; only this stream gets it)."""

    def __new__(cls, latency_ms: int, **kwargs: Any) -> Any:
        from edgevox.engines.audio_sounddevice import SoundDeviceOut

        class Late(SoundDeviceOut):
            def _open(self) -> None:
                if not latency_ms:
                    return super()._open()
                os.environ["PULSE_LATENCY_MSEC"] = str(latency_ms)
                try:
                    return super()._open()
                finally:
                    os.environ.pop("PULSE_LATENCY_MSEC", None)

        return Late(**kwargs)


class _Gain:
    """The TTS at the robot's output gain."""

    def __init__(self, tts: Any, gain: float) -> None:
        self.tts, self.gain, self.sample_rate_hz = tts, gain, tts.sample_rate_hz

    def synthesize(self, text: str) -> Any:
        for audio in self.tts.synthesize(text):
            yield (self.gain * audio).astype(audio.dtype)


def _summary(latencies: list[float], heard: int, n: int, false: int, m: int, snrs: list[float]) -> dict[str, Any]:
    from edgevox.voice.latency import percentile

    lat = [1000 * v for v in latencies] or [float("nan")]
    return {
        "stops_heard": heard,
        "stops": n,
        "false_stops": false,
        "others": m,
        "latency_ms": {"p50": statistics.median(lat), "p95": percentile(lat, 95), "max": max(lat)},
        "mic_snr_db": {"p5": percentile(snrs, 5), "p50": statistics.median(snrs)} if snrs else {},
    }


def _note(misses: list[str], line: str) -> None:
    """A miss, a false stop or a failed trial: kept for the summary and printed at once (a long
    run that ends early still shows what it saw)."""
    misses.append(line)
    print(line, file=sys.stderr, flush=True)


def run_spoken_stop_bench(args: argparse.Namespace) -> int:
    from edgevox.config.build import make_stt, make_tts, make_vad
    from edgevox.config.schema import STTConfig, TTSConfig, VADConfig
    from edgevox.testing.pulse import private_pulseaudio, reinitialize_portaudio
    from edgevox.voice.stop_phrases import StopPhraseMatcher

    matcher = StopPhraseMatcher()
    rng = random.Random(args.seed)
    stops = piper_voices(STOPS) + espeak_voices(STOPS)
    others = piper_voices(OTHERS) + espeak_voices(OTHERS)
    rec_stops, rec_others = recorded_voices(args.speech, matcher.match)
    stops += rec_stops
    others += rec_others
    lo, hi = args.user_level
    plan = [(c, True, rng.uniform(lo, hi), rng.uniform(0.3, 1.5)) for c in rng.choices(stops, k=args.stops)]
    plan += [(c, False, rng.uniform(lo, hi), rng.uniform(0.3, 1.5)) for c in rng.choices(others, k=args.others)]
    rng.shuffle(plan)
    engines = (
        make_vad(VADConfig(confirm="none"), RATE_HZ),
        make_stt(STTConfig()),
        make_tts(TTSConfig()),
    )
    results: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "busy_cores": args.busy,
        "voices": sorted({c.voice for c in stops}),
        "settings": {},
    }
    misses: list[str] = []
    with BusyLoad(args.busy):
        for latency_ms in args.latency_ms:
            for guard in args.guard:
                with private_pulseaudio(rate_hz=RATE_HZ):
                    reinitialize_portaudio()
                    latencies: list[float] = []
                    snrs: list[float] = []
                    heard = false = stops_run = others_run = failed_in_a_row = 0
                    with _Room(engines, guard, latency_ms, args.robot_gain) as room:
                        for clip, is_stop, level, wait_s in plan:
                            try:
                                got, snr, texts = room.trial(clip, level, wait_s, is_stop=is_stop)
                            except TrialFailed as exc:
                                failed_in_a_row += 1
                                _note(misses, f"{guard} {latency_ms} ms: trial not run ({clip.text!r}): {exc}")
                                if failed_in_a_row >= MAX_FAILED_IN_A_ROW:
                                    raise
                                room.loop.interrupt()
                                room.loop.wait_idle(20)
                                continue
                            failed_in_a_row = 0
                            if is_stop:
                                stops_run += 1
                                snrs.append(snr)
                                if got is not None:
                                    heard += 1
                                    latencies.append(got)
                                else:
                                    _note(
                                        misses,
                                        f"{guard} {latency_ms} ms: missed {clip.text!r} ({clip.voice}): heard {texts}",
                                    )
                            else:
                                others_run += 1
                                if got is not None:
                                    false += 1
                                    _note(
                                        misses,
                                        f"{guard} {latency_ms} ms: FALSE stop on {clip.text!r} ({clip.voice}): "
                                        f"heard {texts}",
                                    )
                        if guard == "aec":
                            room.measure_linear_erle_after()
                        erle, linear_erle = room.erle, room.linear_erle
                    reinitialize_portaudio()
                key = f"{guard} @ {latency_ms} ms"
                results["settings"][key] = _summary(latencies, heard, stops_run, false, others_run, snrs)
                print(f"{key}: heard {heard}/{stops_run}, false stops {false}/{others_run}", file=sys.stderr)
                results["settings"][key]["erle_db"] = erle
                results["settings"][key]["linear_erle_db"] = linear_erle
    results["misses"] = misses
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"machine: {results['cpus']} CPUs, {args.busy} kept busy; {len(results['voices'])} stop voices")
        for key, s in results["settings"].items():
            lat = s["latency_ms"]
            erle_text = "" if s["erle_db"] is None else f"  ERLE {s['erle_db']:.1f} dB"
            lin = s["linear_erle_db"]
            if lin[0] is not None and lin[1] is not None:
                erle_text += f" (linear stage {lin[0]:.1f} dB before the trials, {lin[1]:.1f} dB after)"
            print(
                f"{key:22s} stops heard {s['stops_heard']}/{s['stops']}  false stops {s['false_stops']}/{s['others']}"
                f"  word end -> stopped p50 {lat['p50']:.0f} ms p95 {lat['p95']:.0f} ms"
                f"  mic SNR p50 {s['mic_snr_db'].get('p50', float('nan')):.1f} dB{erle_text}"
            )
        for miss in misses:
            print(miss)
    return 0
