"""Load a config: find the file, parse YAML, interpolate ``${ENV}``, apply overrides, validate.

Every failure is a :class:`~edgevox.errors.ConfigError` whose message is one line naming
the file (and line), the key path and the fix; the CLI prints it without a traceback.

``${NAME}`` is replaced by the environment variable ``NAME`` (unset is an error naming
it); ``${NAME:-default}`` falls back to ``default``; ``$${`` is a literal ``${``. A value
that is exactly one ``${...}`` and looks like a number becomes that number, so
``threads: ${THREADS:-2}`` passes the strict integer check.

``--set key.path=value`` options (``sets=``) change one key each after the file is read, with
the same validation and messages as the file (they name the option instead of a line): the
value is YAML (``0.3``, ``[time, weather]``, ``{device: USB}``, ``none`` is the string, an empty
value is null); later ones win over earlier ones, and ``overrides=`` (the CLI's own options)
are applied last.

Builtin configs (``default``, ``home_robot``, ``text``...) ship inside the package as
``edgevox/configs/*.yaml`` (the top-level ``configs/`` directory of the repository is the
canonical copy); :func:`resolve_config_path` accepts a path or one of those names.
"""

from __future__ import annotations

import copy
import difflib
import importlib.resources
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from edgevox.config.diagnostics import NodeIndex, dotted, format_error
from edgevox.config.schema import AppConfig
from edgevox.errors import ConfigError

_ENV = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_WHOLE_ENV = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$")
MAX_CONFIG_BYTES = 4_000_000
"""A config file larger than this is refused (it is not a config)."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and lists a config may have."""
MAX_NODES = 100_000
"""Most values a config may hold once its aliases are expanded."""

_SET_KEY = re.compile(r"^[A-Za-z_][\w-]*(\.[\w-]+)*$")
_NUMBER = re.compile(r"^[-+]?(\d+|\d*\.\d+([eE][-+]?\d+)?|\d+[eE][-+]?\d+)$")


def builtin_config_dir() -> Path:
    """Folder of the configs that ship with edgevox."""
    return Path(str(importlib.resources.files("edgevox") / "configs"))


