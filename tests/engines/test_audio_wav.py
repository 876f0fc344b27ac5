import threading

import numpy as np
import pytest

from edgevox.engines.audio_wav import NullOut, WavFileIn, WavFileOut, read_wav, write_wav
from edgevox.errors import LifecycleError


def _tone(seconds: float, rate_hz: int, freq_hz: float = 440.0) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * freq_hz * np.arange(int(seconds * rate_hz)) / rate_hz)).astype(np.float32)


def test_write_then_read_roundtrips_to_16_bit_precision(tmp_path):
    audio = _tone(0.5, 22050)
    write_wav(tmp_path / "a.wav", audio, 22050)
    back, rate = read_wav(tmp_path / "a.wav")
    assert rate == 22050
    np.testing.assert_allclose(back, audio, atol=1 / 16000)


def test_file_in_yields_fixed_blocks_resampled_to_16k_with_trailing_silence(tmp_path):
    write_wav(tmp_path / "a.wav", _tone(1.0, 22050), 22050)
    mic = WavFileIn(tmp_path / "a.wav", block_ms=20, trailing_silence_s=0.5)
    mic.start()
    blocks = []
    with pytest.raises(EOFError):
        while True:
            blocks.append(mic.read(1.0))
    assert {b.shape[0] for b in blocks} == {320}
    total = np.concatenate(blocks)
    assert total.shape[0] == pytest.approx(1.5 * 16000, abs=320)
    assert np.sqrt(np.mean(total[:16000] ** 2)) > 0.3
    assert np.all(total[16000 + 320 :] == 0)


def test_file_in_read_before_start_is_a_lifecycle_error(tmp_path):
    mic = WavFileIn(audio=np.zeros(1600, np.float32), audio_rate_hz=16000)
    with pytest.raises(LifecycleError):
        mic.read(0.1)


def test_realtime_file_in_releases_blocks_on_the_clock():
    now = [100.0]
    mic = WavFileIn(
        audio=np.zeros(16000, np.float32),
        audio_rate_hz=16000,
        block_ms=20,
        realtime=True,
        trailing_silence_s=0,
        clock=lambda: now[0],
    )
    mic.start()
    assert mic.read(0.0) is None  # the first block is not "captured" before 20 ms have passed
    now[0] += 0.020
    assert mic.read(0.0) is not None
    assert mic.read(0.0) is None
    now[0] += 0.040
    assert mic.read(0.0) is not None and mic.read(0.0) is not None


def test_file_out_records_what_is_played(tmp_path):
    out = WavFileOut(tmp_path / "out.wav", sample_rate_hz=22050)
    out.start()
    out.write(_tone(0.2, 22050))
    out.write(_tone(0.1, 22050))
    assert out.played_samples == int(0.3 * 22050)
    assert not out.playing and out.drain(0.1)
    out.stop()
    back, rate = read_wav(tmp_path / "out.wav")
    assert rate == 22050 and back.shape[0] == int(0.3 * 22050)


def test_write_before_start_is_a_lifecycle_error(tmp_path):
    with pytest.raises(LifecycleError):
        WavFileOut(tmp_path / "x.wav").write(np.zeros(10, np.float32))


def test_realtime_file_out_plays_at_the_sample_rate_and_clear_drops_the_rest(tmp_path):
    played = threading.Event()
    out = WavFileOut(
        tmp_path / "out.wav", sample_rate_hz=16000, realtime=True, block_ms=10, on_play=lambda n, t: played.set()
    )
    out.start()
    try:
        out.write(_tone(5.0, 16000))
        assert played.wait(2.0)
        assert out.playing
        dropped = out.clear()
        assert dropped > 4 * 16000  # almost all 5 s were still queued
        assert out.drain(1.0)
        assert not out.playing
        assert 0 < out.played_samples < 16000
    finally:
        out.stop()
    back, _ = read_wav(tmp_path / "out.wav")
    assert back.shape[0] == out.played_samples


def test_realtime_drain_waits_for_playback_to_finish():
    out = NullOut(sample_rate_hz=16000, realtime=True, block_ms=10)
    out.start()
    try:
        out.write(np.ones(1600, np.float32) * 0.1)  # 100 ms
        assert out.drain(2.0)
        assert out.played_samples == 1600
    finally:
        out.stop()


def test_null_out_counts_and_discards():
    out = NullOut(sample_rate_hz=22050)
    out.start()
    out.write(np.zeros(100, np.float32))
    assert out.played_samples == 100 and out.clear() == 0
    out.stop()
