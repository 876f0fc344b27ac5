"""What the runtime does when user code raises: one rule for every callback.

User code (bus handlers, blackboard watchers, timer callbacks, triggers, agents,
give-up hooks) runs either on a thread the runtime owns - every such thread is
named ``edgevox-*`` - or on the caller's own thread (a sync bus handler runs on
the publisher's).

* On a runtime thread, *anything* raised is counted and reported, and the thread
  keeps serving - ``SystemExit``, ``KeyboardInterrupt`` and every other
  ``BaseException`` included. ``threading`` ignores ``SystemExit`` silently, so
  letting it through once killed a queued subscriber that still looked "active"
  while its events piled up.
* On the caller's thread, an ``Exception`` is counted and reported the same way;
  ``SystemExit`` and ``KeyboardInterrupt`` are counted, reported and then
  re-raised (:func:`must_propagate`): they belong to the caller (Ctrl-C in a CLI
  must still stop it).

Rejected alternative: catching ``BaseException`` everywhere - it would swallow a
Ctrl-C that lands while a sync handler runs on the main thread.
"""

from __future__ import annotations

import threading

RUNTIME_THREAD_PREFIX = "edgevox-"


def on_runtime_thread() -> bool:
    """True on a thread the runtime started (named ``edgevox-*``)."""
    return threading.current_thread().name.startswith(RUNTIME_THREAD_PREFIX)


def must_propagate(exc: BaseException) -> bool:
    """After counting and reporting ``exc``: must it be re-raised? Only SystemExit and
    KeyboardInterrupt, and only on the caller's own thread (see the module docstring)."""
    return isinstance(exc, (SystemExit, KeyboardInterrupt)) and not on_runtime_thread()
