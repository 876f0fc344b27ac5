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


# --- the short encoder window (real clips from ../shared/speech, used in place) ------------------


def _clip(speech_dir, name):
    from edgevox.engines.resample import resample

    audio, rate = read_wav(speech_dir / name)
    return resample(audio, rate, 16000)


def _manifest(speech_dir):
    import csv

    with open(speech_dir / "MANIFEST.tsv", newline="", encoding="utf-8") as fh:
        return {row["file"]: row["transcript"] for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)}


def _repeated_run(words):
    """The first phrase said twice in a row (``["stop", "stop"]`` -> ``("stop",)``), else None."""
    for size in range(1, len(words) // 2 + 1):
        for i in range(len(words) - 2 * size + 1):
            if words[i : i + size] == words[i + size : i + 2 * size]:
                return tuple(words[i : i + size])
    return None


@pytest.fixture(scope="module")
def full_window_stt():
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT

    return FasterWhisperSTT("whisper-tiny.en", cpu_threads=2, min_window_s=None)


def test_the_window_is_the_utterance_plus_padding_rounded_up_to_the_ladder_and_30_s_above(whisper_stt):
    assert whisper_stt.min_window_s == 10.0 and whisper_stt.window_pad_s == 3.0
    assert whisper_stt.windows_s == (10.0, 13.0, 17.0, 22.0, 28.0, 30.0)
    assert whisper_stt.window_s(1.0) == 10.0
    assert whisper_stt.window_s(7.0) == 10.0 and whisper_stt.window_s(7.01) == 13.0
    assert whisper_stt.window_s(9.0) == 13.0
    assert whisper_stt.window_s(24.5) == 28.0 and whisper_stt.window_s(25.5) == 30.0
    assert whisper_stt.window_s(27.5) == 30.0
    assert "short window" in whisper_stt.window_policy and "10, 13, 17, 22, 28 s" in whisper_stt.window_policy


def test_every_length_falls_in_one_of_few_windows_so_the_encoder_sees_few_shapes(whisper_stt):
    # Each new input shape costs oneDNN a cached primitive that is never freed (memory test:
    # test_stt_faster_whisper_memory.py): every length from 0 to 40 s gives one of 6 windows.
    windows = {whisper_stt.window_s(hundredths / 100) for hundredths in range(4001)}
    assert windows == set(whisper_stt.windows_s)


def test_warmup_transcribes_once_in_every_window_also_with_a_fractional_padding(whisper_stt, monkeypatch):
    from edgevox.engines.stt_faster_whisper import _ladder

    monkeypatch.setattr(whisper_stt, "window_pad_s", 3.5)
    monkeypatch.setattr(whisper_stt, "windows_s", _ladder(0.0, 3.5))  # 4 s first: 0.5 s of audio fills it
    windows = []
    monkeypatch.setattr(
        whisper_stt, "transcribe", lambda audio: windows.append(whisper_stt.window_s(len(audio) / 16000))
    )
    whisper_stt.warmup()
    assert windows == list(whisper_stt.windows_s)


@pytest.mark.parametrize(
    ("min_window_s", "window_pad_s", "ladder"),
    [
        (10.0, 3.0, (10.0, 13.0, 17.0, 22.0, 28.0, 30.0)),
        (7.5, 3.0, (8.0, 10.0, 13.0, 17.0, 22.0, 28.0, 30.0)),  # rounded up to a whole second
        (0.0, 3.0, (4.0, 5.0, 7.0, 9.0, 12.0, 15.0, 19.0, 24.0, 30.0)),  # never shorter than the padding
        (0.0, 0.0, (1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 9.0, 12.0, 15.0, 19.0, 24.0, 30.0)),
        (20.0, 3.0, (20.0, 25.0, 30.0)),
        (None, 3.0, (30.0,)),
    ],
)
def test_the_ladder_grows_by_a_quarter_in_whole_seconds_up_to_30(min_window_s, window_pad_s, ladder):
    from edgevox.engines.stt_faster_whisper import _ladder

    assert _ladder(min_window_s, window_pad_s) == ladder


def test_short_command_clips_are_not_repeated(whisper_stt, speech_dir):
    from edgevox.cli.eval_cmd import default_vocabulary_text, parse_vocabulary
    from edgevox.voice.textnorm import normalize

    vocabulary = parse_vocabulary(default_vocabulary_text())
    references = _manifest(speech_dir)
    names = sorted(p.name for p in (speech_dir / "commands").glob("*.wav") if p.name.startswith(("felix_", "stp_")))
    assert len(names) >= 30
    repeats = []
    for name in names:
        audio = _clip(speech_dir, f"commands/{name}")
        reference_run = _repeated_run(normalize(references.get(f"commands/{name}", "")).split())
        for vocab in ((), vocabulary):
            text = whisper_stt.transcribe(audio, vocabulary=vocab).text
            run = _repeated_run(normalize(text).split())
            if run and run != reference_run:
                repeats.append(f"{name} ({'biased' if vocab else 'plain'}): {text!r}")
    assert not repeats


@pytest.mark.parametrize(
    "name",
    [
        "classic/jfk.wav",
        "ljspeech/LJ001-0001.wav",
        "ljspeech/LJ001-0003.wav",
        "ljspeech/LJ001-0015.wav",
        "librispeech/1272-141231-0002.wav",  # 13 s: the decoder stops at 10.7 s and resumes
    ],
)
def test_the_last_word_of_a_long_clip_is_kept(whisper_stt, speech_dir, name):
    from edgevox.voice.textnorm import normalize

    result = whisper_stt.transcribe(_clip(speech_dir, name))
    assert whisper_stt.window_s(result.audio_duration_s) < 30.0  # the short path decoded it
    expected = normalize(_manifest(speech_dir)[name]).split()[-2:]
    assert normalize(result.text).split()[-2:] == expected, result.text


@pytest.mark.parametrize(
    "name",
    [
        "commands/speechcommands_silence.wav",
        "commands/speechcommands_noise.wav",
        "noisy_farfield/noise_doing_the_dishes.wav",
    ],
)
def test_silence_and_noise_clips_give_empty_text(whisper_stt, speech_dir, name):
    result = whisper_stt.transcribe(_clip(speech_dir, name))
    assert result.text == "" and result.segments == []


def test_the_short_window_is_faster_than_the_30_s_window(whisper_stt, full_window_stt, speech_dir):
    import time

    audio = _clip(speech_dir, "classic/goforward.wav")  # 2.8 s
    best = {}
    for _ in range(3):  # interleaved, best of 3: the shared machine's load hits both alike
        for label, stt in (("short", whisper_stt), ("full", full_window_stt)):
            start = time.perf_counter()
            text = stt.transcribe(audio).text
            best[label] = min(best.get(label, float("inf")), time.perf_counter() - start)
            assert "forward" in text.lower()
    assert best["short"] < 0.8 * best["full"], best


def test_a_biased_transcript_that_echoes_itself_is_collapsed():
    from edgevox.engines.stt_faster_whisper import collapse_list_echo

    assert collapse_list_echo("What time is it? What time is it?") == "What time is it?"
    assert collapse_list_echo("Run, part of time. Run, part of time.") == "Run, part of time."
    assert collapse_list_echo("Stop. Stop. Stop.") == "Stop."


# --- device selection (no GPU needed: CTranslate2's CUDA count is patched) ----------------------


@pytest.fixture
def cuda_devices(monkeypatch):
    import ctranslate2

    def set_count(count):
        monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: count)

    return set_count