def builtin_configs() -> dict[str, Path]:
    """Builtin config names (file stems) and their paths."""
    folder = builtin_config_dir()
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def resolve_config_path(name_or_path: str | os.PathLike[str]) -> Path:
    """An existing file path, or the packaged config of that name (``default``, ``text``...)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if path.exists():
        raise ConfigError(f"config {str(name_or_path)!r} is a directory, not a YAML file")
    builtins = builtin_configs()
    stem = path.name.removesuffix(".yaml").removesuffix(".yml")
    if len(path.parts) == 1 and stem in builtins:
        return builtins[stem]
    close = difflib.get_close_matches(stem, list(builtins), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    names = ", ".join(builtins) or "none installed"
    raise ConfigError(f"config {str(name_or_path)!r}: no such file and not a builtin config{hint} (builtin: {names})")


def load_config(
    name_or_path: str | os.PathLike[str],
    *,
    overrides: Mapping[str, Any] | None = None,
    sets: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> AppConfig:
    """Load and validate a config file (or builtin name).

    ``overrides`` maps dotted key paths to values applied before validation (what the
    CLI's ``--input``/``--output``/``--text`` do), e.g. ``{"audio.input.file": "q.wav"}``.
    ``sets`` are ``--set`` options, ``"key.path=value"`` (see the module docstring).
    Relative file paths inside the config stay relative to the current directory; the
    file's folder is recorded (:func:`config_folder`) for ``module:function`` references.
    """
    path = resolve_config_path(name_or_path)
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path}: is {size / 1e6:.1f} MB; a config is a small YAML file (at most "
                f"{MAX_CONFIG_BYTES // 1_000_000} MB): check you passed the right file"
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from exc
    config = parse_config(decode_config(raw, str(path)), source=str(path), overrides=overrides, sets=sets, env=env)
    config._folder = str(path.resolve().parent)
    return config


def config_folder(config: AppConfig) -> str | None:
    """The folder of the file ``config`` was loaded from (None for text given to :func:`parse_config`)."""
    folder: str | None = getattr(config, "_folder", None)
    return folder


def parse_set(text: str) -> tuple[str, Any]:
    """A ``--set`` option, ``key.path=value``, as ``(key, value)``; the value is read as YAML.

    Raises :class:`ConfigError` naming the option when it has no ``=``, the key is not a
    dotted path, or the value is not YAML."""
    key, eq, raw = text.partition("=")
    key = key.strip()
    if not eq:
        raise ConfigError(f"--set {text}: expected KEY=VALUE, e.g. --set llm.temperature=0.3")
    if not _SET_KEY.match(key):
        raise ConfigError(
            f"--set {text}: {key!r} is not a key path; write dotted keys as in the file, e.g. agents.assistant.tools"
        )
    if not raw.strip():
        return key, None
    option = _option_text(text)
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{option}: the value is larger than a whole config may be ({MAX_CONFIG_BYTES // 1_000_000} MB)"
        )
    # The file's limits, with the key's own levels counted: the value lands that deep in the config.
    levels = len(key.split("."))
    if levels >= MAX_DEPTH:
        raise ConfigError(f"{option}: the key has {levels} levels; a config is nested at most {MAX_DEPTH} levels deep")
    _check_depth(raw, option, max_depth=MAX_DEPTH - levels, what="value")
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(raw)
        node = loader.get_single_node()
        if node is not None:
            _check_expanded_size(node, option)
            _reject_duplicate_keys(node, tuple(key.split(".")), option, set())
        value = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ConfigError(
            f"{option}: the value is not valid YAML ({problem}); quote it, e.g. '{key}=\"...\"'"
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    return key, value


def _option_text(text: str) -> str:
    """``--set KEY=VALUE`` as errors name it, cut short: a value may be thousands of characters."""
    return f"--set {text if len(text) <= 80 else text[:77] + '...'}"


def decode_config(raw: bytes, source: str) -> str:
    """The text of a config file: UTF-8 (a BOM is allowed), or one line saying where it is not."""
    if b"\x00" in raw[:4096]:
        raise ConfigError(f"{source}: is a binary file, not a YAML config: check you passed the right file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise ConfigError(
            f"{source}:{line}:{column}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); "
            "save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)"
        ) from None


def parse_config(
    text: str,
    *,
    source: str = "<config>",
    overrides: Mapping[str, Any] | None = None,
    sets: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> AppConfig:
    """Validate YAML ``text``; ``source`` names it in error messages. ``overrides`` and
    ``sets`` as for :func:`load_config`."""
    set_keys = [(_option_text(text), *parse_set(text)) for text in sets]
    nodes, data = _parse_yaml(text, source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the top level must be a mapping of keys (like 'agents:'), got a {type(data).__name__}"
        )
    data = _interpolate(data, (), env if env is not None else os.environ, source, nodes)
    if overrides or set_keys:
        data = copy.deepcopy(data)
        for option, key, value in set_keys:
            _set_path(data, key, value, option)
        for key, value in (overrides or {}).items():
            _set_path(data, key, value, source)
    try:
        return AppConfig.model_validate(data)
    except ValidationError as exc:
        blamed = _set_option_at(exc, set_keys)
        if blamed is not None:  # the key a --set changed: name the option, not a line of the file
            raise ConfigError(
                format_error(exc, source=blamed, data=data, nodes=NodeIndex(None), root=AppConfig)
            ) from None
        raise ConfigError(format_error(exc, source=source, data=data, nodes=nodes, root=AppConfig)) from None


def _set_option_at(exc: ValidationError, set_keys: list[tuple[str, str, Any]]) -> str | None:
    """The last ``--set`` option whose key is at (or above, or below) the first error's key path."""
    first = exc.errors(include_url=False)[0]
    loc = tuple(str(p) for p in first["loc"])
    if not loc and first["type"] == "value_error":  # a whole-config check: its message starts with the key
        head = str((first.get("ctx") or {}).get("error", "")).split(":", 1)[0]
        loc = tuple(head.split(".")) if " " not in head else ()
    if not loc:
        return None
    for option, key, _ in reversed(set_keys):
        parts = tuple(key.split("."))
        n = min(len(parts), len(loc))
        if parts[:n] == loc[:n]:
            return option
    return None


def _parse_yaml(text: str, source: str) -> tuple[NodeIndex, Any]:
    _check_depth(text, source)  # before composing: PyYAML's composer recurses once per level
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, source) from None
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_expanded_size(node, source)
            _reject_duplicate_keys(node, (), source, set())
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ConfigError(f"{where}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, source) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()
    return NodeIndex(node), data


def _reader_error(exc: yaml.reader.ReaderError, text: str, source: str) -> ConfigError:
    """A character YAML does not allow (a control character), with its line and column."""
    before = text[: exc.position]
    line, column = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
    return ConfigError(
        f"{source}:{line}:{column}: character U+{exc.character:04X} is not allowed in YAML; delete it "
        "(control characters are often pasted by accident)"
    )


def _check_depth(text: str, source: str, *, max_depth: int = MAX_DEPTH, what: str = "file") -> None:
    """Reject nesting deeper than ``max_depth``, reading YAML events (no recursion)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > max_depth:
                    mark = event.start_mark
                    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
                    raise ConfigError(
                        f"{where}: nested more than {max_depth} levels deep; "
                        f"a config is a few levels of keys: check the {what}"
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # the composer reports the syntax error with its line


def _check_expanded_size(root: yaml.Node, source: str) -> None:
    """Reject aliases that expand to more than :data:`MAX_NODES` values (a "billion laughs"
    file) or that contain themselves; each node's expanded size is computed once."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in busy:
            raise ConfigError(
                f"{source}:{node.start_mark.line + 1}: an alias (*name) refers to a value that contains it; "
                "a config cannot be recursive"
            )
        busy.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total += sum(size(item) for item in node.value)
        busy.discard(key)
        sizes[key] = total
        if total > MAX_NODES:
            raise ConfigError(
                f"{source}:{node.start_mark.line + 1}: aliases (*name) expand this value to more than "
                f"{MAX_NODES:,} entries; write the values out or use fewer nested aliases"
            )
        return total

    size(root)


def _reject_duplicate_keys(node: yaml.Node, path: tuple[Any, ...], source: str, seen_nodes: set[int]) -> None:
    # YAML silently keeps the last of two equal keys; in a config that hides a mistake.
    if id(node) in seen_nodes:  # an alias: already checked where it was defined
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None:
                if key in seen:
                    raise ConfigError(
                        f"{source}:{key_node.start_mark.line + 1}: key '{dotted(path + (key,))}' appears twice"
                    )
                seen.add(key)
            _reject_duplicate_keys(value_node, path + (key,), source, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _reject_duplicate_keys(item, path + (i,), source, seen_nodes)


def _interpolate(value: Any, path: tuple[Any, ...], env: Mapping[str, str], source: str, nodes: NodeIndex) -> Any:
    if isinstance(value, dict):
        return {k: _interpolate(v, path + (k,), env, source, nodes) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, path + (i,), env, source, nodes) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        line = nodes.line(path)
        where = f"{source}:{line}" if line else source
        raise ConfigError(
            f"{where}: {dotted(path)}: environment variable {name} is not set; "
            f"export {name}=... or write ${{{name}:-default}}"
        )

    result = _ENV.sub(replace, value)
    if _WHOLE_ENV.match(value) and _NUMBER.match(result.strip()):
        number = result.strip()
        return float(number) if any(c in number for c in ".eE") else int(number)
    return result


def _set_path(data: dict[str, Any], dotted_key: str, value: Any, source: str) -> None:
    """Set ``a.b.c`` in ``data``, making the mappings on the way; a digit indexes an existing list."""
    parts = dotted_key.split(".")
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(
                    f"{source}: cannot set {dotted_key}: '{dotted(tuple(parts[:i]))}' is a list of {len(node)}; "
                    f"use an index from 0 to {len(node) - 1}, or set the whole list"
                )
            if last:
                node[int(part)] = value
                return
            node = node[int(part)]
            continue
        if not isinstance(node, dict):
            raise ConfigError(f"{source}: cannot set {dotted_key}: '{dotted(tuple(parts[:i]))}' is not a mapping")
        if last:
            node[part] = value
            return
        if node.get(part) is None:
            node[part] = {}
        node = node[part]
