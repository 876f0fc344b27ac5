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
