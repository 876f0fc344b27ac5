"""The offline voice loop: VAD segmentation, streaming STT -> agent -> TTS, barge-in and the safety stop.

Start with :class:`edgevox.voice.loop.VoiceLoop`; the design is in ``docs/voice.md``.
Heavy engines are never imported here (see :mod:`edgevox.voice.defaults`).
"""

from edgevox.voice.chunker import Chunker, ChunkerSettings
from edgevox.voice.latency import LatencyObserver
from edgevox.voice.loop import VoiceLoop, VoiceSettings
from edgevox.voice.segmenter import Segmenter, SegmenterSettings
from edgevox.voice.speechtext import clean_for_speech
from edgevox.voice.stop_phrases import StopPhraseMatcher

__all__ = [
    "Chunker",
    "ChunkerSettings",
    "LatencyObserver",
    "Segmenter",
    "SegmenterSettings",
    "StopPhraseMatcher",
    "VoiceLoop",
    "VoiceSettings",
    "clean_for_speech",
]