def test_auto_picks_cuda_with_float16_when_ctranslate2_sees_a_gpu(cuda_devices):
    from edgevox.engines.stt_faster_whisper import resolve_device

    cuda_devices(1)
    assert resolve_device("auto", "auto") == ("cuda", "float16")
    assert resolve_device("auto", "int8_float16") == ("cuda", "int8_float16")
    assert resolve_device("cpu", "auto") == ("cpu", "int8")


def test_auto_falls_back_to_the_cpu_with_int8(cuda_devices):
    from edgevox.engines.stt_faster_whisper import resolve_device

    cuda_devices(0)
    assert resolve_device("auto", "auto") == ("cpu", "int8")
    assert resolve_device("cpu", "float32") == ("cpu", "float32")


def test_asking_for_cuda_without_a_cuda_device_fails_in_one_line_naming_the_fix(cuda_devices):
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT
    from edgevox.errors import ModelError

    cuda_devices(0)
    with pytest.raises(ModelError, match="sees no CUDA device") as info:
        FasterWhisperSTT(device="cuda")
    message = str(info.value)
    assert "\n" not in message and "stt.device: cpu" in message and "CUDA build" in message
    with pytest.raises(ValueError, match="device"):
        FasterWhisperSTT(device="gpu")


def test_the_engine_reports_the_device_it_uses(whisper_stt):
    assert (whisper_stt.device, whisper_stt.compute_type) == ("cpu", "int8")


def test_make_stt_passes_the_device_and_window_settings(cuda_devices):
    from edgevox.config.build import make_stt
    from edgevox.config.schema import STTConfig

    cuda_devices(0)
    stt = make_stt(STTConfig(device="cpu", compute_type="int8", min_window_s=30.0, window_pad_s=2.0))
    assert (stt.device, stt.compute_type, stt.min_window_s, stt.window_pad_s) == ("cpu", "int8", None, 2.0)
    assert stt.window_s(1.0) == 30.0 and "full 30 s" in stt.window_policy


@pytest.mark.parametrize(
    ("text", "loops"),
    [
        ("F-E-E-E-E-E-E-", True),
        ("back back back back", True),
        ("stop stop stop", False),
        ("very very good", False),
        ("five", False),
    ],
)
def test_a_word_four_times_in_a_row_is_a_decoder_loop(text, loops):
    from edgevox.engines.stt_faster_whisper import _loops

    assert _loops(text) is loops


def test_alternatives_are_the_beam_searchs_hypotheses_best_first(whisper_stt, speech_dir):
    audio, _ = read_wav(speech_dir / "classic/goforward.wav")  # 16 kHz already
    beams = whisper_stt.alternatives(audio, 5)
    assert 2 <= len(beams) <= 5
    scores = [score for _, score in beams]
    assert scores == sorted(scores, reverse=True) and all(s < 0 for s in scores)
    assert "forward" in beams[0][0].lower(), beams
    assert whisper_stt.alternatives(np.zeros(0, dtype=np.float32)) == []
    assert whisper_stt.alternatives(np.zeros(31 * 16000, dtype=np.float32)) == []  # longer than a window
