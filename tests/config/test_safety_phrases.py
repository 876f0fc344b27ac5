"""``safety.stop_phrases`` must give the matcher something to match (issue 25): an empty list,
or phrases with no words, were accepted here and ended ``edgevox run`` in a traceback."""

from __future__ import annotations

import pytest

from edgevox.config import parse_config
from edgevox.errors import ConfigError
from edgevox.voice.stop_phrases import StopPhraseMatcher


@pytest.mark.parametrize(
    ("phrases", "expected"),
    [
        ("[]", "robot.yaml:2: safety.stop_phrases: at least one phrase is needed (e.g. [stop, halt])"),
        ("[stop, '!!!']", "robot.yaml:2: safety.stop_phrases: '!!!' has no words to match; write a word"),
    ],
)
def test_stop_phrases_the_matcher_cannot_use_are_one_line(phrases, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(f"safety:\n  stop_phrases: {phrases}\n", source="robot.yaml", env={})
    assert str(err.value).startswith(expected) and "\n" not in str(err.value)


def test_every_accepted_list_builds_the_matcher_the_voice_loop_builds():
    for text in ("[halt]", "['STOP!', emergency stop]", "[ＳＴＯＰ]"):
        config = parse_config(f"safety:\n  stop_phrases: {text}\n", env={})
        assert StopPhraseMatcher(config.safety.stop_phrases).phrases
