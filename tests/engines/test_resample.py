import numpy as np
import pytest

from edgevox.engines.resample import Resampler, resample

RATE_PAIRS = [(48000, 16000), (44100, 16000), (16000, 22050), (22050, 16000), (16000, 48000), (22050, 44100)]


def _sine(freq_hz: float, rate_hz: int, seconds: float = 1.0) -> np.ndarray:
    return np.sin(2 * np.pi * freq_hz * np.arange(int(rate_hz * seconds)) / rate_hz).astype(np.float32)


@pytest.mark.parametrize(("in_hz", "out_hz"), RATE_PAIRS)
def test_a_sine_keeps_its_frequency_phase_and_length(in_hz, out_hz):
    y = resample(_sine(440, in_hz), in_hz, out_hz)
    assert y.shape[0] == out_hz
    reference = _sine(440, out_hz)
    # Away from the edges (filter start-up), the output is the same sine sampled at the new rate.
    assert np.max(np.abs(y[300:-300] - reference[300:-300])) < 1e-3
    spectrum = np.abs(np.fft.rfft(y))
    assert np.fft.rfftfreq(y.shape[0], 1 / out_hz)[spectrum.argmax()] == pytest.approx(440, abs=1.0)


def test_downsampling_removes_content_above_the_new_nyquist():
    y = resample(_sine(12000, 48000), 48000, 16000)  # 12 kHz would alias to 4 kHz
    assert np.sqrt(np.mean(y[200:-200] ** 2)) < 1e-3


@pytest.mark.parametrize(("in_hz", "out_hz"), RATE_PAIRS)
def test_streaming_in_odd_blocks_equals_one_call(in_hz, out_hz):
    x = np.random.default_rng(0).standard_normal(in_hz // 2).astype(np.float32)
    whole = Resampler(in_hz, out_hz).process(x)
    r = Resampler(in_hz, out_hz)
    parts = np.concatenate([r.process(x[i : i + 317]) for i in range(0, x.shape[0], 317)])
    assert parts.shape == whole.shape
    np.testing.assert_allclose(parts, whole, atol=1e-5)


def test_same_rate_is_a_copy():
    x = np.arange(10, dtype=np.float32)
    y = resample(x, 16000, 16000)
    np.testing.assert_array_equal(x, y)
    assert y is not x


def test_bad_rates_are_rejected():
    with pytest.raises(ValueError, match="positive"):
        Resampler(0, 16000)


def _tones(rate_hz: int, late_s: float = 0.0) -> np.ndarray:
    t = np.arange(rate_hz) / rate_hz - late_s
    return (np.sin(2 * np.pi * 440 * t) + 0.3 * np.sin(2 * np.pi * 3000 * t)).astype(np.float32)


def _stream(r: Resampler, x: np.ndarray, block: int) -> tuple[np.ndarray, list[int]]:
    pieces, boundaries, produced = [], [], 0
    for i in range(0, x.shape[0], block):
        pieces.append(r.process(x[i : i + block]))
        produced += pieces[-1].shape[0]
        boundaries.append(produced)
    pieces.append(r.flush())
    return np.concatenate(pieces), boundaries


@pytest.mark.parametrize(("in_hz", "out_hz"), RATE_PAIRS)
@pytest.mark.parametrize("block_ms", [10, 20])
def test_a_stream_plus_flush_has_the_one_shot_length_and_is_the_signal_late_by_delay_s(in_hz, out_hz, block_ms):
    r = Resampler(in_hz, out_hz)
    streamed, _ = _stream(r, _tones(in_hz), in_hz * block_ms // 1000)
    assert streamed.shape == resample(_tones(in_hz), in_hz, out_hz).shape == (out_hz,)
    assert 0.0 < r.delay_s < 0.002
    reference = _tones(out_hz, late_s=r.delay_s)
    assert np.max(np.abs(streamed[300:-300] - reference[300:-300])) < 1e-3


@pytest.mark.parametrize(("in_hz", "out_hz"), RATE_PAIRS)
def test_block_boundaries_leave_no_click(in_hz, out_hz):
    r = Resampler(in_hz, out_hz)
    streamed, boundaries = _stream(r, _tones(in_hz), in_hz // 100)
    error = np.abs(streamed - _tones(out_hz, late_s=r.delay_s))
    inner = [b for b in boundaries if 300 < b < out_hz - 300]
    assert len(inner) > 50
    assert max(error[b - 1 : b + 1].max() for b in inner) < 1e-3


def test_one_shot_pass_band_is_flat_up_to_90_percent_of_the_new_nyquist():
    """The hand-written filter soxr replaced for one-shot use lost 4 dB at 7.2 kHz."""
    y = resample(_sine(7200, 48000), 48000, 16000)
    gain = np.sqrt(np.mean(y[300:-300] ** 2)) / np.sqrt(0.5)
    assert gain == pytest.approx(1.0, abs=0.01)


def test_reset_starts_a_new_stream():
    r = Resampler(48000, 16000)
    x = _sine(440, 48000, 0.1)
    first = np.concatenate([r.process(x), r.flush()])
    r.process(x[:480])
    r.reset()
    again = np.concatenate([r.process(x), r.flush()])
    np.testing.assert_array_equal(first, again)
    assert first.shape == (1600,)


def test_empty_input_gives_empty_output():
    assert resample(np.zeros(0, dtype=np.float32), 48000, 16000).shape == (0,)
    assert Resampler(48000, 16000).process(np.zeros(0, dtype=np.float32)).shape == (0,)
    assert Resampler(48000, 16000).flush().shape == (0,)
