"""The capture thread (``edgevox-voice-capture``): microphone -> frames -> VAD -> segmenter -> utterances.

:class:`Capture` reads blocks from ``AudioIn`` (the device callback lives inside the
adapter and only copies frames into a queue), resamples them to the VAD rate, cuts them
into frames, cancels the robot's echo (:mod:`edgevox.voice.aec`) or applies the echo guard
(:mod:`edgevox.voice.echo`) and feeds the
:class:`~edgevox.voice.segmenter.Segmenter`. What the segmenter reports becomes:

* ``SegmentStart`` - a new turn id, ``SpeechStarted``, and a barge-in when the reply is
  audible and the speech is not the robot's echo;
* ``SegmentPause`` - the audio so far, offered for speculative STT (``spec_job``);
* ``SegmentResume`` - the speculative turn of this utterance is stale: discarded;
* ``SegmentEnd`` - ``SpeechEnded`` and a final utterance for the STT thread.

The robot's own stop confirmation: under ``half_duplex`` the robot's voice is still checked
for a stop phrase (a user's "stop" over it must work), and Whisper heard the echo of
"Stopped." as "Stop." (2 runs of 7 in a PulseAudio room): a second stop after a spoken one. An
utterance that begins while the robot says its stop confirmation (or in its echo tail) is
dropped untranscribed when a stop would find nothing to stop (no queued turn, nothing
registered); while a skill still runs (it ignored the cancel), it is checked as before.

With a wake word (:mod:`edgevox.voice.wake`), a :class:`~edgevox.voice.wake.WakeGate` decides
per utterance: one that starts asleep publishes nothing and is dropped, or is transcribed for
the stop check alone (as an echo is); asleep, each frame also goes to the detector, and the
wake word cuts the utterance it ended in (:meth:`Segmenter.cut`) and plays the cue.

Device loss (``AudioIn.read`` raising, or no audio for ``input_stall_s``) reopens the
input with back-off until it works or the loop stops. End of input (``EOFError``, a WAV
file) flushes the segmenter, publishes ``InputEnded`` and ends the thread.

:meth:`hint` is the one method another thread calls: the STT thread passes the
speculative transcript's ending to the segmenter (adaptive endpoint).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from edgevox.engines.base import VAD, AudioIn, AudioOut, OutputTap
from edgevox.engines.resample import Resampler
from edgevox.errors import AudioDeviceError
from edgevox.runtime.events import ErrorEvent
from edgevox.voice.aec import EchoCanceller
from edgevox.voice.echo import MAX_ECHO_DELAY_MS, EchoDelay, rms
from edgevox.voice.endpoint import classify_ending
from edgevox.voice.events import AudioDevice, EchoDelayMeasured, InputEnded, SpeechEnded, SpeechStarted
from edgevox.voice.queues import LoopQueues, Utterance
from edgevox.voice.segmenter import (
    FrameSplitter,
    SegmentEnd,
    Segmenter,
    SegmentPause,
    SegmentResume,
    SegmentStart,
)
from edgevox.voice.speaker import Speaker
from edgevox.voice.wake import Wake, WakeGate

if TYPE_CHECKING:
    from edgevox.voice.settings import VoiceSettings


@runtime_checkable
class StatefulVAD(Protocol):
    """A VAD with stream state (Silero) that must forget it after a device reopen."""

    def reset(self) -> None: ...


class Capture:
    """The capture thread's work (see the module docstring)."""

    def __init__(
        self,
        queues: LoopQueues,
        vad: VAD,
        audio_in: AudioIn,
        audio_out: AudioOut,
        speaker: Speaker,
        settings: VoiceSettings,
        *,
        barge_in: Callable[[float], object],
        wake: Wake | None = None,
        something_running: Callable[[], bool] = lambda: False,
    ) -> None:
        self.q = queues
        self.vad = vad
        self.audio_in = audio_in
        self.audio_out = audio_out
        self.speaker = speaker
        self.settings = settings
        self._barge_in = barge_in
        self.device_reopens = 0
        self.utterances_asleep = 0
        """Utterances that began with the wake word unheard (never turns): with none heard, what a
        run without turns reports instead of "no speech" (written by the capture thread only)."""
        self._segmenter: Segmenter | None = None
        self.wake = wake
        self._something_running = something_running
        self.echo_delay = EchoDelay(speaker.reference, settings.segmenter.frame_ms)
        """The echo path's measured delay (:mod:`edgevox.voice.echo`); the capture thread updates it."""
        self.aec = (
            EchoCanceller(
                speaker.reference,
                vad.sample_rate_hz,
                tap=audio_out if isinstance(audio_out, OutputTap) else None,
            )
            if settings.echo_guard == "aec"
            else None
        )
        """The echo canceller (``echo_guard: aec``, :mod:`edgevox.voice.aec`); the capture thread runs it."""

    def run(self) -> None:
        """Capture thread: read blocks, VAD, segment; barge in; reopen a lost device."""
        q = self.q
        settings = self.settings
        seg_settings = settings.segmenter
        if not settings.speculative_stt:
            # Nothing transcribes the pauses, so no hint ever shortens the hold: no adaptive endpoint.
            seg_settings = dataclasses.replace(seg_settings, hold_silence_ms=0)
        rate = self.vad.sample_rate_hz
        segmenter = Segmenter(seg_settings, rate)
        self._segmenter = segmenter
        splitter = FrameSplitter(segmenter.frame_samples, rate)
        resampler = Resampler(self.audio_in.sample_rate_hz, rate) if self.audio_in.sample_rate_hz != rate else None
        last_audio = time.monotonic()
        last_playing = 0.0
        utt_turn_id = 0
        utt_echo = False
        utt_watch = False  # began while the robot talked or acted: the stop check listens twice
        utt_heard = True  # False: started asleep, dropped untranscribed (wake word)
        utt_gated = False  # started asleep: never a turn
        last_confirming = float("-inf")  # when the robot last said its stop confirmation ("Stopped.")
        gate = WakeGate(self.wake, q.publish) if self.wake is not None else None
        guard = settings.echo_guard
        while not q.stopping.is_set():
            try:
                block = self.audio_in.read(settings.read_timeout_s)
            except EOFError:
                end = segmenter.flush()
                self.utterances_asleep += end is not None and utt_gated
                if end is not None and utt_heard:
                    self._end_utterance(utt_turn_id, end, utt_echo, utt_watch)
                q.publish(InputEnded())
                q.input_done.set()
                return
            except Exception as exc:  # noqa: BLE001 - any read failure (AudioDeviceError or other) is a lost device
                if not self._reopen(exc):
                    return
                self._reset(segmenter, splitter)
                last_audio = time.monotonic()
                continue
            now_mono = time.monotonic()
            if block is None:
                stall = settings.input_stall_s
                if stall is not None and now_mono - last_audio > stall:
                    if not self._reopen(AudioDeviceError(f"no audio from the input for {stall:.1f} s")):
                        return
                    self._reset(segmenter, splitter)
                    last_audio = time.monotonic()
                continue
            last_audio = now_mono
            if resampler is not None:
                block = resampler.process(block)
            now = time.time()
            for frame, frame_end in splitter.push(block, now):
                speaking = self.speaker.speaking
                playing = self.audio_out.playing and not (gate is not None and now_mono < gate.cue_until)
                if speaking or playing:
                    last_playing = now_mono
                    if self._saying_stop_confirmation():
                        last_confirming = now_mono
                raw_rms = rms(frame)
                if playing and guard != "off" and self.echo_delay.observe(self.audio_out.played_samples, raw_rms):
                    self._publish_echo_delay()
                if self.aec is not None:  # from here on the frame is the room without the robot's voice
                    frame = self.aec.process(
                        frame,
                        self.audio_out.played_samples,
                        playing=self.audio_out.playing,
                        delay_ms=self.echo_delay.delay_ms,
                    )
                echo = speaking or (now_mono - last_playing) * 1000 < settings.echo_tail_ms + self._delay_ms(guard)
                voiced = self.vad.is_speech(frame)
                if voiced and self.aec is not None:
                    voiced = self.aec.heard_user(raw_rms, rms(frame), echo=echo)
                if voiced and echo and (guard == "energy_gate" or (self.aec is not None and not self.aec.converged)):
                    # (a canceller that has not yet found the echo path gates as the energy gate does)
                    reference = self.speaker.echo_level(settings.energy_gate_window_ms, self.echo_delay.delay_samples)
                    voiced = raw_rms > settings.energy_gate_ratio * reference
                if gate is not None:
                    busy = speaking or bool(q.turns) or q.current is not None or (segmenter.in_speech and not utt_gated)
                    if not gate.listening(now_mono, busy) and gate.detect(frame, frame_end) is not None:
                        if segmenter.in_speech and utt_heard:  # the wake word's own utterance: not a turn
                            q.publish(SpeechEnded(turn_id=utt_turn_id, last_voiced_at=frame_end, ignored=True))
                        segmenter.cut(gate.keep_frames(seg_settings.frame_ms))
                        q.capture_turn_id = 0
                        self._play_cue(gate, now_mono)
                event = segmenter.process(frame, voiced, frame_end)
                if isinstance(event, SegmentStart):
                    utt_turn_id = next(q.ids)
                    q.capture_turn_id = utt_turn_id
                    utt_gated = gate is not None and not gate.awake
                    utt_heard = not utt_gated or (gate is not None and gate.checks_stops(self._something_running()))
                    utt_echo = (echo and guard == "half_duplex") or utt_gated
                    if utt_echo and guard == "half_duplex" and utt_heard:
                        tail_ms = settings.echo_tail_ms + self._delay_ms(guard)
                        utt_heard = not ((now_mono - last_confirming) * 1000 < tail_ms and self._nothing_to_stop())
                    utt_watch = speaking or playing or self._something_running()
                    if not utt_heard:
                        continue
                    q.publish(
                        SpeechStarted(
                            turn_id=utt_turn_id,
                            timestamp=now,
                            first_voiced_at=event.first_voiced_at,
                            during_playback=speaking,
                        )
                    )
                    if speaking and not utt_echo and settings.barge_in:
                        self._barge_in(event.first_voiced_at)
                elif isinstance(event, SegmentPause):
                    if settings.speculative_stt and utt_heard and not utt_gated:
                        self._speculate(utt_turn_id, event, utt_echo, utt_watch)
                elif isinstance(event, SegmentResume):
                    q.discard_speculation(utt_turn_id)  # the user went on: the guess is stale
                elif isinstance(event, SegmentEnd):
                    q.capture_turn_id = 0
                    self.utterances_asleep += utt_gated  # (the wake word's own utterance was cut: never ends)
                    if utt_heard:
                        self._end_utterance(utt_turn_id, event, utt_echo, utt_watch)

    def _saying_stop_confirmation(self) -> bool:
        """Whether the turn speaking now is the safety stop's confirmation ("Stopped.")."""
        current = self.q.current
        text = self.settings.stop_confirmation.strip()
        return bool(text) and current is not None and current.request.say and current.request.text == text

    def _nothing_to_stop(self) -> bool:
        """No turn queued and nothing registered (the confirmation itself is neither)."""
        return not self.q.turns and not self._something_running()

    def _delay_ms(self, guard: str) -> float:
        """How much longer than ``echo_tail_ms`` the echo lasts after the output ends: the measured
        delay; before a measure, the longest under ``energy_gate`` (which only gates the echo,
        against the reply's last words) and none under ``half_duplex`` (where the tail is deaf to
        all but a stop, so a guess would lose what the user says)."""
        measured = self.echo_delay.delay_ms
        if measured is not None:
            return measured
        return MAX_ECHO_DELAY_MS if guard == "energy_gate" else 0.0

    def _publish_echo_delay(self) -> None:
        self.q.publish(
            EchoDelayMeasured(
                delay_ms=round(self.echo_delay.delay_ms or 0.0, 1),
                correlation=round(self.echo_delay.correlation, 3),
            )
        )

    def hint(self, turn_id: int, samples: int, text: str) -> None:
        """STT thread: the speculative transcript of ``samples`` of utterance ``turn_id``.

        Adaptive endpoint: a complete request ends after end_silence_ms, a complete statement
        after statement_silence_ms, one that stops mid-phrase ("turn left and") is held for
        hold_silence_ms. Ignored unless that utterance is still being captured."""
        segmenter = self._segmenter
        if segmenter is not None and turn_id == self.q.capture_turn_id:
            ending = classify_ending(text)
            segmenter.hint(samples, ending.complete, statement=ending.statement)

    def _play_cue(self, gate: WakeGate, now_mono: float) -> None:
        """The wake word was heard: play the cue (queued on the output, returns at once); the
        microphone does not count it as the robot's echo (the command may follow at once)."""
        cue = gate.settings.cue
        if cue is None:
            return
        try:
            self.audio_out.write(cue)
        except Exception as exc:  # noqa: BLE001 - a failed cue must not stop listening
            self.q.publish(ErrorEvent(where="voice.wake_cue", error=repr(exc)))
            return
        gate.cue_until = now_mono + cue.shape[0] / self.audio_out.sample_rate_hz + 0.3  # + output latency

    def _reset(self, segmenter: Segmenter, splitter: FrameSplitter) -> None:
        """After a device reopen: forget the utterance in progress and the VAD's stream state."""
        segmenter.reset()
        splitter.reset()
        if isinstance(self.vad, StatefulVAD):
            self.vad.reset()
        self.q.capture_turn_id = 0
        self.q.drop_speculation()

    def _speculate(self, turn_id: int, pause: SegmentPause, echo: bool, watch: bool) -> None:
        """Offer the audio so far for speculative STT (replaces an older offer)."""
        with self.q.cond:
            self.q.spec_job = Utterance(turn_id, pause.audio, echo, watch=watch)
            self.q.cond.notify_all()

    def _end_utterance(self, turn_id: int, end: SegmentEnd, echo: bool, watch: bool) -> None:
        q = self.q
        q.publish(
            SpeechEnded(
                turn_id=turn_id,
                last_voiced_at=end.last_voiced_at,
                duration_s=end.audio.shape[0] / self.vad.sample_rate_hz,
                truncated=end.truncated,
                ignored=echo,
            )
        )
        with q.cond:
            linear = self.aec.linear_tail(end.audio.shape[0]) if self.aec is not None and watch else None
            q.utterances.append(Utterance(turn_id, end.audio, echo, end.pause_samples, watch, linear))
            if q.spec_job is not None and q.spec_job.turn_id == turn_id:
                # The utterance is final now: its own job (below) is what the STT thread needs.
                # A speculation already running for it may still be used if its audio matches.
                q.spec_job = None
            q.cond.notify_all()

    def _reopen(self, exc: BaseException) -> bool:
        """Restart the input until it works; False if the loop is stopping."""
        q = self.q
        q.publish(AudioDevice(state="lost", error=str(exc)))
        attempt = 0
        while not q.stopping.is_set():
            backoff = self.settings.reopen_backoff_s
            wait_s = backoff[min(attempt, len(backoff) - 1)]
            attempt += 1
            with suppress(Exception):
                self.audio_in.stop()
            if q.stopping.wait(wait_s):
                return False
            try:
                self.audio_in.start()
            except Exception as err:  # noqa: BLE001 - keep trying; every failure is reported
                q.publish(AudioDevice(state="failed", error=str(err), attempt=attempt))
                continue
            self.device_reopens += 1
            q.publish(AudioDevice(state="reopened", attempt=attempt))
            return True
        return False
