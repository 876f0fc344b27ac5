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
