"""The text rule of adaptive endpointing: does a speculative transcript end mid-phrase? (table test)"""

from __future__ import annotations

import pytest

from edgevox.voice.endpoint import classify_ending, ends_mid_phrase

# (transcript as Whisper might write it, expected reason); reasons other than "complete" are incomplete.
CASES = [
    # complete requests, with and without Whisper's final punctuation
    ("Go forward ten meters.", "complete"),
    ("stop", "complete"),
    ("Bring me the red cup!", "complete"),
    ("What's the weather like?", "complete"),
    ("Is the garage door open?", "complete"),
    ("Pick it up.", "complete"),
    ("Turn the lights off", "complete"),
    ("Set a timer for 30 seconds.", "complete"),
    ("That's all.", "complete"),
    ("No.", "complete"),
    ("Thank you very much.", "complete"),
    ("What should I do?", "complete"),
    ("Dock at the charging station, please.", "complete"),
    # conjunctions
    ("Turn left and", "conjunction"),
    ("Turn left and.", "conjunction"),
    ("Clean the kitchen, but", "conjunction"),
    ("Wait here until", "conjunction"),
    ("Fetch the keys or", "conjunction"),
    ("Go upstairs because", "conjunction"),
    # prepositions, "to" included
    ("Move the box to", "preposition"),
    ("Set a timer for.", "preposition"),
    ("Put the cup next to the sink beside", "preposition"),
    ("Come in.", "complete"),  # particles that end phrasal verbs are not prepositions here
    ("Drive towards", "preposition"),
    ("Look behind", "preposition"),
    # articles and determiners
    ("Pick up the.", "determiner"),
    ("Bring me a", "determiner"),
    ("Open your", "determiner"),
    ("Water those", "determiner"),
    # auxiliaries and modal verbs
    ("The door is", "auxiliary"),
    ("Could you, um, can.", "auxiliary"),
    ("I think we should.", "auxiliary"),
    ("Let's", "auxiliary"),
    # numbers: a digit string or a count may go on
    ("Call five five", "number"),
    ("Set the volume to 7.", "number"),
    ("The code is 4 2 9", "number"),
    ("Go forward twenty", "number"),
    ("Room 3.5", "number"),
    # fillers
    ("Bring me, um", "filler"),
    ("Go to the uh.", "filler"),
    ("Hmm.", "filler"),
    # trailing punctuation that means "more to come"
    ("Go to the kitchen,", "trailing_punctuation"),
    ("Go to the kitchen...", "trailing_punctuation"),
    ("Go to the kitchen…", "trailing_punctuation"),
    ("Go to the kitchen -", "trailing_punctuation"),
    ("The list is:", "trailing_punctuation"),
    # nothing transcribed yet: no evidence the request is done
    ("", "empty"),
    ("   ", "empty"),
]


@pytest.mark.parametrize(("text", "reason"), CASES)
def test_ending_is_classified_by_the_category_of_the_last_word(text, reason):
    ending = classify_ending(text)
    assert ending.reason == reason
    assert ending.complete is (reason == "complete")
    assert ends_mid_phrase(text) is (reason != "complete")


def test_case_and_surrounding_whitespace_do_not_matter():
    assert ends_mid_phrase("  TURN LEFT AND  ")
    assert not ends_mid_phrase("  TURN LEFT  ")


def test_only_the_last_word_counts():
    assert not ends_mid_phrase("and then go to the kitchen")
    assert ends_mid_phrase("kitchen then the")


# --- the measurement on real clips (edgevox eval endpoint, on a small subset) -------------------

COMMAND_CLIPS = (
    "classic/goforward.wav",
    "commands/stp_lock_the_Front_Door.wav",
    "commands/stp_set_a_timer_for_5_minutes.wav",
    "commands/felix_left_2.wav",
    "noisy_farfield/mix_goforward__exercise_bike_0dB.wav",
)


@pytest.mark.models
def test_adaptive_endpoint_does_not_split_commands_or_a_spoken_digit_string(speech_dir):
    from edgevox.cli.eval_endpoint import SETTINGS, PauseHinter, Stream, evaluate, join_words
    from edgevox.engines.audio_wav import read_wav
    from edgevox.engines.stt_faster_whisper import FasterWhisperSTT
    from edgevox.engines.vad_silero import ConfirmedVAD, SileroVAD
    from edgevox.engines.vad_webrtc import WebRtcVAD

    def clip(name):
        return read_wav(speech_dir / name)[0]

    streams = [Stream(name, clip(name), 1) for name in COMMAND_CLIPS]
    streams.append(Stream("noise", clip("noisy_farfield/noise_doing_the_dishes.wav"), 0))
    digits = join_words([clip("commands/felix_five_0.wav"), clip("commands/felix_five_2.wav")], 450)
    streams.append(Stream("five five", digits, 1, hard=True))
    vad = ConfirmedVAD(WebRtcVAD(frame_ms=20), SileroVAD())
    hinter = PauseHinter(FasterWhisperSTT("whisper-tiny.en", cpu_threads=2))
    tallies = evaluate(streams, vad, SETTINGS, hinter)
    adaptive, fixed = tallies["adaptive 250/800"], tallies["fixed 300"]
    print({name: (t.split, t.hard_split, t.missed, t.noise_utterances) for name, t in tallies.items()})
    assert adaptive.split == [] and adaptive.hard_split == [] and adaptive.missed == []
    assert adaptive.noise_utterances == 0
    assert len(fixed.hard_split) > len(adaptive.hard_split)  # 450 ms between digits ends a fixed 300 ms endpoint


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("For a full hour he had paced up and down, waiting.", "statement"),
        ("My sister bought a new bicycle yesterday.", "statement"),
        ("The lower case was invented in the Middle Ages.", "statement"),
        ("Could you close the window in the bedroom?", "complete"),
        ("Please bring me the red cup from the table.", "complete"),
        ("How long until the battery is full?", "complete"),
        ("Yes, thank you.", "complete"),  # a short answer
        ("He went to the", "determiner"),  # mid-phrase wins over statement
    ],
)
def test_a_complete_statement_is_told_apart_from_a_request(text, reason):
    ending = classify_ending(text)
    assert ending.reason == reason
    assert ending.statement == (reason == "statement")
