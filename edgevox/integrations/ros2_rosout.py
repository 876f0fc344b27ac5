"""edgevox's log records on ``/rosout``, where ROS tools look (``rqt_console``, ``ros2 topic echo
/rosout``, ``ros2 bag``).

A :class:`RosoutHandler` on the ``edgevox`` logger keeps each record it is given (bounded: the
oldest are dropped and counted in ``dropped``), and wakes the bridge; the bridge's executor thread
publishes them as ``rcl_interfaces/msg/Log`` from its guard condition, like every other outgoing
message, never from the thread that logged. The record's own file, function and line are kept.
Records reach the handler at the level the process logs at (the ``edgevox`` logger's level).

Rejected alternative: calling the node's rclpy logger from the handler - rcutils also prints
each line to the console, so every edgevox line would appear twice.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

ROSOUT_TOPIC = "/rosout"
_LEVELS = ((logging.CRITICAL, 50), (logging.ERROR, 40), (logging.WARNING, 30), (logging.INFO, 20))
"""Python level -> ``rcl_interfaces/msg/Log`` level (FATAL 50, ERROR 40, WARN 30, INFO 20, DEBUG 10)."""


def ros_level(levelno: int) -> int:
    return next((ros for py, ros in _LEVELS if levelno >= py), 10)


class RosoutHandler(logging.Handler):
    """Holds log records for the bridge's executor to publish (see the module docstring)."""

    def __init__(self, node_name: str, wake: Callable[[], None], max_records: int = 1000) -> None:
        super().__init__(logging.DEBUG)
        self.node_name = node_name
        self._wake = wake
        self._records: deque[logging.LogRecord] = deque()
        self._max = max_records
        self._mutex = threading.Lock()
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        with self._mutex:
            self._records.append(record)
            if len(self._records) > self._max:
                self._records.popleft()
                self.dropped += 1
        try:
            self._wake()
        except Exception:  # noqa: BLE001 - the bridge is stopping; the record waits or goes with it
            pass

    def drain(self) -> list[logging.LogRecord]:
        with self._mutex:
            out = list(self._records)
            self._records.clear()
        return out

    def message(self, record: logging.LogRecord, log_type: Any) -> Any:
        """A ``rcl_interfaces/msg/Log`` for ``record``."""
        msg = log_type()
        seconds = int(record.created)
        msg.stamp.sec = seconds
        msg.stamp.nanosec = int((record.created - seconds) * 1e9)
        msg.level = ros_level(record.levelno)
        msg.name = f"{self.node_name}.{record.name}"
        try:
            msg.msg = record.getMessage()
        except Exception as exc:  # noqa: BLE001 - a bad format string must not lose the line
            msg.msg = f"{record.msg!r} (cannot be formatted: {exc})"
        msg.file = record.pathname or ""
        msg.function = record.funcName or ""
        msg.line = max(0, int(record.lineno or 0))
        return msg
