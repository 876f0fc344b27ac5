import numpy as np
import pytest

from edgevox.engines.limiter import CEILING, WINDOW_S, db_to_gain, limit, limiter_gain

RATE = 22050


def _sine(amplitude: float, seconds: float, freq_hz: float = 200.0) -> np.ndarray:
    return (amplitude * np.sin(2 * np.pi * freq_hz * np.arange(int(RATE * seconds)) / RATE)).astype(np.float32)


def test_audio_under_the_ceiling_is_left_exactly_as_it_was():
    x = _sine(0.8, 0.5)
    np.testing.assert_array_equal(limit(x, RATE), x)
    assert np.all(limiter_gain(x, RATE) == 1.0)


@pytest.mark.parametrize("amplitude", [1.0, 1.5, 4.0, 100.0])
def test_peaks_end_under_the_ceiling_and_nothing_is_clipped(amplitude):
    rng = np.random.default_rng(int(amplitude))
    x = np.concatenate([_sine(0.3, 0.3), _sine(amplitude, 0.2), rng.standard_normal(3000).astype(np.float32)])
    x[-1] = amplitude  # a peak in the last sample: the edges are covered too
    gain = limiter_gain(x, RATE)
    assert np.max(np.abs(x * gain)) <= CEILING + 1e-6
    y = limit(x, RATE)
    assert np.max(np.abs(y)) <= CEILING < 1.0
    # Not clipped: the output is the input times the smooth gain curve, so waveforms keep their shape.
    np.testing.assert_allclose(y, x * gain, atol=1e-6)
    assert np.max(np.abs(np.diff(gain))) <= 1.0 / (2 * int(WINDOW_S * RATE) + 1) + 1e-6


def test_a_steady_loud_vowel_gets_one_steady_gain_not_a_pumping_one():
    x = np.concatenate([_sine(0.2, 0.3), _sine(2.0, 0.4), _sine(0.2, 0.3)])
    gain = limiter_gain(x, RATE)
    half = int(WINDOW_S * RATE)
    middle = gain[int(0.3 * RATE) + 2 * half : int(0.7 * RATE) - 2 * half]
    assert np.ptp(middle) < 1e-3  # one level through the vowel, not one per pitch period
    assert middle.mean() == pytest.approx(CEILING / 2.0, rel=0.01)
    assert np.max(np.abs(np.diff(gain))) <= 1.0 / (2 * half + 1) + 1e-6  # ramps over a window
    # Quiet speech a window away from the loud part is untouched on both sides.
    assert np.all(gain[: int(0.3 * RATE) - 2 * half - 1] == 1.0)
    assert np.all(gain[int(0.7 * RATE) + 2 * half + 1 :] == 1.0)


def test_decibels_to_a_factor():
    assert db_to_gain(0.0) == 1.0
    assert db_to_gain(-6.0) == pytest.approx(0.501, abs=1e-3)
    assert db_to_gain(20.0) == pytest.approx(10.0)


def test_empty_audio_stays_empty():
    assert limit(np.zeros(0, dtype=np.float32), RATE).shape == (0,)
