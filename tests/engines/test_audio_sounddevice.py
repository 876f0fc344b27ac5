"""SoundDevice adapters: the watchdog and buffers against an injected fake PortAudio,
and (marked ``audio``) real streams through a private PulseAudio null sink."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut, find_device
from edgevox.errors import AudioDeviceError


class FakeStream:
    """Stands in for sounddevice.InputStream/OutputStream; the test drives the callback."""

    def __init__(self, sd, **kwargs):
        self.sd = sd
        self.kwargs = kwargs
        self.active = False
        self.closed = False
        sd.streams.append(self)
        sd.opened.set()

    def start(self):
        if self.sd.fail_open:
            raise OSError("device unplugged")
        self.active = True

    def abort(self):
        self.active = False

    def close(self):
        self.closed = True


class FakeSounddevice:
    def __init__(self, devices, rate_hz=48000):
        self.devices = devices
        self.rate_hz = rate_hz
        self.streams: list[FakeStream] = []
        self.opened = threading.Event()
        self.fail_open = False

    def query_devices(self, device=None, kind=None):
        if device is None and kind is None:
            return self.devices
        return {"name": "fake", "default_samplerate": float(self.rate_hz)}

    def InputStream(self, **kwargs):  # noqa: N802 - mirrors the sounddevice API
        return FakeStream(self, **kwargs)

    def OutputStream(self, **kwargs):  # noqa: N802
        return FakeStream(self, **kwargs)


DEVICES = [
    {"name": "HDA Intel: ALC (hw:0,0)", "max_input_channels": 2, "max_output_channels": 2},
    {"name": "USB Mic", "max_input_channels": 1, "max_output_channels": 0},
    {"name": "pulse", "max_input_channels": 32, "max_output_channels": 32},
]


def test_find_device_by_index_exact_name_substring_and_default():
    sd = FakeSounddevice(DEVICES)
    assert find_device(sd, None, "input") is None
    assert find_device(sd, 1, "input") == 1
    assert find_device(sd, "2", "output") == 2
    assert find_device(sd, "usb", "input") == 1
    assert find_device(sd, "pulse", "output") == 2
    with pytest.raises(AudioDeviceError, match="no audio output device matches 'usb'.*pulse"):
        find_device(sd, "usb", "output")
    with pytest.raises(AudioDeviceError, match="device 7 does not exist"):
        find_device(sd, 7, "input")


def test_input_captures_at_the_device_rate_and_reads_16k_blocks():
    sd = FakeSounddevice(DEVICES, rate_hz=48000)
    mic = SoundDeviceIn(device="USB", block_ms=20, watchdog_timeout_s=0, sd_module=sd)
    mic.start()
    try:
        stream = sd.streams[0]
        assert stream.kwargs["samplerate"] == 48000 and stream.kwargs["blocksize"] == 960
        t = np.arange(48000) / 48000
        tone = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[:, None]
        for i in range(0, 48000, 960):
            stream.kwargs["callback"](tone[i : i + 960], 960, None, None)
        blocks = []
        while (block := mic.read(0.0)) is not None:
            blocks.append(block)
        assert {b.shape[0] for b in blocks} == {320}
        audio = np.concatenate(blocks)
        assert audio.shape[0] >= 15000
        spectrum = np.abs(np.fft.rfft(audio))
        assert np.fft.rfftfreq(audio.shape[0], 1 / 16000)[spectrum.argmax()] == pytest.approx(440, abs=2)
    finally:
        mic.stop()


def test_input_queue_is_bounded_and_drops_the_oldest_blocks():
    sd = FakeSounddevice(DEVICES, rate_hz=16000)
    mic = SoundDeviceIn(block_ms=20, max_queue_blocks=3, watchdog_timeout_s=0, sd_module=sd)
    mic.start()
    try:
        cb = sd.streams[0].kwargs["callback"]
        for value in range(5):
            cb(np.full((320, 1), value / 10, np.float32), 320, None, None)
        assert mic.dropped_blocks == 2
        assert mic.read(0.0)[-1] == pytest.approx(0.2, abs=0.01)
    finally:
        mic.stop()


def test_watchdog_reopens_a_stream_that_stopped_delivering_and_reports_it():
    sd = FakeSounddevice(DEVICES, rate_hz=16000)
    events: list[str] = []
    reopened = threading.Event()

    def on_event(message: str) -> None:
        events.append(message)
        if "reopened" in message:
            reopened.set()

    mic = SoundDeviceIn(watchdog_timeout_s=0.2, on_event=on_event, sd_module=sd)
    mic.start()
    try:
        # The first stream never calls back: the watchdog must notice and open a new one.
        assert reopened.wait(5.0), events
        assert mic.reopen_count >= 1
        assert sd.streams[0].closed
        assert any("no audio callback" in e for e in events)
    finally:
        mic.stop()


def test_watchdog_keeps_retrying_when_the_device_is_gone():
    sd = FakeSounddevice(DEVICES, rate_hz=16000)
    failed = threading.Event()
    events: list[str] = []

    def on_event(message: str) -> None:
        events.append(message)
        if "reopen failed" in message:
            failed.set()

    mic = SoundDeviceIn(watchdog_timeout_s=0.2, on_event=on_event, sd_module=sd)
    mic.start()
    try:
        sd.fail_open = True
        assert failed.wait(5.0), events
        sd.fail_open = False
        sd.opened.clear()
        assert sd.opened.wait(5.0)
    finally:
        mic.stop()


def test_output_plays_queued_audio_and_clear_stops_within_one_block():
    sd = FakeSounddevice(DEVICES, rate_hz=16000)
    played = []
    out = SoundDeviceOut(
        sample_rate_hz=16000, block_ms=10, watchdog_timeout_s=0, sd_module=sd, on_play=lambda n, t: played.append(n)
    )
    out.start()
    try:
        cb = sd.streams[0].kwargs["callback"]
        out.write(np.full(1000, 0.25, np.float32))
        block = np.zeros((160, 1), np.float32)
        cb(block, 160, None, None)
        assert out.playing and out.played_samples == 160 and played == [160]
        # The resampler (same rate here) passes samples through exactly.
        assert np.all(block[:, 0] == 0.25)
        assert out.clear() == 840
        cb(block, 160, None, None)
        assert np.all(block == 0) and not out.playing
        assert out.drain(0.0)
    finally:
        out.stop()


def test_the_output_tap_keeps_what_was_sent_silence_included_on_one_clock():
    """A linear echo canceller reads what the device was sent by position on the device's clock
    (``OutputTap``): replies and the silence between them, in order, wrapping the ring."""
    from edgevox.engines.audio_sounddevice import TAP_GUARD, TAP_KEEP_S
    from edgevox.engines.base import OutputTap

    sd = FakeSounddevice(DEVICES, rate_hz=16000)
    out = SoundDeviceOut(sample_rate_hz=16000, block_ms=10, watchdog_timeout_s=0, sd_module=sd)
    assert isinstance(out, OutputTap)
    out.start()
    try:
        cb = sd.streams[0].kwargs["callback"]
        assert out.tap_rate_hz == 16000 and out.tapped_samples == 0
        block = np.zeros((160, 1), np.float32)
        out.write(np.full(200, 0.5, np.float32))
        cb(block, 160, None, None)  # reply
        cb(block, 160, None, None)  # 40 more of it, then silence
        cb(block, 160, None, None)  # silence: the clock goes on
        assert out.tapped_samples == 480 and out.played_samples == 200
        got = out.tap(100, 500)
        assert np.all(got[:100] == 0.5) and np.all(got[100:380] == 0) and np.all(got[380:] == 0)  # (480+ not sent yet)
        ring = int(TAP_KEEP_S * 16000)
        for k in range(ring // 160 + 10):  # wrap the ring: each block says its number
            out.write(np.full(160, k / 1e5, np.float32))
            cb(block, 160, None, None)
        end = out.tapped_samples
        tail = out.tap(end - 320, end)
        assert np.allclose(tail[:160], (ring // 160 + 8) / 1e5) and np.allclose(tail[160:], (ring // 160 + 9) / 1e5)
        assert np.all(out.tap(0, 480) == 0)  # overwritten long ago
        assert np.all(out.tap(end - ring, end - ring + TAP_GUARD) == 0)  # may be mid-write: left out
    finally:
        out.stop()


def test_output_resamples_to_the_device_rate_and_counts_in_caller_units():
    sd = FakeSounddevice(DEVICES, rate_hz=48000)
    out = SoundDeviceOut(sample_rate_hz=16000, block_ms=10, watchdog_timeout_s=0, sd_module=sd)
    out.start()
    try:
        cb = sd.streams[0].kwargs["callback"]
        out.write(np.full(1600, 0.1, np.float32))
        block = np.zeros((480, 1), np.float32)
        for _ in range(3):
            cb(block, 480, None, None)
        assert out.played_samples == 480  # 1440 device samples = 480 at 16 kHz
    finally:
        out.stop()


def test_everything_written_counts_as_played_once_the_device_took_it_at_any_rate():
    """Piper at 22050 Hz on a 16 kHz device: converting the device's count back rounds, and the
    resampler holds a few samples of filter delay, so ``played_samples`` stopped one short of
    what was written and the voice loop waited for the end of the reply forever (a soak in CI
    lost a turn that way). A turn after a clear() still ends exactly where it was written."""
    sd = FakeSounddevice(DEVICES, rate_hz=16000)
    out = SoundDeviceOut(sample_rate_hz=22050, block_ms=10, watchdog_timeout_s=0, sd_module=sd)
    out.start()
    try:
        cb = sd.streams[0].kwargs["callback"]
        block = np.zeros((160, 1), np.float32)
        written = 0
        for n in (163329, 37891, 1, 22049):
            out.write(np.full(n, 0.1, np.float32))
            written += n
            while out.playing:
                cb(block, 160, None, None)
            assert out.played_samples == written
        out.write(np.full(30000, 0.1, np.float32))
        cb(block, 160, None, None)
        dropped = out.clear()
        assert out.played_samples + dropped == written + 30000
        written = out.played_samples
        out.write(np.full(5000, 0.1, np.float32))
        while out.playing:
            cb(block, 160, None, None)
        assert out.played_samples == written + 5000
    finally:
        out.stop()


@pytest.mark.audio
def test_speaker_to_microphone_through_a_pulseaudio_null_sink():
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if not pulseaudio_installed():
        pytest.skip("PulseAudio is not installed (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    with private_pulseaudio(rate_hz=16000):
        reinitialize_portaudio()
        mic = SoundDeviceIn(device="pulse", device_rate_hz=16000)
        spk = SoundDeviceOut(device="pulse", sample_rate_hz=22050, device_rate_hz=16000)
        mic.start()
        spk.start()
        try:
            tone = (0.5 * np.sin(2 * np.pi * 440 * np.arange(22050) / 22050)).astype(np.float32)
            spk.write(tone)
            assert spk.drain(5.0)
            heard = []
            for _ in range(200):  # up to ~4 s of 20 ms blocks
                block = mic.read(1.0)
                if block is not None:
                    heard.append(block)
                    recent = np.concatenate(heard[-25:])
                    if len(heard) > 60 and np.sqrt(np.mean(recent**2)) < 0.01:
                        break  # the tone has come and gone
            audio = np.concatenate(heard)
            loud = audio[np.abs(audio) > 0.1]
            assert loud.size > 8000, "the tone played to the sink was not heard on its monitor"
            spectrum = np.abs(np.fft.rfft(audio))
            assert np.fft.rfftfreq(audio.shape[0], 1 / 16000)[spectrum.argmax()] == pytest.approx(440, abs=3)
            assert spk.played_samples == pytest.approx(22050, abs=50)
        finally:
            mic.stop()
            spk.stop()
    reinitialize_portaudio()


def test_streams_ask_portaudio_for_low_latency_unless_configured_otherwise():
    sd = FakeSounddevice(DEVICES)
    mic = SoundDeviceIn(device="USB", watchdog_timeout_s=0, sd_module=sd)
    speaker = SoundDeviceOut(device="pulse", watchdog_timeout_s=0, sd_module=sd, latency=0.08)
    mic.start()
    speaker.start()
    try:
        assert [s.kwargs["latency"] for s in sd.streams] == ["low", 0.08]
    finally:
        mic.stop()
        speaker.stop()
    with pytest.raises(ValueError, match="audio latency = 'fast'"):
        SoundDeviceOut(sd_module=sd, latency="fast")


def test_bench_audio_device_script_measures_both_latency_settings_on_a_null_sink():
    import re
    import subprocess
    import sys
    from pathlib import Path

    from edgevox.testing.pulse import pulseaudio_installed

    if not pulseaudio_installed():
        pytest.skip("PulseAudio is not installed (apt-get install pulseaudio pulseaudio-utils libportaudio2)")
    script = Path(__file__).resolve().parents[2] / "scripts" / "bench_audio_device.py"
    out = subprocess.run(
        [sys.executable, str(script), "--trials", "1"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    rows = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"^(low|high)\s+(\d+)\s+\d+\s+(\d+)", out, re.M)}
    assert set(rows) == {"low", "high"}, out
    for loopback_ms, stop_ms in rows.values():
        assert 0 < loopback_ms < 1000 and 0 < stop_ms < 1000, out
    assert "stop time high/low" in out
