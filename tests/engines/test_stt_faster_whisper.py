import numpy as np
import pytest

from edgevox.engines.audio_wav import read_wav

pytestmark = pytest.mark.models


def test_transcribes_go_forward(whisper_stt, speech_dir):
    audio, _ = read_wav(speech_dir / "classic/goforward.wav")
    result = whisper_stt.transcribe(audio)
    assert "forward" in result.text.lower()
    assert result.audio_duration_s == pytest.approx(2.786, abs=0.01)
    assert result.segments and result.segments[0]["text"]


def test_vocabulary_biasing_builds_a_prompt_and_still_transcribes(whisper_stt, speech_dir):
    assert whisper_stt.bias_text(["forward", "turn_left", "Forward", "  stop "]) == "forward, turn left, stop."
    audio, _ = read_wav(speech_dir / "classic/goforward.wav")
    result = whisper_stt.transcribe(audio, vocabulary=["forward", "meters", "stop"])
    assert "forward" in result.text.lower()


def test_silence_gives_an_empty_transcript(whisper_stt):
    assert whisper_stt.transcribe(np.zeros(16000, dtype=np.float32)).text == ""
    assert whisper_stt.transcribe(np.zeros(0, dtype=np.float32)).text == ""


def test_invalid_settings_fail_before_loading():
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

    with pytest.raises(ValueError, match="beam_size"):
        FasterWhisperSTT(beam_size=0)
    with pytest.raises(ValueError, match="bias"):
        FasterWhisperSTT(bias="grammar")


def test_a_prompt_list_echoed_by_whisper_is_collapsed_and_other_text_kept():
    from edgevox.engines.stt_faster_whisper import collapse_list_echo

    assert collapse_list_echo("turn, turn,") == "turn"
    assert collapse_list_echo("living room, living room,") == "living room"
    assert collapse_list_echo("Stop, stop, stop!") == "Stop!"
    for kept in ("Go to the kitchen, please.", "one, two, three", "very very good", "Left."):
        assert collapse_list_echo(kept) == kept


def test_echo_collapse_applies_only_when_a_prompt_was_given(whisper_stt, speech_dir):
    """The real engine with and without a vocabulary still transcribes a command word."""
    audio, rate = read_wav(speech_dir / "commands" / "felix_back_0.wav")
    plain = whisper_stt.transcribe(audio).text.lower()
    biased = whisper_stt.transcribe(audio, vocabulary=["back", "forward", "turn"]).text.lower()
    assert "back" in plain and "back" in biased and "," not in biased
