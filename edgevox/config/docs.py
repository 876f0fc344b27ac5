"""Generate ``docs/config.md`` from the schema, so the reference can never drift from the code.

``python scripts/gen_config_docs.py`` writes the file; ``tests/config/test_docs.py`` fails
when the committed file differs from :func:`render_config_docs` or misses a key path.
Descriptions come from ``Field(description=...)`` or, for models that document fields with
attribute docstrings (the bridges section), from those docstrings.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import annotated_types
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from edgevox.config.schema import REF_PATTERN, AppConfig


@dataclass
class KeyDoc:
    path: str
    type: str
    default: str
    description: str


@dataclass
class SectionDoc:
    path: str
    title: str
    keys: list[KeyDoc]


INTRO = """\
# Config reference

One YAML file describes an edgevox application; `edgevox run CONFIG` runs it and
`edgevox check CONFIG` validates it, resolves its models, opens its devices and says what
would run. `CONFIG` is a path or the name of a builtin config: `default` (microphone and
speaker, the embedded models, a helpful assistant), `home_robot` (the simulated home robot),
`text` (typed input, replies as text). Start from one of them (they live in `configs/`).

Every key is optional; the defaults below apply. Rules:

- **Unknown keys are errors** naming the file, line and the nearest valid key:
  `my.yaml:3: unknown key 'stt.beam_sise'; did you mean 'stt.beam_size'?`
- **Types are strict**: `true` is not a number and `"3"` is not an integer. A wrong value
  names what is allowed: `my.yaml:3: stt.beam_size = 0: must be >= 1 (allowed: 1 to 32)`.
- **Environment variables**: `${NAME}` is replaced by the variable (unset is an error),
  `${NAME:-fallback}` uses a fallback, `$${` is a literal `${`. A value that is exactly one
  `${...}` holding a number becomes a number (`threads: ${THREADS:-2}`).
- **Code references** are `package.module:attribute` strings (tools, triggers, factories);
  they are imported when the application is built and checked by `edgevox check`.
- **Model references** are a builtin name (`edgevox models list`), a local path, or a hub
  reference `hf:owner/repo[/file]` (downloaded when online, verified by checksum).
