"""The soak bench's user: the script of spoken and typed steps, played against a running App, and
the clips it speaks.

The user's voice is a second output stream into the PulseAudio sink the App listens to (see
:mod:`edgevox.cli.bench_soak`). When a step does not end within the turn timeout the driver
prints every edgevox thread's stack and the speaker's state: where the lost turn hangs.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.cli.bench_soak_ledger import TurnLedger

SINK_RATE_HZ = 16000
ROOMS = ("kitchen", "bedroom", "office", "bathroom", "living room")
TOPICS = ("a robot", "the sea", "a lighthouse", "a lost cat", "the moon")
STOP_CLIP = "commands/felix_stop_2.wav"

SCRIPT: tuple[tuple[str, str, str], ...] = (
    # (what the step exercises, action, argument)
    ("command, spoken", "speak", "classic/goforward.wav"),
    ("question, typed", "type", "what is the battery level"),
    ("question, spoken", "speak", "commands/voice2json_what_time_is_it.wav"),
    ("skill, typed; spoken stop mid-drive", "stop_mid_skill", "go to the {room}"),
    ("chit-chat, typed", "type", "how are you today?"),
    ("command, spoken", "speak", "commands/voice2json_turn_on_living_room_lamp.wav"),
    ("speech over the reply", "talk_over", "commands/stp_whats_the_weather.wav"),
    ("noise only", "speak", "noisy_farfield/noise_doing_the_dishes.wav"),
    ("command, typed", "type", "set a timer for 5 minutes"),
    ("spoken stop over the reply", "talk_over", STOP_CLIP),
    ("interrupt from the bus during the reply", "interrupt", "tell me a story about {topic}"),
    ("chit-chat, spoken", "speak", "librispeech/sense_and_sensibility_01_austen_64kb-0930.wav"),
    ("announcement", "say", "Reminder: the plants in the kitchen need water."),
    ("chit-chat, typed", "type", "thanks a lot"),
)
"""One cycle of the soak; the driver repeats it. Clips are paths under the speech folder."""


# --- the user ----------------------------------------------------------------------------------


class Driver:
    """Plays the script against a running App: the user's voice is a second stream into the sink."""

    def __init__(self, app: Any, ledger: TurnLedger, voice: Any, clips: dict[str, np.ndarray], args: Any) -> None:
        self.app = app
        self.ledger = ledger
        self.voice = voice
        self.clips = clips
        self.args = args
        self.cycle = 0
        self.steps: Counter = Counter()
        self.stuck: list[str] = []
        """Steps after which the loop was not idle within the turn timeout."""
        self.skill_stops: Counter = Counter()
        """Stop mid-drive: ``halted``, ``kept driving``, ``not heard``, ``no skill started``."""

    def run_step(self, index: int) -> None:
        what, action, arg = SCRIPT[index % len(SCRIPT)]
        self.cycle = index // len(SCRIPT)
        arg = arg.format(room=ROOMS[self.cycle % len(ROOMS)], topic=TOPICS[self.cycle % len(TOPICS)])
        getattr(self, f"_{action}")(arg)
        self.steps[what] += 1
        if not self.app.wait_idle(self.args.turn_timeout_s):
            self.stuck.append(f"cycle {self.cycle} step {index % len(SCRIPT)} ({what})")
            lines = _thread_stacks() + _speaker_state(self.app)  # where it hangs: the lost turn's cause
            lines += [f"  event {line}" for line in list(self.ledger.trail)]
            for line in lines:
                print(line, flush=True)
            return
        time.sleep(self.args.gap_s)  # the user's pause; also outlasts the half-duplex echo tail

    # -- actions --

    def _play(self, clip: str) -> None:
        """Speak a clip into the room and wait until it has been played out."""
        audio = self.clips[clip]
        self.voice.write(audio)
        self.voice.drain(audio.shape[0] / SINK_RATE_HZ + 5.0)

    def _speak(self, clip: str) -> None:
        before = self.ledger.counts.utterances
        self._play(clip)
        # The endpoint fires end-of-speech silence after the clip; noise may make no utterance.
        self.ledger.wait_for(lambda led: led.counts.utterances > before, 3.0)

    def _type(self, text: str) -> None:
        self.app.submit_text(text)

    def _say(self, text: str) -> None:
        self.app.say(text)

    def _reply_playing(self, text: str) -> bool:
        turn_id = self.app.submit_text(text)
        return self.ledger.wait_for(lambda led: led.played(turn_id), self.args.turn_timeout_s)

    def _talk_over(self, clip: str) -> None:
        topic = TOPICS[self.cycle % len(TOPICS)]
        if self._reply_playing(f"tell me a story about {topic}"):
            self._play(clip)

    def _interrupt(self, text: str) -> None:
        from edgevox.runtime.events import InterruptEvent

        if self._reply_playing(text):
            self.app.bus.publish(InterruptEvent(source="bench-soak", reason="interrupt from the soak bench"))

    def _stop_mid_skill(self, text: str) -> None:
        self.app.submit_text(text)
        self.app.wait_idle(self.args.turn_timeout_s)  # the reply ends; the drive goes on
        skills = self.app.runtime.activities.running("skill")
        if not skills:
            self.skill_stops["no skill started"] += 1
            return
        stops = self.ledger.counts.stops
        self._speak(STOP_CLIP)
        if not self.ledger.wait_for(lambda led: led.counts.stops > stops, 10.0):
            self.skill_stops["not heard"] += 1
            print(f"stop not heard mid-drive (cycle {self.cycle}); the last events:", flush=True)
            for line in list(self.ledger.trail)[-25:]:
                print(f"  event {line}", flush=True)
            return
        ended = all(s.wait(2.0) for s in skills)
        self.skill_stops["halted" if ended else "kept driving"] += 1


