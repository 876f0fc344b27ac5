"""Work started on a guess, that must not act until the guess is confirmed.

The voice loop starts the agent on the *speculative* transcript taken in the
end-of-speech pause, before the endpoint has confirmed that the user is done. The
run is real (the LLM evaluates the prompt and samples the first tokens), but nothing
it does may be seen or acted on until the loop either **commits** it (the final
transcript is the same text) or **discards** it (the user went on speaking, or said
something else):

* everything the run publishes through :meth:`AgentContext.publish` and everything the
  loop would send to the speaker is *held* (:meth:`Speculation.hold`) and runs, in
  order, at :meth:`commit`; :meth:`discard` drops it;
* every place that acts - :meth:`Tool.invoke <edgevox.agents.tools.Tool.invoke>`,
  :meth:`Skill.start <edgevox.agents.skills.Skill.start>`, an agent writing its
  conversation memory or consuming a pending clarification - first calls
  :meth:`confirmed`, which blocks until the loop decides and returns False when the
  work was discarded (the caller then gives up as if cancelled).

:meth:`discard` also cancels the run's token, so a generation in progress stops between
tokens. A safety stop cancels the token too; :meth:`confirmed` then returns False.

One :class:`Speculation` belongs to one :class:`~edgevox.runtime.context.AgentContext`
and its children (``child()`` carries it). Thread-safe: the run's thread holds and
waits, the loop's STT thread commits or discards.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edgevox.runtime.context import CancelToken

DISCARD_REASON = "speculation discarded"


class Speculation:
    """A commit gate for work started on a guess (see the module docstring)."""

    def __init__(self, token: CancelToken, *, label: str = "") -> None:
        self.token = token
        self.label = label
        self._lock = threading.Lock()
        self._decided = threading.Event()
        self._committed = False
        self._held: list[Callable[[], object]] = []
        self._remove = token.on_cancel(lambda _reason: self._decided.set())

    @property
    def committed(self) -> bool:
        return self._committed

    @property
    def decided(self) -> bool:
        """Committed, discarded, or cancelled."""
        return self._decided.is_set()

    @property
    def discarded(self) -> bool:
        return self._decided.is_set() and not self._committed

    def hold(self, action: Callable[[], object]) -> None:
        """Run ``action`` now if committed; keep it for :meth:`commit` while undecided; drop it
        if discarded. Actions run outside the run's thread at commit: keep them short."""
        with self._lock:
            if not self._committed:
                if not self._decided.is_set():
                    self._held.append(action)
                return
        action()

    def commit(self) -> bool:
        """The guess was right: run the held actions in order and release :meth:`confirmed`
        waiters. False (and nothing runs) if the work was already discarded or cancelled."""
        with self._lock:
            if self._decided.is_set():
                return self._committed
            self._committed = True
            held, self._held = self._held, []
            # Under the lock, so an action held concurrently cannot overtake these.
            for action in held:
                action()
            self._decided.set()
        self._remove()
        return True

    def discard(self, reason: str = DISCARD_REASON) -> None:
        """The guess was wrong: drop what was held and cancel the run (a no-op once committed)."""
        with self._lock:
            if self._committed:
                return
            self._held.clear()
            self._decided.set()
        self.token.cancel(reason)
        self._remove()

    def confirmed(self, timeout_s: float | None = None) -> bool:
        """Block until the loop decides; True when committed. False when discarded, cancelled
        or, with ``timeout_s``, still undecided then (callers treat all three as "do not act")."""
        self._decided.wait(timeout_s)
        return self._committed