- **Units** are in key names: `_s` seconds, `_ms` milliseconds, `_hz` Hertz.
- **Numbers are finite and bounded**: `.inf`, `.nan` or `${T:-1e999}` are errors, and every
  duration, period, rate and count has a lower and an upper limit (shown below as `>=` and
  `<=`; a period or timeout of `1.0e-300` is refused, not run); `llm.max_tokens` (and
  an agent's `max_tokens`) cannot exceed `llm.context_tokens`, and a `context_tokens`
  above 4096 is checked against what the model was trained for when it loads.
- **The file itself** must be UTF-8 text (the error names the line and column of the first
  byte that is not), at most 4 MB, nested at most 64 levels, and its YAML aliases may
  expand to at most 100,000 values (a "billion laughs" file is refused at once). A `--set`
  value is held to the same limits, counting the levels of its key.
- **Code references that fail to import** name the module and what went wrong (the
  exception and its line, the syntax error's line, or a `sys.exit` at import), in `run`
  and in `check`. `check` validates every engine section exactly as `run` does before it
  loads a model (a known builtin engine name, a `module:factory` engine that imports and
  accepts the section's `options`, a VAD confirmation the sample rate allows), with the
  same message; a custom engine must also provide its protocol's methods (checked where it
  is built: `run`, and `check --load`).
- Command-line options override the file: `--input FILE.wav` sets `audio.input`,
  `--output FILE.wav` sets `audio.output`, `--text` sets `audio.input.source: text`
  and `audio.output.sink: none`, `--log-level` sets `logging.level`.

In key paths below, `<name>` stands for a name you choose (an agent, a workflow) and `[]`
for an item of a list.
"""


def render_config_docs() -> str:
    """The full Markdown text of ``docs/config.md``."""
    out = [INTRO]
    for section in sections():
        out.append(f"\n## `{section.path}`" + (f": {section.title}" if section.title else "") + "\n")
        out.append("| key | type | default | description |")
        out.append("|---|---|---|---|")
        for key in section.keys:
            out.append(f"| `{key.path}` | {_cell(key.type)} | {_cell(key.default)} | {_cell(key.description)} |")
    return "\n".join(out) + "\n"


def field_paths() -> list[str]:
    """Every leaf key path of the schema, as written in the docs (``agents.<name>.tools``)."""
    return [key.path for section in sections() for key in section.keys]


def sections() -> list[SectionDoc]:
    top = SectionDoc("(top level)", "", [])
    out = [top]
    for name, field in AppConfig.model_fields.items():
        sub = _nested_model(field.annotation)
        if sub is None:
            top.keys.append(_key(AppConfig, name, field, name))
        else:
            model, suffix = sub
            out.extend(_walk(model, name + suffix, _description(AppConfig, name, field)))
    return out


def _walk(model: type[BaseModel], prefix: str, title: str) -> Iterator[SectionDoc]:
    section = SectionDoc(prefix, title, [])
    children: list[SectionDoc] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}"
        sub = _nested_model(field.annotation)
        if sub is None:
            section.keys.append(_key(model, name, field, path))
        else:
            child_model, suffix = sub
            children.extend(_walk(child_model, path + suffix, _description(model, name, field)))
    if section.keys:
        yield section
    yield from children


def _nested_model(annotation: Any) -> tuple[type[BaseModel], str] | None:
    """(model, path suffix) when a field holds a model, a mapping of models or a list of models."""
    for cand in _members(annotation):
        if isinstance(cand, type) and issubclass(cand, BaseModel):
            return cand, ""
        origin, args = typing.get_origin(cand), typing.get_args(cand)
        if origin is dict and args and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            return args[1], ".<name>"
        if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
            return args[0], "[]"
    return None


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _key(model: type[BaseModel], name: str, field: FieldInfo, path: str) -> KeyDoc:
    return KeyDoc(
        path, _type_text(field.annotation, field.metadata), _default_text(field), _description(model, name, field)
    )


def _type_text(annotation: Any, metadata: Sequence[Any] = ()) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *meta = typing.get_args(annotation)
        flat: list[Any] = []
        for m in meta:
            flat.extend(getattr(m, "metadata", []) or [m])
        return _type_text(inner, list(metadata) + flat)
    if origin in (typing.Union, types.UnionType):
        parts = [_type_text(arg) for arg in typing.get_args(annotation)]
        return " or ".join(dict.fromkeys(parts))
    if origin is typing.Literal:
        return " or ".join(f"`{v}`" for v in typing.get_args(annotation))
    if origin is list:
        return f"list of {_type_text(typing.get_args(annotation)[0])}"
    if origin is dict:
        key, value = typing.get_args(annotation)
        return f"mapping of {_type_text(key)} to {_type_text(value)}"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    names = {bool: "bool", int: "int", float: "number", str: "string"}
    text = names.get(annotation, getattr(annotation, "__name__", str(annotation)))
    limits = []
    for m in metadata:
        pattern = getattr(m, "pattern", None)
        if pattern == REF_PATTERN:
            text = "`module:attr` reference"
        elif pattern:
            text = "name"
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(m, attr, None)
            if (
                value is not None
                and isinstance(m, (annotated_types.BaseMetadata, FieldInfo))
                or (value is not None and type(m).__name__ in ("Ge", "Gt", "Le", "Lt", "Interval"))
            ):
                limits.append(f"{sign} {value}")
    return f"{text} ({', '.join(dict.fromkeys(limits))})" if limits else text


def _default_text(field: FieldInfo) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if value is None:
        return "`null`"
    if value == {} or value == []:
        return "`{}`" if value == {} else "`[]`"
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip()
    text = text.removesuffix("...").strip()
    return f"`{text}`"


def _description(model: type[BaseModel], name: str, field: FieldInfo) -> str:
    if field.description:
        return " ".join(field.description.split())
    return _attribute_docstrings(model).get(name, "")


def _attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """``name: type = value`` followed by a string literal, in the class and its bases."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, nxt in zip(body, body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                docs[stmt.target.id] = " ".join(nxt.value.value.split())
    return docs


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
