import numpy as np
import pytest

pytestmark = pytest.mark.models


def test_produces_non_silent_audio_at_22050_hz(piper_tts):
    assert piper_tts.sample_rate_hz == 22050
    chunks = list(piper_tts.synthesize("Moving forward two meters."))
    assert chunks
    audio = np.concatenate(chunks)
    assert audio.dtype == np.float32
    assert 0.5 < audio.shape[0] / 22050 < 5.0
    assert np.sqrt(np.mean(audio**2)) > 0.01
    assert np.max(np.abs(audio)) <= 1.0


def test_yields_one_chunk_per_sentence(piper_tts):
    chunks = list(piper_tts.synthesize("Hello there. I am a robot. How can I help?"))
    assert len(chunks) == 3


def test_empty_text_yields_nothing(piper_tts):
    assert list(piper_tts.synthesize("   ")) == []


def test_the_voice_says_where_it_runs():
    import onnxruntime

    from edgevox.engines.tts_piper import PiperTTS

    tts = PiperTTS("piper-joe-medium", num_threads=1, device="cpu")
    assert (tts.device, tts.describe()) == ("cpu", "cpu, 1 threads")
    auto = PiperTTS("piper-joe-medium")
    assert auto.device == ("cuda" if "CUDAExecutionProvider" in onnxruntime.get_available_providers() else "cpu")


SHORT = "Okay."
LONG = "The kitchen is on the left, past the living room, and the charging dock is next to the fridge."


def _level_db(tts, text: str, runs: int = 3) -> tuple[float, float]:
    """Median RMS level (dBFS) and largest peak over a few syntheses (Piper's noise varies each run)."""
    levels, peak = [], 0.0
    for _ in range(runs):
        audio = np.concatenate(list(tts.synthesize(text)))
        levels.append(20 * np.log10(np.sqrt(np.mean(audio**2))))
        peak = max(peak, float(np.max(np.abs(audio))))
    return float(np.median(levels)), peak


def test_replies_stay_under_full_scale_with_no_clipped_samples(piper_tts):
    """Piper used to scale every sentence to a peak of exactly 1.0 (with samples at +-1.0)."""
    from edgevox.engines.limiter import CEILING

    assert (piper_tts.gain_db, piper_tts.limiter) == (0.0, True)
    for text in (SHORT, "Stop!", LONG, "Hello there. I am a robot. How can I help?"):
        for chunk in piper_tts.synthesize(text):
            assert np.max(np.abs(chunk)) <= CEILING < 1.0
            assert not np.any(np.abs(chunk) >= 1.0)


def test_a_short_and_a_long_sentence_come_out_at_the_same_level(piper_tts):
    """One gain for every sentence: Piper's per-sentence normalisation put these two ~2 dB apart
    (measured: "Okay." -19.8 dBFS, the long sentence -21.7); the voice itself says both at ~-25."""
    short_db, _ = _level_db(piper_tts, SHORT)
    long_db, _ = _level_db(piper_tts, LONG)
    assert abs(short_db - long_db) < 1.5
    assert -30 < long_db < -20


def test_the_gain_is_respected_and_the_limiter_holds_loud_settings(piper_tts):
    from edgevox.engines.limiter import CEILING
    from edgevox.engines.tts_piper import PiperTTS

    base_db, _ = _level_db(piper_tts, LONG)
    quiet_db, quiet_peak = _level_db(PiperTTS("piper-joe-medium", gain_db=-6.0), LONG)
    assert quiet_db - base_db == pytest.approx(-6.0, abs=1.0)
    assert quiet_peak < 0.5
    loud_db, loud_peak = _level_db(PiperTTS("piper-joe-medium", gain_db=12.0), LONG)
    assert loud_peak <= CEILING
    assert 7.0 < loud_db - base_db < 12.5  # louder, by less than 12 dB where the peaks were held down


def test_without_the_limiter_loud_audio_is_clipped_at_full_scale(piper_tts):
    from edgevox.engines.tts_piper import PiperTTS

    _, peak = _level_db(PiperTTS("piper-joe-medium", gain_db=12.0, limiter=False), LONG, runs=1)
    assert peak == 1.0


@pytest.mark.parametrize("gain_db", [-41.0, 20.5, float("nan"), "loud", True])
def test_a_bad_gain_is_refused_before_the_voice_loads(gain_db):
    from edgevox.engines.tts_piper import PiperTTS

    with pytest.raises(ValueError, match="gain_db"):
        PiperTTS("no-such-voice", gain_db=gain_db)


@pytest.mark.parametrize("value", ["30", "-50", "loud", "true"])
def test_a_bad_tts_gain_in_a_config_is_an_error_at_load_naming_the_key(value):
    from edgevox.config.loader import parse_config
    from edgevox.errors import ConfigError

    with pytest.raises(ConfigError, match=r"tts\.gain_db"):
        parse_config(f"tts:\n  gain_db: {value}\n", source="robot.yaml")
    with pytest.raises(ConfigError, match=r"tts\.limiter"):
        parse_config("tts:\n  limiter: maybe\n", source="robot.yaml")


def test_the_config_keys_reach_the_voice():
    from edgevox.config.build_engines import make_tts
    from edgevox.config.loader import parse_config

    config = parse_config("tts:\n  gain_db: -3.5\n  limiter: false\n", source="robot.yaml")
    tts = make_tts(config.tts)
    assert (tts.gain_db, tts.limiter) == (-3.5, False)


def test_pipers_own_volume_option_still_works_with_the_gain(piper_tts):
    """Configs written before tts.gain_db set Piper's linear volume through tts.options."""
    from edgevox.config.build_engines import make_tts
    from edgevox.config.loader import parse_config

    base_db, _ = _level_db(piper_tts, LONG)
    config = parse_config("tts:\n  options: {volume: 0.5}\n", source="robot.yaml")
    half = make_tts(config.tts)
    half_db, half_peak = _level_db(half, LONG)
    assert half_db - base_db == pytest.approx(-6.0, abs=1.0)  # 0.5 = -6 dB
    with pytest.raises(ValueError, match="volume"):
        from edgevox.engines.tts_piper import PiperTTS

        PiperTTS("piper-joe-medium", volume=0.0)


def test_without_pipers_noise_a_text_is_rendered_the_same_every_time():
    """``noise_scale``/``noise_w`` (Piper's own options, also through ``tts.options``): with the
    voice's noise every rendering differs; at 0 they are identical (tests that need the same
    audio every run use it)."""
    from edgevox.engines.tts_piper import PiperTTS

    def render(tts):
        return np.concatenate(list(tts.synthesize("What time is it?")))

    noisy = PiperTTS("piper-joe-medium")
    assert not np.array_equal(render(noisy), render(noisy))
    steady = PiperTTS("piper-joe-medium", noise_scale=0.0, noise_w=0.0)
    first = render(steady)
    assert all(np.array_equal(first, render(steady)) for _ in range(3))
    for bad in (-0.1, 3.0, True, "0"):
        with pytest.raises(ValueError, match="noise_scale"):
            PiperTTS("piper-joe-medium", noise_scale=bad)
