"""The spoken stop check: does this utterance tell the robot to stop?

Two listens, both before any agent sees the words:

1. The transcript is matched against the stop phrases (:class:`~edgevox.voice.stop_phrases.StopPhraseMatcher`),
   on the pause's transcript already (the transcriber stops there, without waiting for the
   endpoint) and on the final one.
2. A *second listen* for the utterances where a missed stop costs most: short ones (at most
   ``max_s``) that began while the robot was talking or something it started was running,
   that the echo guard let through as a person, and whose transcript has no stop phrase. The
   STT decodes them again with beam search (:class:`~edgevox.engines.base.AlternativeHypotheses`)
   and the best beam is matched. Greedy decoding commits to the first token: measured on stops
   said over the robot's voice after echo cancellation, it wrote "Scott.", "Okay." or "It's
   not the robot." where the beam's best was "Stop.", "Okay, stop." and "Stop the robot."
   (``edgevox bench spoken-stop``, figures in ``docs/voice.md``). Only the *best* beam counts,
   not any of them: a stop further down the list was as often a near word ("Stock.", "Shop.").
   With echo cancellation on, the same utterance from the canceller's *linear* stage is decoded
   too when the first decode found no stop: AEC3's suppressor can take the user's first sounds
   for echo ("Up." for "Stop."), the linear stage leaves them (:mod:`edgevox.voice.aec`).
   In these short utterances the match is *tolerant*: a stop word's present-tense forms count
   ("are stopping right now" for "Stop right now" said over the robot), its past does not
   (:meth:`~edgevox.voice.stop_phrases.StopPhraseMatcher.tolerant`). The first transcript is
   matched that way before anything is decoded again.

Utterances the half-duplex guard marks as the robot's own echo get only the first listen: the
robot's own "Stopped." must not stop it again.
"""

from __future__ import annotations

import numpy as np

from edgevox.engines.base import STT, AlternativeHypotheses
from edgevox.voice.stop_phrases import StopPhraseMatcher

SECOND_LISTEN_MAX_S = 2.5
"""The longest utterance the second listen decodes again (a stop is short; longer speech is a request)."""
SECOND_LISTEN_BEAMS = 5


class StopCheck:
    """The two listens (see the module docstring). Thread-safe: the matcher is immutable and
    the STT serialises its own decodes."""

    def __init__(
        self,
        matcher: StopPhraseMatcher | None,
        stt: STT,
        *,
        max_s: float = SECOND_LISTEN_MAX_S,
        beams: int = SECOND_LISTEN_BEAMS,
    ) -> None:
        self.matcher = matcher
        """None when the spoken stop is off (``safety.enabled: false``): nothing is a stop phrase."""
        self.tolerant = matcher.tolerant() if matcher is not None else None
        """The second listen's matcher: present-tense forms of a stop word count too."""
        self.stt = stt
        self.max_s = max_s
        self.beams = beams

    @property
    def second_listen(self) -> bool:
        """Whether the STT can list alternatives (the second listen runs)."""
        return isinstance(self.stt, AlternativeHypotheses) and self.beams > 0

    def phrase(self, text: str) -> str | None:
        """First listen: the stop phrase in ``text``, or None."""
        return self.matcher.match(text) if text and self.matcher is not None else None

    def listen_again(
        self, audio: np.ndarray, linear: np.ndarray | None = None, *, heard: str = ""
    ) -> tuple[str, str] | None:
        """Second listen: (the text, its stop phrase), or None. ``heard``: the first transcript,
        matched tolerantly first; then the best beam of ``audio``, then of ``linear`` (the same
        utterance from the echo canceller's linear stage)."""
        if self.tolerant is None or audio.shape[0] > self.max_s * self.stt.sample_rate_hz:
            return None
        phrase = self.tolerant.match(heard) if heard else None
        if phrase:
            return heard, phrase
        for signal in (audio, linear):
            found = self._best_beam(signal) if signal is not None else None
            if found is not None:
                return found
        return None

    def _best_beam(self, audio: np.ndarray) -> tuple[str, str] | None:
        stt = self.stt
        if self.tolerant is None or not isinstance(stt, AlternativeHypotheses) or self.beams <= 0:
            return None
        alternatives = stt.alternatives(audio, self.beams)
        if not alternatives:
            return None
        text = alternatives[0][0]
        phrase = self.tolerant.match(text)
        return (text, phrase) if phrase else None

    def describe(self) -> str:
        """One line for ``edgevox check``: the active phrases and how they are recognised."""
        if self.matcher is None:
            return "off (safety.enabled: false): no spoken phrase stops the robot"
        return describe(self.matcher.phrases, second_listen=self.second_listen, max_s=self.max_s, beams=self.beams)


def describe(
    phrases: tuple[str, ...] | list[str],
    *,
    second_listen: bool,
    max_s: float = SECOND_LISTEN_MAX_S,
    beams: int = SECOND_LISTEN_BEAMS,
) -> str:
    """How the stop phrases are recognised, in one line (``edgevox check``)."""
    how = "matched in the transcript (at the first pause and at the end)"
    how += (
        f"; in short utterances (<= {max_s:g} s) heard while the robot talks or acts, "
        "present-tense forms count ('stopping')"
    )
    if second_listen:
        how += f", and those are decoded again with {beams}-beam search"
    return f"{', '.join(repr(p) for p in phrases)}: {how}"