def load_clips(speech_dir: Path) -> dict[str, np.ndarray]:
    """Every clip the script speaks, at the sink's rate."""
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.resample import resample

    names = {arg for _what, action, arg in SCRIPT if action in ("speak", "talk_over")} | {STOP_CLIP}
    clips = {}
    for name in sorted(names):
        path = speech_dir / name
        if not path.is_file():
            raise ConfigError(f"bench soak: {path}: no such clip; give the shared speech folder with --speech-dir")
        audio, rate = read_wav(path)
        clips[name] = resample(audio, rate, SINK_RATE_HZ).astype(np.float32)
    return clips


def _thread_stacks() -> list[str]:
    """The innermost frames of every edgevox thread, one line per frame."""
    import sys
    import traceback

    names = {t.ident: t.name for t in threading.enumerate()}
    lines = []
    for ident, frame in sys._current_frames().items():
        name = names.get(ident, str(ident))
        if not name.startswith("edgevox"):
            continue
        for fs in traceback.extract_stack(frame)[-4:]:
            lines.append(f"  stack {name}: {fs.filename}:{fs.lineno} {fs.name}")
    return lines


def _speaker_state(app: Any) -> list[str]:
    """What the loop's speaker waits for (private state, read for diagnosis only)."""
    speaker, out = app.loop.speaker, app.loop.audio_out
    turn = speaker.current
    lines = [
        f"  output: played {out.played_samples} samples at {out.sample_rate_hz} Hz, written up to "
        f"{getattr(speaker, '_write_pos', -1)}, queued {getattr(out, '_queued_dev', -1)} at the device rate "
        f"{getattr(out, 'device_rate_hz', 0)} Hz, reopened {getattr(out, 'reopen_count', 0)} times, "
        f"{getattr(out, 'status_flags', 0)} callbacks with xrun flags"
    ]
    if turn is not None:
        lines.append(
            f"  speaking turn {turn.turn_id}: start {turn.start_pos}, end {turn.end_pos}, text done {turn.text_done}, "
            f"halted {turn.halted}, {len(turn.chunks)} chunks ending at {[c.end_pos for c in turn.chunks]}"
        )
    return lines
