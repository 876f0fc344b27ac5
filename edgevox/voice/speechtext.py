"""Clean reply text for speech: what a TTS voice should read, not what a screen shows.

:func:`clean_for_speech` removes markdown (code fences, emphasis, headings,
bullets, quotes, tables, links keep their text), replaces URLs and e-mail
addresses by a short spoken stand-in, spells out symbols (``&`` ``%`` ``°``
``+`` ``=`` ``$`` ...), numbers (``42`` -> "forty-two", ``3.5`` -> "three point
five", ``1st`` -> "first", ``1,200``), and units after numbers (``10 m`` ->
"ten meters", ``5 km/h`` -> "five kilometers per hour"), and drops emoji and
other symbols a voice cannot say.

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

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = [(10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand")]
_ORDINAL_WORDS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}

# unit -> (singular, plural). Matched only right after a number.
UNITS: dict[str, tuple[str, str]] = {
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "m/s": ("meter per second", "meters per second"),
    "mph": ("mile per hour", "miles per hour"),
    "rpm": ("revolution per minute", "revolutions per minute"),
    "mm": ("millimeter", "millimeters"),
    "cm": ("centimeter", "centimeters"),
    "km": ("kilometer", "kilometers"),
    "m": ("meter", "meters"),
    "kg": ("kilogram", "kilograms"),
    "g": ("gram", "grams"),
    "ms": ("millisecond", "milliseconds"),
    "s": ("second", "seconds"),
    "sec": ("second", "seconds"),
    "min": ("minute", "minutes"),
    "h": ("hour", "hours"),
    "hz": ("hertz", "hertz"),
    "khz": ("kilohertz", "kilohertz"),
    "v": ("volt", "volts"),
    "w": ("watt", "watts"),
    "kw": ("kilowatt", "kilowatts"),
    "mah": ("milliamp hour", "milliamp hours"),
    "°c": ("degree Celsius", "degrees Celsius"),
    "°f": ("degree Fahrenheit", "degrees Fahrenheit"),
    "°": ("degree", "degrees"),
    "%": ("percent", "percent"),
    "gb": ("gigabyte", "gigabytes"),
    "mb": ("megabyte", "megabytes"),
}

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
_MONEY = re.compile(r"([$€£])\s?(\d[\d,]*(?:\.\d+)?)")
_UNIT_AFTER_NUMBER = re.compile(
    r"(?<![\d,.])(-?\d[\d,]*(?:\.\d+)?)\s?("  # starts only where a number starts: linear
    + "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
    + r")(?![\w/])",
    re.IGNORECASE,
)
_ORDINAL = re.compile(r"\b(\d+)(st|nd|rd|th)\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(-?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\d])")
_UNSPEAKABLE = re.compile(r"[^\w\s.,;:!?'\"()\-\u2019\u3000-\u303f\uff00-\uffef]")


def number_to_words(n: int) -> str:
    """English words for an integer: ``1205`` -> "one thousand two hundred five"."""
    if n < 0:
        return "minus " + number_to_words(-n)
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_to_words(rest)}" if rest else "")
    for scale, name in _SCALES:
        if n >= scale:
            high, rest = divmod(n, scale)
            return f"{number_to_words(high)} {name}" + (f" {number_to_words(rest)}" if rest else "")
    raise AssertionError("unreachable")


def ordinal_to_words(n: int) -> str:
    """``21`` -> "twenty-first"."""
    words = number_to_words(n)
    head, sep, last = words.rpartition("-") if "-" in words.split(" ")[-1] else words.rpartition(" ")
    if last in _ORDINAL_WORDS:
        last = _ORDINAL_WORDS[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + sep + last


def _decimal_to_words(sign: str, whole: str, frac: str | None) -> str:
    digits = whole.replace(",", "")
    if len(digits) > 15:  # an identifier or a run of digits, not a quantity: read it digit by digit
        return ("minus " if sign else "") + " ".join(_ONES[int(d)] for d in digits[:40])
    words = number_to_words(int(digits))
    if frac:
        words += " point " + " ".join(_ONES[int(d)] for d in frac[:40])
    return ("minus " if sign else "") + words


def _unit_words(match: re.Match[str]) -> str:
    number, unit = match.group(1), match.group(2)
    singular, plural = UNITS[unit.lower()]
    is_one = number.replace(",", "") in ("1", "-1")
    return f"{number} {singular if is_one else plural}"


def _money_words(match: re.Match[str]) -> str:
    currency = {"$": "dollars", "€": "euros", "£": "pounds"}[match.group(1)]
    return f"{match.group(2)} {currency}"


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
    t = _MONEY.sub(_money_words, t)
    t = _UNIT_AFTER_NUMBER.sub(_unit_words, t)
    t = _ORDINAL.sub(lambda m: ordinal_to_words(int(m.group(1))), t)
    t = _NUMBER.sub(lambda m: _decimal_to_words(m.group(1), m.group(2), m.group(3)), t)
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
