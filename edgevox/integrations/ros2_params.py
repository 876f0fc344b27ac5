"""Config keys as ROS 2 parameters: declared from the config, read at start, some changeable live.

A node started by ``edgevox ros2 CONFIG`` declares the keys of :data:`PARAMETERS` as ROS
parameters named by their config path (``llm.temperature``), with the config's values. A
``--ros-args -p llm.temperature:=0.5`` or ``--params-file`` override wins over the file; the
result is validated by the same pydantic rules as the YAML (a bad value stops the node at
start with the config error).

``ros2 param set`` (any ``rcl_interfaces/srv/SetParameters`` client) goes through
:meth:`ParameterBinding.on_set`: the new values are validated together against the config
(a refusal's ``reason`` is the config error, e.g. ``llm.temperature: Input should be less
than or equal to 2``); a *live* key is applied to the running application at once; any other
key is refused with ``read-only: restart to change`` while the application exists (a managed
node accepts every key while unconfigured: it is used at the next ``configure``).

Why these keys: they are what one tunes on a running robot (sampling, reply length, the log,
diagnostics) or wants to see from the ROS graph (which models and stop phrases a node runs).
Keys that need models reloaded or devices reopened are read-only; the safety stop phrases are
read-only on purpose: any node on the graph may call ``set_parameters``, and the stop must not be
switched off from there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from edgevox.errors import ConfigError

if TYPE_CHECKING:
    from edgevox.app import App
    from edgevox.config.schema import AppConfig

log = logging.getLogger(__name__)

READ_ONLY = "read-only: restart to change"


@dataclass(frozen=True)
class RosParameter:
    """One config key offered as a ROS parameter (named by its dotted path)."""

    key: str
    live: bool
    """Applied to the running application when set; otherwise refused while it runs."""
    meaning: str
    none_as: Any = None
    """The ROS value that stands for the config's null (ROS parameters have no null)."""


PARAMETERS: tuple[RosParameter, ...] = (
    RosParameter("name", False, "application name (logs, diagnostics' hardware_id)"),
    RosParameter("llm.model", False, "language model file or builtin name"),
    RosParameter("llm.temperature", True, "sampling temperature of replies (agents without their own)"),
    RosParameter("llm.max_tokens", True, "longest reply in tokens (agents without their own)"),
    RosParameter("stt.model", False, "speech-to-text model"),
    RosParameter("stt.language", False, "spoken language"),
    RosParameter("tts.voice", False, "text-to-speech voice"),
    RosParameter("tts.length_scale", False, "speaking rate: >1 slower, <1 faster"),
    RosParameter("endpointing.end_silence_ms", False, "silence that ends an utterance, ms"),
    RosParameter("endpointing.hold_silence_ms", False, "silence that ends an unfinished phrase, ms"),
    RosParameter("voice.barge_in", False, "user speech interrupts the reply"),
    RosParameter("safety.stop_phrases", False, "phrases that run the safety stop"),
    RosParameter("safety.confirmation", False, "said after a safety stop"),
    RosParameter("logging.level", True, "log level of edgevox's loggers: DEBUG, INFO, WARNING, ERROR"),
    RosParameter(
        "bridges.ros2.diagnostics_period_s", True, "seconds between /diagnostics messages; 0 = none", none_as=0.0
    ),
)
BY_KEY = {p.key: p for p in PARAMETERS}


def config_value(config: AppConfig, key: str) -> Any:
    """The value of dotted ``key`` in ``config``, as a ROS parameter holds it."""
    value: Any = config
    for part in key.split("."):
        value = getattr(value, part)
    spec = BY_KEY.get(key)
    if value is None and spec is not None:
        return spec.none_as
    return list(value) if isinstance(value, (list, tuple)) else value


def to_config(key: str, value: Any) -> Any:
    """A ROS parameter value as the config key takes it (``none_as`` -> null, arrays -> lists)."""
    spec = BY_KEY.get(key)
    if spec is not None and spec.none_as is not None and value == spec.none_as:
        return None
    if isinstance(value, (list, tuple)) or type(value).__name__ == "array":
        return list(value)
    return value


class ConfigSource:
    """Where the node's config comes from: a file (or builtin name) and the CLI's overrides;
    :meth:`load` validates it again with parameter values on top."""

    def __init__(self, name_or_path: str, overrides: Mapping[str, Any] | None = None) -> None:
        self.name_or_path = name_or_path
        self.overrides = dict(overrides or {})

    def load(self, params: Mapping[str, Any] | None = None) -> AppConfig:
        from edgevox.config.loader import load_config

        return load_config(self.name_or_path, overrides={**self.overrides, **(params or {})})


