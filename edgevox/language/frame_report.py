"""How a tool was read, for its author: one line per tool and a warning where its docstring
leaves requests ambiguous (``edgevox check`` prints both).

A warning names the tool, the parameter, what cannot be read and the fix: a number with no
unit ("say 'in metres' or name it distance_m"), a number with neither a sign convention nor
a minimum (a negative value is then refused), a tool with no verb in its name or first
docstring sentence (requests can then name it only by its objects).
"""

from __future__ import annotations

from edgevox.language.frames import NUMERIC, ToolFrame


def describe_frame(frame: ToolFrame) -> str:
    """How a tool was read, in one line (``edgevox check``): "reads state" or its verbs, its
    objects, and each parameter's type, unit, sign convention, bounds and default."""
    own = [v.text for v in frame.verbs if v.own]
    other = [v.text for v in frame.verbs if not v.own]
    parts = ["reads state" if frame.reads else ("drastic action" if frame.drastic else "action")]
    parts.append("verb " + (", ".join(own) or "-") + (f" (also {', '.join(other)})" if other else ""))
    if frame.objects:
        parts.append("objects " + ", ".join(sorted(frame.objects)))
    for p in frame.params:
        bits = [p.kind + ("" if p.required else " optional")]
        if p.unit is not None:
            bits.append(f"in {p.unit.spoken}")
        if p.signs is not None:
            bits.append(f"+ is {p.signs.choices().replace(' or ', ', - is ')}")
        if p.minimum is not None or p.maximum is not None:
            bits.append(
                f"{'' if p.minimum is None else f'{p.minimum:g}'}..{'' if p.maximum is None else f'{p.maximum:g}'}"
            )
        if p.values:
            bits.append("one of " + "/".join(str(v) for v in p.values))
        if p.has_default:
            bits.append(f"default {p.default!r}")
        parts.append(f"{p.name}: {' '.join(bits)}")
    return "; ".join(parts)


def frame_warnings(frame: ToolFrame) -> list[str]:
    """Where the docstring leaves requests ambiguous, one line each (for ``edgevox check``)."""
    out: list[str] = []
    if not frame.verbs and not frame.reads:
        out.append(
            f"{frame.name}: no action verb in its name or first docstring sentence; "
            "requests can name it only by its objects (start the docstring with a verb: 'Move the arm ...')"
        )
    for p in frame.params:
        if p.kind in NUMERIC and p.unit is None and p.kind == "number":
            out.append(
                f"{frame.name}({p.name}): no unit in its name or text; a value said in any unit is taken as is "
                f"(say 'in metres' or name it {p.name}_m)"
            )
        if p.kind in NUMERIC and p.signs is None and (p.minimum is None or p.minimum < 0):
            if p.minimum is None:
                out.append(
                    f"{frame.name}({p.name}): no sign convention and no minimum; a negative value is refused "
                    "(write what it means: 'Positive climbs, negative descends', or a range '0 to 10')"
                )
    return out
