"""Echo cancellation (``edgevox.voice.aec``): WebRTC's AEC3 on real speech, fed as the capture
thread feeds it (the device's position in output samples, the playback reference's samples).

The robot's voice is a real recording (JFK, 11 s) played at the output's rate; the microphone
hears it 40 ms or 330 ms later at half its level, and in one window a person (another real
recording) talks over it. No sound card: the timeline is simulated exactly, 20 ms per capture
frame, the device taking output in 60 ms bursts as PulseAudio does.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgevox.engines.audio_wav import read_wav
from edgevox.engines.resample import resample
from edgevox.voice.aec import EchoCanceller, erle_db
from edgevox.voice.echo import PlaybackReference

OUT_RATE = 22050  # Piper's rate: the reference is resampled to the microphone's
MIC_RATE = 16000
FRAME = 320  # 20 ms


def _db(x: np.ndarray) -> float:
    return 10 * np.log10(float(np.sum(np.square(x, dtype=np.float64))) + 1e-12)


def _room(speech_dir, delay_ms: int, *, user_at_s: float | None = None):
    robot, rate = read_wav(speech_dir / "classic/jfk.wav")
    robot_out = resample(robot, rate, OUT_RATE).astype(np.float32)
    robot_mic = resample(robot, rate, MIC_RATE)
    echo = np.zeros(robot_mic.shape[0] + MIC_RATE, dtype=np.float64)
    d = delay_ms * MIC_RATE // 1000
    echo[d : d + robot_mic.shape[0]] = 0.25 * robot_mic
    mic = echo.copy()
    user = np.zeros_like(mic)
    if user_at_s is not None:
        person, prate = read_wav(speech_dir / "classic/goforward.wav")
        person = resample(person, prate, MIC_RATE)
        i = int(user_at_s * MIC_RATE)
        user[i : i + person.shape[0]] = person[: mic.shape[0] - i]
        mic += user
    reference = PlaybackReference(OUT_RATE)
    reference.add(0, robot_out, 0)
    return reference, robot_out.shape[0], mic, echo, user


def _run(aec: EchoCanceller, mic: np.ndarray, out_len: int, *, burst_ms: int = 60) -> np.ndarray:
    """Feed ``mic`` frame by frame; the device position advances in ``burst_ms`` steps."""
    burst = OUT_RATE * burst_ms // 1000
    cleaned = np.zeros_like(mic, dtype=np.float32)
    for k in range(0, mic.shape[0] - FRAME + 1, FRAME):
        now = (k + FRAME) * OUT_RATE // MIC_RATE
        played = min(out_len, -(-now // burst) * burst)  # taken ahead of time, a burst at once
        cleaned[k : k + FRAME] = aec.process(
            mic[k : k + FRAME].astype(np.float32), played, playing=played < out_len, delay_ms=None
        )
    return cleaned


@pytest.mark.parametrize("delay_ms", [40, 330])
def test_the_robots_echo_is_removed_after_a_few_seconds_of_speech(speech_dir, delay_ms):
    reference, out_len, mic, echo, _ = _room(speech_dir, delay_ms)
    aec = EchoCanceller(reference, MIC_RATE)
    cleaned = _run(aec, mic, out_len)
    late = slice(3 * MIC_RATE, 11 * MIC_RATE)  # after convergence, while the robot still talks
    erle = _db(mic[late]) - _db(cleaned[late])
    assert erle > 30, f"echo only {erle:.1f} dB quieter at {delay_ms} ms"


@pytest.mark.models
def test_a_person_talking_over_the_robot_is_kept_and_understood(speech_dir, real_engines):
    reference, out_len, mic, echo, user = _room(speech_dir, 40, user_at_s=6.0)
    cleaned = _run(EchoCanceller(reference, MIC_RATE), mic, out_len)
    talk = slice(int(6.0 * MIC_RATE), int(8.8 * MIC_RATE))
    snr = _db(user[talk]) - _db(echo[talk])
    assert -3 < snr < 0, snr  # the echo there is louder than the person
    # What is left in that window is the person: 20 dB above what is left of the echo alone.
    echo_only = slice(int(3.0 * MIC_RATE), int(5.8 * MIC_RATE))
    assert _db(cleaned[talk]) - _db(cleaned[echo_only]) > 20
    heard = real_engines.stt.transcribe(cleaned[talk]).text.lower()
    unclean = real_engines.stt.transcribe(mic[talk].astype(np.float32)).text.lower()
    assert "go forward" in heard, (heard, unclean)


def test_energies_give_the_echo_return_loss_over_a_stretch(speech_dir):
    reference, out_len, mic, _, _ = _room(speech_dir, 40)
    aec = EchoCanceller(reference, MIC_RATE)
    half = 4 * MIC_RATE // FRAME * FRAME
    _run(aec, mic[:half], out_len)
    before = aec.energies
    rest = mic[half:]
    for k in range(0, rest.shape[0] - FRAME + 1, FRAME):
        played = min(out_len, (half + k + FRAME) * OUT_RATE // MIC_RATE)
        aec.process(rest[k : k + FRAME].astype(np.float32), played, playing=played < out_len, delay_ms=40)
    erle = erle_db(before, aec.energies)
    assert erle is not None and erle > 30
    assert erle_db(aec.energies, aec.energies) is None


def test_heard_user_separates_echo_from_a_person_and_from_the_cancellers_comfort_noise():
    assert EchoCanceller.heard_user(raw_rms=0.05, clean_rms=0.04)  # a person: little removed
    assert not EchoCanceller.heard_user(raw_rms=0.05, clean_rms=0.0002)  # echo: 48 dB removed
    assert not EchoCanceller.heard_user(raw_rms=0.0, clean_rms=0.0007)  # comfort noise, -63 dBFS
    # Once the robot's echo has passed, only the floor applies: the comfort noise lingers.
    assert not EchoCanceller.heard_user(raw_rms=0.0, clean_rms=0.0007, echo=False)
    assert EchoCanceller.heard_user(raw_rms=0.05, clean_rms=0.004, echo=False)


def test_wrong_rates_and_frame_lengths_say_what_to_do(speech_dir):
    reference = PlaybackReference(OUT_RATE)
    with pytest.raises(ValueError, match="16000"):
        EchoCanceller(reference, 8000)
    aec = EchoCanceller(reference, MIC_RATE)
    with pytest.raises(ValueError, match="whole 10 ms frames"):
        aec.process(np.zeros(100, dtype=np.float32), 0, playing=False, delay_ms=None)


def test_the_reference_keeps_the_samples_written_and_silence_elsewhere():
    ref = PlaybackReference(1000, block_ms=10)
    ref.add(100, np.full(50, 0.5, dtype=np.float32), 0)
    got = ref.samples(80, 170)
    assert np.all(got[:20] == 0) and np.all(got[20:70] == 0.5) and np.all(got[70:] == 0)
    ref.forget_after(120)  # cleared: what was queued after 120 never plays
    assert np.all(ref.samples(100, 150)[20:] == 0) and np.all(ref.samples(100, 120) == 0.5)


def _run_both(
    aec: EchoCanceller, mic: np.ndarray, out_len: int, delay_ms: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`_run`, with a measured delay; returns AEC3's output and the linear stage's."""
    burst = OUT_RATE * 60 // 1000
    cleaned = np.zeros_like(mic, dtype=np.float32)
    linear = np.zeros_like(mic, dtype=np.float32)
    for k in range(0, mic.shape[0] - FRAME + 1, FRAME):
        played = min(out_len, -(-((k + FRAME) * OUT_RATE // MIC_RATE) // burst) * burst)
        cleaned[k : k + FRAME] = aec.process(
            mic[k : k + FRAME].astype(np.float32), played, playing=played < out_len, delay_ms=delay_ms
        )
        tail = aec.linear_tail(FRAME)
        assert tail is not None
        linear[k : k + FRAME] = tail
    return cleaned, linear


@pytest.mark.parametrize("delay_ms", [40, 330])
def test_the_linear_stage_removes_the_echo_once_it_has_adapted(speech_dir, delay_ms):
    reference, out_len, mic, _, _ = _room(speech_dir, delay_ms)
    _, linear = _run_both(EchoCanceller(reference, MIC_RATE), mic, out_len, delay_ms + 20.0)
    late = slice(6 * MIC_RATE, 11 * MIC_RATE)
    erle = _db(mic[late]) - _db(linear[late])
    assert erle > 15, f"linear stage: echo only {erle:.1f} dB quieter at {delay_ms} ms"


def test_the_linear_stage_keeps_the_onset_of_a_person_talking_over_the_robot(speech_dir):
    """AEC3's suppressor attenuates the first sounds of double talk; the linear stage only
    subtracts its echo estimate, so a person's onset under louder echo is still there."""
    reference, out_len, mic, echo, user = _room(speech_dir, 40, user_at_s=6.0)
    cleaned, linear = _run_both(EchoCanceller(reference, MIC_RATE), mic, out_len, 60.0)
    first = np.flatnonzero(np.abs(user) > 0.02 * np.max(np.abs(user)))[0]
    onset = slice(first, first + MIC_RATE // 10)  # the first 100 ms of the person's voice
    kept_aec3 = _db(cleaned[onset]) - _db(user[onset])
    kept_linear = _db(linear[onset]) - _db(user[onset])
    assert kept_linear > -3, f"linear stage lost {-kept_linear:.1f} dB of the onset"
    assert kept_linear > kept_aec3 + 3, (kept_linear, kept_aec3)


def test_the_linear_tail_is_the_last_audio_processed_and_no_more_than_is_kept():
    reference = PlaybackReference(OUT_RATE)
    aec = EchoCanceller(reference, MIC_RATE)
    t = np.arange(6 * FRAME, dtype=np.float32) / MIC_RATE
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)  # nothing plays: the voice is kept
    for k in range(0, tone.shape[0], FRAME):
        aec.process(tone[k : k + FRAME], 0, playing=False, delay_ms=None)
    tail = aec.linear_tail(250)
    assert tail is not None and tail.shape == (250,)
    assert np.corrcoef(tail, tone[-250:])[0, 1] > 0.95  # (Speex high-passes its input: a small phase shift)
    assert abs(_db(tail) - _db(tone[-250:])) < 1.0
    assert aec.linear_tail(7 * FRAME) is None  # more than was processed
    assert aec.linear_tail(0) is None


def test_a_missing_libspeexdsp_names_the_package(monkeypatch):
    import ctypes

    from edgevox.errors import ModelError
    from edgevox.voice import aec as aec_module

    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(aec_module.ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(ctypes, "CDLL", missing)
    with pytest.raises(ModelError, match="apt-get install libspeexdsp1"):
        EchoCanceller(PlaybackReference(OUT_RATE), MIC_RATE)


class _Tap:
    """An output's tap (``OutputTap``): everything sent on one clock, silence included."""

    def __init__(self, sent: np.ndarray, rate_hz: int) -> None:
        self.sent = sent
        self.tap_rate_hz = rate_hz
        self.tapped_samples = 0

    def tap(self, lo: int, hi: int) -> np.ndarray:
        out = np.zeros(max(0, hi - lo), dtype=np.float32)
        a, b = max(lo, 0), min(hi, self.tapped_samples, self.sent.shape[0])
        if b > a:
            out[a - lo : b - lo] = self.sent[a:b]
        return out


@pytest.mark.parametrize("with_tap", [True, False])
def test_with_the_outputs_tap_the_linear_stage_keeps_its_echo_path_from_reply_to_reply(speech_dir, with_tap):
    """Two replies 1.5 s apart. Written positions stand still between them, so without a tap the
    second reply starts at another offset to the microphone and the filter adapts again; the
    tap's clock runs on, and the second reply's echo is removed from its first second."""
    robot, rate = read_wav(speech_dir / "classic/jfk.wav")
    reply = resample(robot, rate, MIC_RATE).astype(np.float32)[: 6 * MIC_RATE]
    gap = int(1.537 * MIC_RATE)  # (not a whole number of frames: the offset changes)
    sent = np.concatenate([reply, np.zeros(gap, np.float32), reply, np.zeros(MIC_RATE, np.float32)])
    delay = 40 * MIC_RATE // 1000
    mic = np.zeros_like(sent)
    mic[delay:] = 0.25 * sent[:-delay]
    reference = PlaybackReference(MIC_RATE)
    reference.add(0, reply, 0)
    reference.add(reply.shape[0], reply, 0)
    tap = _Tap(sent, MIC_RATE)
    aec = EchoCanceller(reference, MIC_RATE, tap=tap if with_tap else None)
    linear = np.zeros_like(mic)
    second = reply.shape[0] + gap
    for k in range(0, mic.shape[0] - FRAME + 1, FRAME):
        tap.tapped_samples = k + FRAME
        burst = MIC_RATE * 60 // 1000  # the device takes output in bursts
        played = min(-(-(k + FRAME) // burst) * burst, reply.shape[0])
        played += max(0, min(-(-(k + FRAME - second) // burst) * burst, reply.shape[0]))
        playing = k + FRAME < reply.shape[0] or second <= k + FRAME < second + reply.shape[0]
        aec.process(mic[k : k + FRAME], played, playing=playing, delay_ms=60.0)
        linear[k : k + FRAME] = aec.linear_tail(FRAME)
    start = slice(second + delay, second + delay + MIC_RATE)
    erle = _db(mic[start]) - _db(linear[start])
    if with_tap:
        assert erle > 15, f"with the tap, only {erle:.1f} dB in the second reply's first second"
    else:
        assert erle < 10, f"without a tap {erle:.1f} dB: this test no longer shows what the tap is for"
