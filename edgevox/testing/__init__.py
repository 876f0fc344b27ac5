"""Test helpers shipped with edgevox: fakes for every engine protocol and a private PulseAudio.

Use them to test agents and voice loops without models or sound cards::

    from edgevox.testing import ScriptedLLM, FakeSTT, FakeTTS, FakeVAD, FakeAudioIn, MemoryAudioOut

:func:`private_pulseaudio` (in :mod:`edgevox.testing.pulse`) gives real
``sounddevice`` streams on a machine with no sound card.
"""

from edgevox.testing.fake_audio import FakeAudioIn, MemoryAudioOut
from edgevox.testing.fake_engines import FakeSTT, FakeTTS, FakeVAD, LLMCall, ScriptedLLM, STTCall, TTSCall, split_tokens
from edgevox.testing.pulse import (
    PulseServer,
    PulseUnavailable,
    private_pulseaudio,
    pulseaudio_installed,
    reinitialize_portaudio,
)

__all__ = [
    "FakeAudioIn",
    "FakeSTT",
    "FakeTTS",
    "FakeVAD",
    "LLMCall",
    "MemoryAudioOut",
    "PulseServer",
    "PulseUnavailable",
    "STTCall",
    "ScriptedLLM",
    "TTSCall",
    "private_pulseaudio",
    "pulseaudio_installed",
    "reinitialize_portaudio",
    "split_tokens",
]
