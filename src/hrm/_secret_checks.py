"""The judgement calls of secret scrubbing: is this key a secret's name, is this value one.

A regular expression can find ``name = value`` and ``my password is …`` cheaply; whether the
name means a credential (``DB_PASSWORD``, ``apiKey``, ``MYSQL_PWD``) rather than a field about
one (``password_field``, ``max_tokens``), and whether the value is a credential rather than code
(``models.CharField(...)``, ``request.form``) or a placeholder (``${{ secrets.X }}``), is decided
here, in plain Python, so the patterns stay simple and linear. Every check takes the regex match
and answers True when the match holds a secret. `hrm.scrubbing` calls them; nothing else should.
"""

from __future__ import annotations

import math
import re
from itertools import pairwise

__all__ = [
    "assigned_secret",
    "basic_credentials",
    "bearer_value",
    "cookie_value",
    "has_digit",
    "header_value",
    "high_entropy",
    "looks_random",
    "netrc_password",
    "prose_secret",
    "query_secret",
    "secret_key_name",
    "shaped_aws_secret",
    "userinfo_value",
]

_STRONG_WORDS = (
    "password", "passwd", "passphrase", "passcode", "secret", "apikey", "accesskey",
    "privatekey", "accountkey", "sharedaccesskey", "sharedaccesssignature", "signingkey",
    "encryptionkey", "masterkey", "authtoken", "accesstoken", "refreshtoken", "sessiontoken",
    "bearertoken", "apitoken", "authkey", "appkey", "credential", "clientsecret",
    "connectionstring", "sessionkey", "licensekey", "webhooksecret", "dbpass",
)
"""Substrings of a normalised key (lower case, separators removed) that name a credential."""
_STRONG_SEGMENTS = frozenset({"pwd", "pass", "pw", "psk", "pin"})
"""Whole segments of a key (``DB_PASS``, ``ADMIN_PW``) that name a password."""
_WEAK_SEGMENTS = frozenset({"key", "token", "auth", "sig", "signature", "creds", "pat"})
"""Segments that name a credential only when the value also looks random (``sort_key`` is not)."""
_NOT_SECRET_LAST = frozenset({
    "field", "fields", "length", "len", "count", "counts", "max", "min", "limit", "size",
    "type", "types", "name", "names", "label", "url", "uri", "path", "file", "dir", "policy",
    "prompt", "input", "reset", "required", "strength", "hint", "regex", "pattern", "validator",
    "validation", "header", "param", "placeholder", "expiry", "expires", "expiration", "ttl",
    "format", "enabled", "mode", "env", "var", "variable", "column", "attr", "attribute",
    "rotation", "manager", "store", "provider", "prefix", "suffix", "widget", "form", "error",
    "errors", "message", "changed", "confirmation", "confirm", "visible", "visibility", "chars",
})
"""A key ending in one of these is about a credential, not one (``password_field``)."""
_NOT_SECRET_KEYS = frozenset({"pwd", "oldpwd", "keyword", "keywords", "keys", "tokens"})
"""Whole keys that look like secret names but are not (the shell's ``PWD`` is a directory)."""
_PLACEHOLDERS = frozenset({
    "true", "false", "null", "none", "nil", "undefined", "required", "optional", "string",
    "str", "int", "bool", "boolean", "text", "yes", "no", "on", "off", "password", "secret",
    "token", "example", "placeholder", "redacted", "hidden", "masked", "env", "empty", "unset",
    "todo", "tbd", "changeit?", "<redacted>", "***", "xxx", "value", "your", "here", "number",
    "object", "any", "unknown", "char", "varchar", "bytes", "secretstr", "field", "list", "dict",
})
"""Values that are types, keywords or stand-ins, never a credential."""

