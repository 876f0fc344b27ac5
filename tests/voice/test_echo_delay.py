"""EchoDelay: the echo path's delay, measured from the microphone's frame levels and the
playback reference. The "microphone" here hears the reference's own audio some milliseconds
late, quieter (the room), with noise, and sometimes with a user talking over it."""

from __future__ import annotations

import numpy as np
import pytest

from edgevox.voice.echo import MAX_ECHO_DELAY_MS, EchoDelay, PlaybackReference, rms

OUT_HZ = 22050
FRAME_MS = 20
FRAME = OUT_HZ * FRAME_MS // 1000


def speech_like(seconds: float, seed: int) -> np.ndarray:
    """Noise with a syllable-rate envelope and pauses between words (what Piper's speech
    looks like to an energy measure)."""
    rng = np.random.default_rng(seed)
    n = int(seconds * OUT_HZ)
    syllables = rng.uniform(0.05, 0.5, size=n // 2000 + 1)
    syllables[rng.random(syllables.shape[0]) < 0.25] = 0.0  # pauses
    envelope = np.repeat(syllables, 2000)[:n]
    return (envelope * rng.standard_normal(n)).astype(np.float32)


class Room:
    """Plays ``audio`` through the reference and hears it ``delay_ms`` later at ``gain``."""

    def __init__(self, audio: np.ndarray, delay_ms: float, *, gain: float = 0.3, noise: float = 0.002) -> None:
        self.reference = PlaybackReference(OUT_HZ)
        self.audio, self.gain, self.noise = audio, gain, noise
        self.delay = int(OUT_HZ * delay_ms / 1000)
        self.rng = np.random.default_rng(7)
        chunk = OUT_HZ // 2  # written in half-second chunks, as the speaker writes sentences
        for start in range(0, audio.shape[0], chunk):
            self.reference.add(start, audio[start : start + chunk], 0)

    def heard(self, played: int, user: float = 0.0) -> float:
        """The frame the microphone delivers when the device has taken ``played`` samples."""
        end = played - self.delay
        echo = self.audio[max(0, end - FRAME) : max(0, end)] if end > 0 else np.zeros(0, np.float32)
        echo = np.pad(self.gain * echo, (FRAME - echo.shape[0], 0))
        frame = echo + self.noise * self.rng.standard_normal(FRAME) + user * self.rng.standard_normal(FRAME)
        return rms(frame)


def play(room: Room, estimator: EchoDelay, seconds: float, *, start_s: float = 0.0, user: float = 0.0) -> None:
    first = int(start_s * OUT_HZ) // FRAME + 1
    for i in range(first, first + int(seconds * 1000 / FRAME_MS)):
        played = i * FRAME
        estimator.observe(played, room.heard(played, user))


@pytest.mark.parametrize("delay_ms", [40, 120, 330, 480])
def test_the_delay_the_microphone_hears_the_output_at_is_measured_to_10_ms(delay_ms):
    room = Room(speech_like(8.0, seed=delay_ms), delay_ms)
    estimator = EchoDelay(room.reference, FRAME_MS)
    play(room, estimator, 2.9)
    assert estimator.delay_samples is None, "measured before the history was full"
    play(room, estimator, 1.1, start_s=2.9)
    assert estimator.delay_samples is not None, f"no measure (correlation {estimator.correlation:.2f})"
    assert abs(estimator.delay_samples - room.delay) <= room.reference.block_samples, (
        estimator.delay_samples,
        room.delay,
    )
    assert estimator.correlation > 0.8


def test_a_delay_that_grows_mid_reply_is_followed_and_a_user_talking_over_it_keeps_the_last_measure():
    audio = speech_like(14.0, seed=3)
    near, far = Room(audio, 60), Room(audio, 330)  # PulseAudio raised the stream's latency
    estimator = EchoDelay(near.reference, FRAME_MS)
    play(near, estimator, 4.0)
    assert abs(estimator.delay_samples - near.delay) <= near.reference.block_samples
    play(far, estimator, 4.0, start_s=4.0)
    assert abs(estimator.delay_samples - far.delay) <= far.reference.block_samples
    play(far, estimator, 3.0, start_s=8.0, user=0.3)  # loud speech over the robot: no good match
    assert estimator.correlation < estimator.min_correlation
    assert abs(estimator.delay_samples - far.delay) <= far.reference.block_samples


def test_a_microphone_that_does_not_hear_the_output_gives_no_measure():
    room = Room(speech_like(6.0, seed=11), 100, gain=0.0, noise=0.01)  # a headset: only noise
    estimator = EchoDelay(room.reference, FRAME_MS)
    play(room, estimator, 6.0)
    assert estimator.delay_samples is None
    assert estimator.correlation < estimator.min_correlation


def test_before_a_measure_the_speaker_gates_against_the_loudest_output_of_the_longest_delay():
    from types import SimpleNamespace

    from edgevox.testing import FakeTTS
    from edgevox.voice.speaker import Speaker

    out = SimpleNamespace(sample_rate_hz=OUT_HZ, played_samples=0)  # echo_level reads only these
    speaker = Speaker(FakeTTS(sample_rate_hz=OUT_HZ), out, print, session_id="s", on_error=print)  # type: ignore[arg-type]
    loud, quiet = np.full(OUT_HZ // 10, 0.8, np.float32), np.full(OUT_HZ, 0.05, np.float32)
    speaker.reference.add(0, loud, 0)
    speaker.reference.add(loud.shape[0], quiet, 0)
    out.played_samples = loud.shape[0] + int(OUT_HZ * (MAX_ECHO_DELAY_MS - 100) / 1000)  # the loud part 400 ms ago
    assert speaker.echo_level(50, None) == pytest.approx(0.8)  # what the room may still be playing back
    assert speaker.echo_level(50, 0) == pytest.approx(0.05)  # measured: no delay, only the quiet part
