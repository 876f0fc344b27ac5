"""Clean reply text for speech: what a TTS voice should read, not what a screen shows.

:func:`clean_for_speech` removes markdown (code fences, emphasis, headings,
bullets, quotes, tables, links keep their text), replaces URLs and e-mail
addresses by a short spoken stand-in, spells out symbols (``&`` ``%`` ``°``
``+`` ``=`` ...), numbers, money, dates, times and units after numbers as a listener
expects them (:mod:`edgevox.voice.spoken_numbers`: "1990s" -> "nineteen nineties",
"$3.50" -> "three dollars and fifty cents", ``5 km/h`` -> "five kilometers per hour"),
and drops emoji and other symbols a voice cannot say.

Never spoken: what a model emits for machines, not people - JSON objects and
arrays (a ``{"name": ..., "arguments": ...}`` tool call above all), ``"key": value``
members of a JSON object split across chunks, ``<tool_call>...</tool_call>`` and
similar blocks, special tokens (``<|im_end|>``), HTML-ish tags, stray braces and
brackets, and fenced code blocks (the chunker keeps a block in one chunk). A ``{``
that does not close in the chunk drops the rest of the chunk; a ``[...]`` that
holds no JSON keeps its words ("[laughs]" -> "laughs").

Why here and not in the TTS adapter: Piper reads digits but not markdown, and
the history must keep the raw text, so cleaning happens on each chunk between
the chunker and TTS. Pure functions, thread-safe.
"""

from __future__ import annotations

import re

from edgevox.voice.spoken_numbers import say_numbers

_SYMBOLS = {
    "&": " and ",
    "+": " plus ",
    "=": " equals ",
    "@": " at ",
    "%": " percent ",
    "°": " degrees ",
    "×": " times ",
    "→": " to ",
    "->": " to ",
    "<": " less than ",
    ">": " greater than ",
    "~": " about ",
    "#": " number ",
}

_FENCED_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_CALL_BLOCK = re.compile(
    r"<(tool_call|tool_calls|function_call|functions?|tools?|call|json|code)\b[^>]*>.*?(?:</\1\s*>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_SPECIAL_TOKEN = re.compile(r"<\|[^|>]*\|>")
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s+[\w:-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*\s*/?>")
_JSON_MEMBER = re.compile(
    r'(?:^|(?<=[{,]))\s*"[^"\n]*"\s*:\s*(?:"[^"\n]*"|-?\d[\d.eE+-]*|true|false|null)?\s*,?', re.MULTILINE
)
_INLINE_CODE = re.compile(r"`([^`]*)`")
_IMAGE = re.compile(r"!\[([^\[\]\n]{0,200})\]\([^()\s]{0,500}\)")  # bounded, no nesting: linear
_LINK = re.compile(r"\[([^\[\]\n]{1,200})\]\([^()\s]{0,500}\)")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}\.[\w.]{1,63}\b")  # bounded: linear
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+", re.MULTILINE)
_QUOTE = re.compile(r"^\s*>\s?", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]+\|[\s:|-]*$", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3}|~~)(?=\S)(.+?)(?<=\S)\1")
_UNSPEAKABLE = re.compile(r"[^\w\s.,;:!?'\"()\-\u2019\u3000-\u303f\uff00-\uffef]")


def _bracket_pairs(text: str) -> dict[int, int]:
    """Index of each ``{``/``[`` -> index after the bracket that closes it (JSON strings
    respected); brackets that never close are absent. One pass: linear in the text, so a
    run of thousands of unclosed brackets costs microseconds, not seconds."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"' and stack:
            in_string = True  # strings only count inside a structure
        elif ch in "{[":
            stack.append(i)
        elif ch in "}]" and stack:
            pairs[stack.pop()] = i + 1
        i += 1
    return pairs


def _drop_structured(text: str) -> str:
    """Remove JSON objects/arrays and stray braces/brackets (see the module docstring)."""
    pairs = _bracket_pairs(text)
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "{[":
            end = pairs.get(i)
            if end is None:
                if ch == "{":
                    break  # an object that does not close here: the rest is its body
                out.append(" ")
                i += 1
                continue
            inner = text[i + 1 : end - 1]
            if ch == "[" and not re.search(r'["{}:\[\]]', inner) and re.search(r"[A-Za-z]", inner):
                out.append(f" {inner} ")  # "[laughs]": words, not JSON
            else:
                out.append(" ")
            i = end
            continue
        out.append(" " if ch in "}]" else ch)
        i += 1
    return "".join(out)


def clean_for_speech(text: str) -> str:
    """Text as a voice should read it; '' if nothing speakable is left."""
    t = text.replace("\r", "")
    t = _FENCED_CODE.sub(" ", t)
    t = _CALL_BLOCK.sub(" ", t)
    t = _SPECIAL_TOKEN.sub(" ", t)
    t = _TAG.sub(" ", t)
    t = _INLINE_CODE.sub(r"\1", t)
    t = _IMAGE.sub(r"\1", t)
    t = _LINK.sub(r"\1", t)
    t = _JSON_MEMBER.sub(" ", t)
    t = _drop_structured(t)
    t = re.sub(r"[^\S\n]+", " ", t)  # runs of blanks first: later patterns stay linear on them
    t = _URL.sub(" a link ", t)
    t = _EMAIL.sub(" an email address ", t)
    t = _TABLE_RULE.sub(" ", t)
    t = _HEADING.sub("", t)
    t = _BULLET.sub("", t)
    t = _QUOTE.sub("", t)
    t = _EMPHASIS.sub(r"\2", t)
    t = t.replace("|", ", ")
    t = say_numbers(t)
    for symbol, words in _SYMBOLS.items():
        t = t.replace(symbol, words)
    t = t.replace("*", " ").replace("_", " ")
    t = re.sub(r"(?<=\w)/(?=\w)", " or ", t)
    t = _UNSPEAKABLE.sub(" ", t)
    t = re.sub(r"\s+", " ", t)
    t = re.sub(r" ([.,;:!?])", r"\1", t)
    t = re.sub(r"([.,;:!?])\1+", r"\1", t)
    t = re.sub(r"\s+", " ", t).strip()
    if not re.search(r"\w", t):
        return ""
    return t