# Pattern sources, compiled by `re` (and cached there) the first time a check runs: a process
# that scrubs nothing needing a check never compiles them.
_SEGMENT_SPLIT = r"[_.\-$@\[\]\s]+|(?<=[a-z0-9])(?=[A-Z])"
_TEMPLATE = r"^(?:\$\{|\$\(|\{\{|\{%|%\(|<[A-Za-z_]|\$[A-Za-z_]|#\{|@\{|%[A-Z_]+%)"
_CODE = r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)+(?:[\[(]|$)|[\[(])"
"""An attribute path, a call or an index: ``request.form``, ``os.environ[``, ``getpass()``."""
_SNAKE_NAME = r"^[a-z]+(?:_[a-z]+)+$"
_FILE_PATH = r"^(?:~|\.{1,2})?/[\w.\-/]*$"
_MASK = r"^(?:\*+|x+|X+|•+|\.{3,}|…)$"
_TRAILING = ")]}>"


def _segments(key: str) -> list[str]:
    return [part.lower() for part in re.split(_SEGMENT_SPLIT, key.strip("\"'`$")) if part]


def secret_key_name(key: str) -> str | None:
    """``"strong"`` or ``"weak"`` when `key` names a credential, else None.

    Strong names (``password``, ``DB_PASSWORD``, ``apiKey``, ``MYSQL_PWD``) mark any value as a
    secret; weak ones (``key``, ``token``) only a value that looks random.
    """
    segments = _segments(key)
    if not segments:
        return None
    joined = "".join(segments)
    if joined in _NOT_SECRET_KEYS or segments[-1] in _NOT_SECRET_LAST:
        return None
    if any(word in joined for word in _STRONG_WORDS):
        return "strong"
    if any(part in _STRONG_SEGMENTS for part in segments):
        return "strong"
    if any(part in _WEAK_SEGMENTS for part in segments):
        return "weak"
    return None


def looks_random(value: str, *, min_length: int = 16) -> bool:
    """True for a token a person did not type as a word: long, mixed, changing often.

    Letters and digits both present, a change of kind (letter to digit, lower to upper case)
    at least every fourth character, and three bits of entropy per character:
    ``wJalrXUtnFEMI/K7MDENG``, a hex digest or a UUID qualify; ``configuration_options``,
    ``self.settings.secret_key_v2`` and ``ThisIsAClassName`` do not.
    """
    size = len(value)
    if size < min_length:
        return False
    kinds = [_kind(c) for c in value]
    if "d" not in kinds or not ("l" in kinds or "u" in kinds):
        return False
    changes = sum(1 for a, b in pairwise(kinds) if a not in (b, "o") and b != "o")
    if changes * 4 < size:
        return False
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    entropy = -sum(n / size * math.log2(n / size) for n in counts.values())
    return entropy >= 3.0


def _kind(char: str) -> str:
    if char.isdigit():
        return "d"
    if char.isupper():
        return "u"
    return "l" if char.islower() else "o"


def _token_like(value: str) -> bool:
    """A value with a digit or an inner capital: not a plain word (``hunter2``, ``Tr0ub4``)."""
    if any(c.isdigit() for c in value):
        return True
    inner = value[1:]
    if any(c.isupper() for c in inner) and any(c.islower() for c in value):
        return True
    return any(not c.isalnum() and c not in "-'" for c in value.strip(".,!?"))


_JSON_NOT_STRING = re.compile(r"[\[{\-0-9]|(?:true|false|null|Infinity|NaN)\b")
"""The start of a JSON value that is not a string: an array, an object, a number, a literal
(with Python's ``Infinity`` and ``NaN``, which `json` writes and reads)."""


def _json_member(match: re.Match[str]) -> bool:
    """Is the match a JSON object member (``"key": value``)? Its value, unquoted, is then a
    number, a literal or a nested value — no credential's text — and a redaction put in its
    place would break the JSON around it (``{"pin": 1234}`` would lose its closing brace). A
    quoted value is redacted inside its quotes, the JSON kept."""
    text, start, end = match.string, match.start("key"), match.end("key")
    return start > 0 and text[start - 1] == '"' and end < len(text) and text[end] == '"'


def _unquote(value: str) -> tuple[str, bool]:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1], True
    return value, False


def _plausible_value(value: str, *, quoted: bool) -> bool:
    """Whether an assigned value can be a credential at all (not code, a type or a stand-in)."""
    text = value.strip()
    if not quoted:
        text = text.rstrip(_TRAILING)
    if not text or text.lower() in _PLACEHOLDERS or re.match(_MASK, text):
        return False
    if text.startswith(("[REDACTED:", "[private]")) or re.match(_TEMPLATE, text):
        return False
    if quoted:
        return True
    if "(" in text or re.match(_CODE, text) or re.match(_SNAKE_NAME, text):
        return False
    return not re.match(_FILE_PATH, text)


def assigned_secret(match: re.Match[str]) -> bool:
    """``key = value`` (any case, separator and quoting) whose key names a credential."""
    strength = secret_key_name(match.group("key"))
    if strength is None:
        return False
    value, quoted = _unquote(match.group("secret"))
    if not quoted and _json_member(match) and _JSON_NOT_STRING.match(value):
        return False
    if not _plausible_value(value, quoted=quoted):
        return False
    if strength == "weak":
        return looks_random(value.strip().rstrip(_TRAILING), min_length=12)
    return len(value.strip()) >= 3


def query_secret(match: re.Match[str]) -> bool:
    """``?token=…`` / ``&sig=…`` in a URL: a credential name with a value that is not code."""
    strength = secret_key_name(match.group("key"))
    if strength is None:
        return False
    value = match.group("secret")
    if strength == "weak":
        return looks_random(value, min_length=12) or len(value) >= 24
    return len(value) >= 3 and value.lower() not in _PLACEHOLDERS


def prose_secret(match: re.Match[str]) -> bool:
    """"my password is hunter2!": a value that is quoted or is not a plain word."""
    value = match.group("secret")
    quoted = match.groupdict().get("quote") is not None
    bare = value.rstrip(".,;:)")
    if not _plausible_value(bare, quoted=quoted):
        return False
    return quoted or _token_like(bare)


_NETRC_LOGIN = r"(?i)\blogin[ \t]+\S{1,128}[ \t]+$"


def netrc_password(match: re.Match[str]) -> bool:
    """``password X`` of a ``.netrc``: first on its line, or after ``login NAME``."""
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = text[max(line_start, match.start() - 200) : match.start()]
    if before.strip() and not re.search(_NETRC_LOGIN, before):
        return False
    return prose_secret(match)


def high_entropy(match: re.Match[str]) -> bool:
    """A long random-looking token within a few words after ``token``, ``secret``, ``key``…"""
    value = match.group("secret")
    if value.startswith(("/", "./", "~/")) or value.count("/") > 2:
        return False  # a path, not a token
    return looks_random(value.strip("=.-_"), min_length=16)


def shaped_aws_secret(match: re.Match[str]) -> bool:
    """A 40-character AWS secret access key: base64 letters of both cases and digits."""
    value = match.group(0)
    has_upper = any(c.isupper() for c in value)
    has_lower = any(c.islower() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_upper and has_lower and has_digit


def has_digit(match: re.Match[str]) -> bool:
    """A provider token's body holds a digit (``sk-learn-style-pipeline`` is no key)."""
    return any(c.isdigit() for c in match.group(0))


def userinfo_value(match: re.Match[str]) -> bool:
    """The password of ``scheme://user:password@host``, unless a stand-in or a template."""
    return _plausible_value(match.group("secret"), quoted=True)


def header_value(match: re.Match[str]) -> bool:
    """An ``Authorization:`` header's credential, unless a stand-in or a template."""
    value = match.group("secret")
    return _plausible_value(value, quoted=False) and len(value) >= 8


def bearer_value(match: re.Match[str]) -> bool:
    """The token after ``Bearer``: long, or not an English word (``Bearer authentication``)."""
    value = match.group("secret")
    return len(value) >= 20 or _token_like(value)


def basic_credentials(match: re.Match[str]) -> bool:
    """``Basic <base64>`` whose value decodes to ``user:password``."""
    import base64
    import binascii

    value = match.group("secret")
    padded = value + "=" * (-len(value) % 4)
    try:
        decoded = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def cookie_value(match: re.Match[str]) -> bool:
    """A ``Cookie:`` header carrying at least one random-looking ``name=value``."""
    return any(
        looks_random(part.partition("=")[2].strip(), min_length=12)
        for part in match.group("secret").split(";")
    )
