"""Text as the injection detector reads it: disguises undone, hidden and encoded parts exposed.

Stored text (a handoff, a learning, canon, an agent's output) can hide an instruction from a
phrase list in many ways: look-alike letters from other scripts (Cyrillic ``а`` for ``a``),
full-width or mathematical letters, zero-width and bidi-control characters inside words, Unicode
tag characters that spell ASCII invisibly, leetspeak (``1gn0r3``), letters spaced apart, or an
encoding (base64, hex, percent-encoding, HTML entities, ROT13). `fold` undoes the first group on
one text; `views` returns every reading worth checking: the folded text, the invisible tag text,
the inside of hidden markup, and whatever the encodings decode to.

The hook path imports this module (SessionStart screens handoffs and learnings), so it imports
only `re` and `unicodedata` at module level; the confusables table and `html` load on first use.
Every function is bounded: linear in its input, with caps on how many encoded blobs it decodes.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from hrm._values import Value

TYPE_CHECKING = False  # hook processes import this module: no typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "HIDDEN_CHARS",
    "TextView",
    "fold",
    "strip_hidden",
    "views",
]

_DATA = Path(__file__).resolve().parent.parent / "data" / "injection"

HIDDEN_CHARS = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
"""Characters that render as nothing (zero-width, joiners, bidi controls, variation selectors,
Hangul fillers, Unicode tags): removed before reading, counted as a signal."""
_MARKS = re.compile("[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20f0"
                    "\u3099\u309a\ufe20-\ufe2f]")
"""Combining marks of the Latin, Greek and Cyrillic scripts (and kana voicing): accents whose
absence does not change what a phrase says (``précédentes``, ``instruções``)."""
_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]{4,}")
_SEPARATORS = re.compile(r"[ \t\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_SPACED = re.compile(r"(?<!\w)[^\W\d_]([ .\-_*/])(?:[^\W\d_]\1){1,}[^\W\d_](?!\w)")
_SPACED_WORDS = re.compile(
    r"(ignore|disregard|forget|previous|prior|instructions|system|prompt|rules|reveal)"
)
_LEET_WORD = re.compile(r"\b(?=\w*[a-z])(?=\w*[0134578@$])[a-z0-9@$]{3,15}\b(?![a-z0-9])")
_LEET = str.maketrans("0134578@$", "oieastbas")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_HEX_ESCAPES = re.compile(r"(?:(?:\\x|0x|%)[0-9a-fA-F]{2}[\s,]?){4,}")
_HEX_ESCAPE = re.compile(r"(?:\\x|0x)([0-9a-fA-F]{2})")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")
_ROT13_MARKER = re.compile(r"\brot[\s_-]?13\b|\bcaesar\b|\brotated by 13\b")
_ROT13 = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)|^\s*\[[^\]\n]{0,40}\]:\s*(?:#|<>)\s*\((.*)\)\s*$",
                      re.DOTALL | re.MULTILINE)
_HIDDEN_ELEMENT = re.compile(
    r"<(\w+)\b[^>]*?(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0"
    r"|opacity\s*:\s*0(?:\.0+)?\s*[;\"']|color\s*:\s*(?:white|#fff(?:fff)?)\b)[^>]*>(.*?)(?:</\1\s*>|$)",
    re.IGNORECASE | re.DOTALL,
)
_MAX_BLOBS = 32
"""Encoded blobs decoded per text: more is a flood, and the first 32 show its kind."""
_MAX_BLOB_CHARS = 64 * 1024
_PRINTABLE_SHARE = 0.85


class TextView(Value):
    """One reading of a text: what it says once folded, and how it was reached."""

    _fields = ("kind", "text")
    __slots__ = _fields
    kind: str
    """``text`` (the text itself), ``tags`` (Unicode tag characters), ``hidden`` (HTML
    comments, hidden elements), ``leet``, ``spaced``, or the encoding decoded: ``base64``,
    ``hex``, ``url``, ``html``, ``rot13``."""
    text: str
    """The reading, folded (`fold`)."""

    def __init__(self, kind: str, text: str) -> None:
        self._init(kind=kind, text=text)

    @property
    def concealed(self) -> bool:
        """Whether the reading was hidden from a person looking at the text."""
        return self.kind != "text"


def strip_hidden(text: str) -> tuple[str, int]:
    """``text`` without invisible characters, and how many there were."""
    stripped, count = HIDDEN_CHARS.subn("", text)
    return stripped, count


def fold(text: str) -> str:
    """``text`` as the detector reads it: idempotent, never raises, same length order.

    Invisible characters go; NFKC turns full-width, mathematical and compatibility letters into
    plain ones; case is folded; accents are dropped (``précédentes`` reads ``precedentes``);
    look-alikes from other scripts become the ASCII letter they imitate (Unicode TR39 data,
    `scripts/generate_confusables.py`); runs of spaces become one. Applied to the phrasings
    too, so a Russian word and its Russian phrasing fold alike.
    """
    return _SEPARATORS.sub(" ", _fold_chars(text))


def _fold_chars(text: str) -> str:
    """`fold` without collapsing runs of spaces (letters spaced apart are read from this)."""
    text = HIDDEN_CHARS.sub("", text)
    if text.isascii():
        return text.lower()
    table = _confusables()
    for _ in range(2):
        # Casefolding, dropping accents and recomposing can each expose what another folds
        # (a confusable that NFKC composes, a capital that casefolds only after NFKD): two
        # passes settle every text (the property tests check `fold` is idempotent).
        text = unicodedata.normalize("NFKC", text).casefold()
        text = _MARKS.sub("", unicodedata.normalize("NFKD", text))
        text = HIDDEN_CHARS.sub("", unicodedata.normalize("NFKC", text).translate(table))
    return text


_TABLE: list[dict[int, str]] = []


def _confusables() -> dict[int, str]:
    """The look-alike table, loaded on first non-ASCII text (a hook reading ASCII never pays)."""
    if not _TABLE:
        import json

        raw = json.loads((_DATA / "confusables_ascii.json").read_text(encoding="ascii"))
        _TABLE.append({ord(k): v for k, v in raw.items()})
    return _TABLE[0]


def views(text: str) -> list[TextView]:
    """Every reading of ``text`` worth checking, the folded text first.

    Decoded readings are added only when a decoding yields mostly printable text, so a hash or
    a PNG in base64 adds nothing; ROT13 only where the text names it.
    """
    plain, _ = strip_hidden(text)
    folded = fold(plain)
    found = [TextView("text", folded)]
    if not text.isascii():
        tag_text = "".join(
            chr(ord(c) - 0xE0000) for match in _TAG_TEXT.finditer(text) for c in match.group()
        )
        if tag_text:
            found.append(TextView("tags", fold(tag_text)))
    hidden = _hidden_parts(plain)
    if hidden:
        found.append(TextView("hidden", fold("\n".join(hidden))))
    found.extend(_decoded(plain, folded))
    found.extend(_disguised(folded, plain))
    return found


def _hidden_parts(plain: str) -> list[str]:
    """The insides of HTML comments, Markdown comments and elements styled invisible."""
    parts: list[str] = []
    if "<!--" in plain or "]:" in plain:
        parts += [m.group(1) or m.group(2) or "" for m in _COMMENT.finditer(plain)]
    if "<" in plain:
        parts += [m.group(2) for m in _HIDDEN_ELEMENT.finditer(plain)]
    return [part for part in parts if part.strip()]


def _decoded(plain: str, folded: str) -> list[TextView]:
    out: list[TextView] = []
    for kind, decoded in _decodings(plain, folded):
        readable = _readable(decoded)
        if readable is not None:
            out.append(TextView(kind, fold(readable)))
    return out


def _decodings(plain: str, folded: str) -> list[tuple[str, bytes | str]]:
    import binascii

    found: list[tuple[str, bytes | str]] = []
    for blob in _limited(_BASE64.finditer(plain)):
        padded = blob + "=" * (-len(blob) % 4)
        try:
            found.append(("base64", binascii.a2b_base64(
                padded.replace("-", "+").replace("_", "/"), strict_mode=True
            )))
        except (binascii.Error, ValueError):
            continue
    for blob in _limited(_HEX.finditer(plain)):
        found.append(("hex", bytes.fromhex(blob)))
    if ("\\x" in plain or "0x" in plain) and _HEX_ESCAPES.search(plain):
        # Escapes decode in place: "\x69\x67… previous instructions" reads as one sentence.
        found.append(("hex", _HEX_ESCAPE.sub(_unescape, plain[: 4 * _MAX_BLOB_CHARS])))
    if "%" in plain and len(_PERCENT.findall(plain[:_MAX_BLOB_CHARS])) >= 3:
        found.append(("url", _percent_decode(plain[: 4 * _MAX_BLOB_CHARS])))
    if "&" in plain and len(_ENTITY.findall(plain[:_MAX_BLOB_CHARS])) >= 3:
        import html

        found.append(("html", html.unescape(plain[: 4 * _MAX_BLOB_CHARS])))
    if ("rot" in folded or "caesar" in folded) and _ROT13_MARKER.search(folded):
        found.append(("rot13", plain[: 4 * _MAX_BLOB_CHARS].translate(_ROT13)))
    return found


def _limited(matches: Iterator[re.Match[str]]) -> list[str]:
    out: list[str] = []
    for match in matches:
        out.append(match.group()[:_MAX_BLOB_CHARS])
        if len(out) >= _MAX_BLOBS:
            break
    return out


def _unescape(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


def _percent_decode(text: str) -> bytes:
    return re.sub(
        rb"%([0-9a-fA-F]{2})",
        lambda m: bytes([int(m.group(1), 16)]),
        text.replace("+", " ").encode("utf-8", "surrogatepass"),
    )


def _readable(decoded: bytes | str) -> str | None:
    """The decoded text when it reads as text (mostly printable, has a letter), else None."""
    if isinstance(decoded, bytes):
        try:
            decoded = decoded.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not decoded.strip():
        return None
    printable = sum(1 for ch in decoded if ch.isprintable() or ch in "\n\t")
    if printable / len(decoded) < _PRINTABLE_SHARE or not any(ch.isalpha() for ch in decoded):
        return None
    return decoded


def _disguised(folded: str, plain: str) -> list[TextView]:
    """Readings that undo leetspeak and letters spaced apart, when the text shows either."""
    out: list[TextView] = []
    if len(_LEET_WORD.findall(folded[:_MAX_BLOB_CHARS])) >= 2:
        out.append(TextView("leet", folded.translate(_LEET)))
    spaced = _fold_chars(plain)
    if _SPACED.search(spaced):
        joined = _SPACED.sub(_join_spaced, spaced)
        # Runs whose word gaps were lost ("i g n o r e p r e v i o u s") are split again
        # around the words instructions are made of.
        out.append(TextView("spaced", fold(_SPACED_WORDS.sub(r" \1 ", joined)).strip()))
    return out


def _join_spaced(match: re.Match[str]) -> str:
    return re.sub(r"[ .\-_*/]", "", match.group())
