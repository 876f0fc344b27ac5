"""Turn pydantic validation errors into one clear line a person can act on.

``configs/robot.yaml:12: unknown key 'stt.beam_sise'; did you mean 'beam_size'?``
``configs/robot.yaml:14: stt.beam_size = -1: must be >= 1``

The line number comes from the YAML node tree (:class:`NodeIndex`), the nearest valid
key from the schema model found at the error's location (:func:`model_at`) and difflib.
When several errors are found the first is shown in full and the rest are counted, so
the message stays one line; fixing and re-running walks through them.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from edgevox.config.fields import number_bounds, range_text
from edgevox.config.schema import REF_PATTERN


class NodeIndex:
    """Finds the source line of a key path in a composed YAML document."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root

    def line(self, path: tuple[Any, ...]) -> int | None:
        """1-based line of the deepest node along ``path`` that exists (a key's own line for mappings)."""
        node = self.root
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in path:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        line = key_node.start_mark.line + 1
                        node = value_node
                        break
                else:
                    return line
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types inside Optional/Union/Annotated/list/dict annotations (the item types)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out += _unwrap(arg)
        return out
    return [annotation]


def model_at(root: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The schema model that owns the keys at ``path`` (a data path: keys and list indexes)."""
    current: Any = root
    for part in path:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
            continue
        # A container annotation: list[X] is indexed by int, dict[K, V] by any key.
        candidates = _unwrap(current)
        nxt = None
        for cand in candidates:
            origin = typing.get_origin(cand)
            args = typing.get_args(cand)
            if origin is list and isinstance(part, int):
                nxt = args[0]
            elif origin is dict:
                nxt = args[1]
        if nxt is None:
            return None
        current = nxt
    for cand in _unwrap(current):
        if isinstance(cand, type) and issubclass(cand, BaseModel):
            return cand
        origin = typing.get_origin(cand)
        if origin in (list, dict):  # path ends at a container of models; keep going is the caller's job
            return None
    return None


def dotted(path: tuple[Any, ...]) -> str:
    """A key path as written ("stt.beam_size"); a key with a line break or another control
    character shows it escaped, so the message stays one line."""
    return ".".join(_printable(str(p)) for p in path) or "(top level)"


def _printable(key: str) -> str:
    return key if key.isprintable() else key.encode("unicode_escape").decode("ascii")


def _data_path(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """Drop pydantic's union/validator tags from ``loc``, keeping the parts that index ``data``
    (plus a final key that is not in the data: an unknown or a missing key)."""
    out: list[Any] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif isinstance(part, str) and _looks_like_tag(part):
            continue
        else:
            node = None
        out.append(part)
    return tuple(out)


def _looks_like_tag(part: str) -> bool:
    return (
        part in ("str", "int", "float", "bool", "none") or "[" in part or part.startswith(("constrained-", "function-"))
    )


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_EXPECTED = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _short(err: ErrorDetails) -> str:
    """What is allowed, in a few words."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}"
    if kind == "greater_than":
        return f"must be > {ctx['gt']}"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']}"
    if kind == "less_than":
        return f"must be < {ctx['lt']}"
    if kind == "literal_error":
        return f"must be one of {ctx['expected']}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_pattern_mismatch":
        if ctx.get("pattern") == REF_PATTERN:
            return "expected a 'package.module:attribute' reference (e.g. 'my_robot.tools:move')"
        return "expected a name made of letters, digits, '_' and '-'"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    if kind == "missing":
        return "missing"
    return str(err["msg"]).replace("Input should be", "must be")


_BOUND_ERRORS = frozenset({"greater_than_equal", "greater_than", "less_than_equal", "less_than"})


def _range_of(root: type[BaseModel], path: tuple[Any, ...]) -> str:
    """`` (allowed: 0.05 to 60)``: the whole range of the number at ``path``, so an error on
    one side still says where the other is (empty when the schema has none there)."""
    model = model_at(root, path[:-1]) if path else None
    field = model.model_fields.get(str(path[-1])) if model is not None else None
    bounds = number_bounds(field.annotation, field.metadata) if field is not None else {}
    return f" (allowed: {range_text(bounds)})" if bounds else ""


def _either(literal: ErrorDetails, errs: list[ErrorDetails], value: Any) -> str:
    """A keyword-or-number union (``threads: auto | int >= 1``) as one phrase:
    ``expected 'auto' or an integer, got a boolean`` / ``must be 'auto' or >= 1``."""
    words = str((literal.get("ctx") or {}).get("expected", ""))
    others = [e for e in errs if e is not literal]
    kinds = [_EXPECTED[e["type"]] for e in others if e["type"] in _EXPECTED]
    if kinds:
        return f"expected {words} or {' or '.join(dict.fromkeys(kinds))}, got {_type_name(value)}"
    limits = " or ".join(dict.fromkeys(_short(e).removeprefix("must be ") for e in others))
    return f"must be {words} or {limits}"


def format_error(exc: ValidationError, *, source: str, data: Any, nodes: NodeIndex, root: type[BaseModel]) -> str:
    """One line for ``exc``: ``source:line: key path: problem``."""
    errors = exc.errors(include_url=False)
    # Union members each report an error at the same place; merge them into one message.
    grouped: dict[tuple[Any, ...], list[ErrorDetails]] = {}
    for err in errors:
        grouped.setdefault(_data_path(tuple(err["loc"]), data), []).append(err)
    messages = [_one(path, errs, source=source, nodes=nodes, root=root) for path, errs in grouped.items()]
    first = messages[0]
    if len(messages) > 1:
        first += f" (and {len(messages) - 1} more {'error' if len(messages) == 2 else 'errors'})"
    return first


def _one(
    path: tuple[Any, ...], errs: list[ErrorDetails], *, source: str, nodes: NodeIndex, root: type[BaseModel]
) -> str:
    line = nodes.line(path)
    where = f"{source}:{line}" if line else source
    err = errs[0]
    if err["type"] == "extra_forbidden":
        parent = path[:-1]
        model = model_at(root, parent)
        valid = sorted(model.model_fields) if model else []
        key = str(path[-1])
        close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
        hint = f"; did you mean '{dotted(parent + (close[0],))}'?" if close else ""
        listing = (
            f" (valid keys{' under ' + repr(dotted(parent)) if parent else ''}: {', '.join(valid)})"
            if valid and not close
            else ""
        )
        return f"{where}: unknown key '{dotted(path)}'{hint}{listing}"
    if err["type"] == "missing":
        return f"{where}: {dotted(path)}: required key is missing"
    if err["type"] == "value_error" and not path:
        # Cross-reference checks run on the whole config; their message starts with the key path.
        message = _short(err)
        head = message.split(":", 1)[0]
        if " " not in head:
            parts = tuple(int(p) if p.isdigit() else p for p in head.split("."))
            line = nodes.line(parts)
            where = f"{source}:{line}" if line else source
        return f"{where}: {message}"
    value = err.get("input")
    shown = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()
    if len(shown) > 60:
        shown = shown[:57] + "..."
    in_range = _range_of(root, path) if any(e["type"] in _BOUND_ERRORS for e in errs) else ""
    literal = next((e for e in errs if e["type"] == "literal_error"), None)
    if literal is not None and len(errs) > 1:
        return f"{where}: {dotted(path)} = {shown}: {_either(literal, errs, value)}{in_range}"
    allowed = " or ".join(dict.fromkeys(_short(e) for e in errs)) + in_range
    if err["type"] in _EXPECTED:
        allowed += f", got {_type_name(value)}"
    if err["type"] == "value_error":
        return f"{where}: {dotted(path)}: {allowed}"
    return f"{where}: {dotted(path)} = {shown}: {allowed}"


# --- devices, for ``edgevox check`` ------------------------------------------------------------


def engine_devices(config: Any) -> list[tuple[str, str, str]]:
    """``(what, status, detail)`` per builtin LLM/TTS engine of ``config`` (an AppConfig): the
    device and threads its ``auto`` values resolve to here, e.g. ``("LLM smollm2-135m", "ok",
    "cpu, 1 decode / 1 batch threads")``, or ``"fail"`` and the one-line fix when a GPU is asked
    for that the installed libraries cannot use. Imports llama_cpp/onnxruntime, loads no model.
    The loaded engines say the same through their ``describe()`` (and log it at startup)."""
    from edgevox.engines import device
    from edgevox.engines._util import require
    from edgevox.errors import EdgeVoxError

    out: list[tuple[str, str, str]] = []

    def llm() -> str:
        from edgevox.engines.llm_llama_cpp import select_device

        lc = require("llama_cpp", package="llama-cpp-python", extra="llm", purpose="the LLM engine")
        cfg = config.llm
        backend, layers, decode, batch = select_device(lc, cfg.gpu_layers, cfg.threads, cfg.batch_threads)
        where = "cpu" if backend is None else f"{backend} ({'all' if layers < 0 else layers} layers)"
        return f"{where}, {decode} decode / {batch} batch threads"

    def tts() -> str:
        ort = require("onnxruntime", package="onnxruntime", extra="tts", purpose="speech synthesis")
        cfg = config.tts
        where, _ = device.onnx_providers(cfg.device, device.onnx_providers_available(ort))
        return where if where != "cpu" else f"cpu, {device.onnx_threads(cfg.threads)} threads"

    def stt() -> str:
        from edgevox.engines.stt_faster_whisper import resolve_device

        cfg = config.stt
        where, compute_type = resolve_device(cfg.device, cfg.compute_type)
        threads = f", {cfg.cpu_threads} threads" if where == "cpu" else ""
        return f"{where} {compute_type}{threads}"

    roles = [("LLM", config.llm, config.llm.model, "llama-cpp", llm)]
    if config.audio.input.source != "text":
        roles.insert(0, ("STT", config.stt, config.stt.model, "faster-whisper", stt))
    if config.audio.output.sink != "none":
        roles.append(("TTS", config.tts, config.tts.voice, "piper", tts))
    for role, section, model, builtin, describe in roles:
        if section.engine != builtin:
            continue  # a custom engine chooses its own device
        try:
            out.append((f"{role} {model}", "ok", describe()))
        except EdgeVoxError as exc:
            out.append((f"{role} {model}", "fail", str(exc)))
    return out
