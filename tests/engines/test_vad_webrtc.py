import numpy as np
import pytest

from edgevox.engines.audio_wav import read_wav
from edgevox.engines.vad_webrtc import WebRtcVAD


@pytest.mark.parametrize("frame_ms", [10, 20, 30])
def test_finds_speech_in_a_speech_clip_and_none_in_silence(speech_dir, frame_ms):
    audio, rate = read_wav(speech_dir / "classic/goforward.wav")
    assert rate == 16000
    vad = WebRtcVAD(sample_rate_hz=16000, frame_ms=frame_ms, aggressiveness=2)
    assert vad.speech_ratio(audio) > 0.3
    assert vad.speech_ratio(np.zeros(16000, dtype=np.float32)) == 0.0


def test_rejects_frames_of_the_wrong_length():
    vad = WebRtcVAD(frame_ms=20)
    with pytest.raises(ValueError, match="expected 320"):
        vad.is_speech(np.zeros(480, dtype=np.float32))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"frame_ms": 25}, "frame_ms"),
        ({"sample_rate_hz": 22050}, "sample_rate_hz"),
        ({"aggressiveness": 4}, "aggressiveness"),
    ],
)
def test_invalid_settings_name_the_setting(kwargs, match):
    with pytest.raises(ValueError, match=match):
        WebRtcVAD(**kwargs)


def test_accepts_int16_frames_too():
    vad = WebRtcVAD(frame_ms=10)
    assert vad.is_speech(np.zeros(160, dtype=np.int16)) is False