def declare(node: Any, config: AppConfig, *, managed: bool = False) -> dict[str, Any]:
    """Declare :data:`PARAMETERS` on ``node`` with ``config``'s values; returns the keys whose
    value differs from the config (a ``--ros-args -p`` or parameter file override), as config values.

    Each descriptor says what ROS tools show (``ros2 param describe``): the meaning; the range
    of a numeric key (from the config schema's bounds, so ROS refuses a value out of range before
    edgevox sees it); and whether it is read-only. On a plain node a key that is not live is
    ``read_only`` (ROS refuses every set). A managed node accepts such keys while unconfigured, so
    there the flag stays off and ``additional_constraints`` says when they can be set.
    """
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
    from rclpy.exceptions import InvalidParameterValueException

    changed: dict[str, Any] = {}
    for spec in PARAMETERS:
        value = config_value(config, spec.key)
        mode = "changeable live" if spec.live else READ_ONLY
        descriptor = ParameterDescriptor(
            description=f"{spec.meaning} ({mode})",
            dynamic_typing=True,
            read_only=not spec.live and not managed,
            additional_constraints=(
                ""
                if spec.live
                else "set only while the node is unconfigured (then configure)"
                if managed
                else READ_ONLY
            ),
        )
        bounds = schema_bounds(spec.key)
        if bounds is not None and spec.none_as is None:
            low, high, whole = bounds
            if whole:
                descriptor.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
            else:
                descriptor.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
        try:
            param = node.declare_parameter(spec.key, value, descriptor)
        except InvalidParameterValueException:
            # A --ros-args override outside the range: declared without it, so the config check
            # below stops the node with the config's own error naming the key and the bound.
            descriptor.integer_range, descriptor.floating_point_range = [], []
            param = node.declare_parameter(spec.key, value, descriptor)
        if param.value != value:
            changed[spec.key] = to_config(spec.key, param.value)
    return changed


def schema_bounds(key: str) -> tuple[float, float, bool] | None:
    """``(low, high, whole)`` of a numeric config key with both bounds in the schema, else None."""
    import annotated_types
    from pydantic import BaseModel

    from edgevox.config.schema import AppConfig

    model: Any = AppConfig
    parts = key.split(".")
    for part in parts[:-1]:
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return None
        model = field.annotation
    field = model.model_fields.get(parts[-1]) if isinstance(model, type) and issubclass(model, BaseModel) else None
    if field is None or field.annotation not in (int, float):
        return None
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    if low is None or high is None:
        return None
    return float(low), float(high), field.annotation is int  # type: ignore[arg-type]


def apply_live(app: App | None, config: AppConfig, keys: Iterable[str], *, bridge: Any = None) -> None:
    """Apply the live keys among ``keys`` (already validated into ``config``) to the running ``app``."""
    keys = set(keys)
    if keys & {"llm.temperature", "llm.max_tokens"} and app is not None:
        from edgevox.agents.llm_agent import LLMAgent

        for name, agent in app.agents.items():
            agent_cfg = config.agents.get(name)
            if isinstance(agent, LLMAgent) and agent_cfg is not None and agent_cfg.factory is None:
                own = config.llm_for(name)  # the agent's own keys still win over llm:
                agent.temperature = own.temperature
                agent.reply_max_tokens = own.max_tokens
    if "logging.level" in keys:
        logging.getLogger("edgevox").setLevel(config.logging.level)
    if "bridges.ros2.diagnostics_period_s" in keys and bridge is not None:
        bridge.set_diagnostics_period(config.bridges.ros2.diagnostics_period_s)


class ParameterBinding:
    """The ``set_parameters`` callback of a node hosting an application.

    ``source`` gives the config; ``params`` holds the parameter values set so far (config
    values); ``running()`` says whether read-only keys are locked; ``apply(config, keys)``
    applies live keys. Runs on an executor thread; never raises into rclpy.
    """

    def __init__(
        self,
        source: ConfigSource,
        params: Mapping[str, Any],
        *,
        running: Callable[[], bool],
        apply: Callable[[AppConfig, set[str]], None],
        config: AppConfig,
    ) -> None:
        self.source = source
        self.params = dict(params)
        self.config = config
        self._running = running
        self._apply = apply

    def on_set(self, parameters: list[Any]) -> Any:
        from rcl_interfaces.msg import SetParametersResult

        ok, reason = self.check_and_apply({p.name: p.value for p in parameters})
        return SetParametersResult(successful=ok, reason=reason)

    def check_and_apply(self, values: Mapping[str, Any]) -> tuple[bool, str]:
        """Validate ``values`` (ROS names -> ROS values) and apply them; ``(ok, reason)``."""
        changes: dict[str, Any] = {}
        for name, value in values.items():
            spec = BY_KEY.get(name)
            if spec is None:
                continue  # not one of ours (use_sim_time...): rclpy's business
            new = to_config(name, value)
            if new == to_config(name, config_value(self.config, name)):
                continue
            if not spec.live and self._running():
                return False, f"{name}: {READ_ONLY} (deactivate and clean up a managed node, then configure again)"
            changes[name] = new
        if not changes:
            return True, ""
        try:
            candidate = self.source.load({**self.params, **changes})
        except ConfigError as exc:
            return False, str(exc)
        try:
            if self._running():
                self._apply(candidate, set(changes))
        except Exception as exc:  # noqa: BLE001 - the reason goes back to the caller, the node stays up
            log.warning("parameters %s not applied: %r", sorted(changes), exc)
            return False, f"{', '.join(sorted(changes))}: not applied: {exc}"
        self.params.update(changes)
        self.config = candidate
        log.info("parameters set: %s", ", ".join(f"{k}={v!r}" for k, v in changes.items()))
        return True, ""
