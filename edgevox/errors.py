"""The one error hierarchy of edgevox.

Every error the library raises on purpose derives from :class:`EdgeVoxError`.
Messages name the bad value and the fix, e.g.
``tool 'move' argument 'distance_m': expected number, got 'far'``.

::

    EdgeVoxError
     +-- ConfigError                 a config file or value is wrong
 +-- ArgumentError               an argument is out of range (nan, inf, negative); also a ValueError
     +-- MissingDependencyError      an optional extra is not installed (names the pip command)
     +-- ModelError                  a model cannot be resolved, fetched or loaded
     |    +-- ModelNotFoundError     offline and the file is missing (names the fetch command)
     +-- EngineError                 an engine (VAD/STT/LLM/TTS/audio) failed
     |    +-- AudioDeviceError       no such device, device lost, cannot open
     +-- LifecycleError              an illegal state transition (start twice, use after stop)
     +-- BusClosedError              publish/subscribe on a closed EventBus
     +-- AgentError                  an agent failed to run
     |    +-- ToolError
     |    |    +-- ToolArgumentError   the model called a tool with bad arguments
     |    |    +-- ToolExecutionError  the tool itself raised
     |    +-- HandoffError           unknown target, forbidden transition
     |    +-- DelegationError        delegation depth or concurrency exceeded
     +-- Cancelled                   work was cancelled through a CancelToken
     +-- BridgeError                 a ROS/Zenoh bridge cannot start or lost its peer

``Cancelled`` is an ``EdgeVoxError`` so that ``except EdgeVoxError`` catches
everything edgevox raises, but code that wants to let cancellation propagate
should catch it first.
"""

from __future__ import annotations


class EdgeVoxError(Exception):
    """Base class of every error edgevox raises on purpose."""


class ConfigError(EdgeVoxError):
    """A config file or value is invalid. The message is one line: file, key path, problem, fix."""


class ArgumentError(EdgeVoxError, ValueError):
    """An argument passed to the API is invalid (``timeout = inf``): names the owner, the
    argument, the value and the accepted range. Also a ``ValueError``, as Python expects."""


class MissingDependencyError(EdgeVoxError, ImportError):
    """An optional dependency is missing; the message names the ``pip install`` to run."""

    def __init__(self, package: str, extra: str | None = None, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        what = f" (needed for {purpose})" if purpose else ""
        fix = f"pip install 'edgevox[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{package} is not installed{what}: run `{fix}`")


class ModelError(EdgeVoxError):
    """A model reference cannot be resolved, fetched, verified or loaded."""


class ModelNotFoundError(ModelError):
    """A model file is missing and cannot be fetched (offline); names the command that fetches it."""


class EngineError(EdgeVoxError):
    """An engine (VAD, STT, LLM, TTS, audio) failed at run time."""


class AudioDeviceError(EngineError):
    """An audio device cannot be found, opened, or stopped delivering."""


class LifecycleError(EdgeVoxError):
    """An object was used in a state that does not allow it (e.g. ``start()`` twice)."""


class BusClosedError(LifecycleError):
    """The EventBus was closed; nothing more can be published or subscribed."""


class AgentError(EdgeVoxError):
    """An agent failed to run a task."""


class ToolError(AgentError):
    """A tool call failed."""

    def __init__(self, message: str, *, tool: str = "") -> None:
        self.tool = tool
        super().__init__(message)


class ToolArgumentError(ToolError):
    """The arguments of a tool call do not match the tool's schema."""


class ToolExecutionError(ToolError):
    """The tool was called with valid arguments but raised."""


class HandoffError(AgentError):
    """A handoff was rejected (unknown target, forbidden transition, one already in progress)."""


class DelegationError(AgentError):
    """Delegation depth or concurrency limit exceeded."""


class Cancelled(EdgeVoxError):
    """Work was cancelled through a :class:`~edgevox.runtime.context.CancelToken`."""

    def __init__(self, reason: str = "cancelled") -> None:
        self.reason = reason
        super().__init__(reason)


class BridgeError(EdgeVoxError):
    """A bridge (ROS 2, ROS 1, Zenoh) cannot start or lost its peer."""
