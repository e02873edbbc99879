"""The table of secret families `hrm.scrubbing` recognises: one row per family, as data.

A row names the family (the ``kind`` a redaction shows: ``[REDACTED:npm_token]``), its pattern,
which group holds the secret, and where a match can start: at one of its ``anchors`` (for a
name such as ``DB_PASSWORD`` the anchor ``pass`` lies inside it, and the start is found by
stepping left over ``back``, the characters a name is made of). Where a pattern alone would
catch ordinary text, ``check`` (in `hrm._secret_checks`) decides.

Rows come in three phases. *Shape* rows are credentials recognisable wherever they stand (a
provider's prefix, a PEM block); their anchors are matched case-sensitively in the text as it
is. *Context* rows read a name and a value, a header, a URL or a sentence; their anchors are
matched in the lower-cased text after the shape rows ran, so an assignment around a token
already redacted sees ``[REDACTED:…]`` and leaves it. *Scan* rows have no anchor and search the
whole text, only when it holds one of their anchors anywhere (the AWS secret key's shape).

Every pattern is linear: a match attempt starts only at an anchor and is bounded (bounded or
possessive quantifiers), or it consumes what it matched. ``tests/test_secret_families.py``
holds positive and negative samples per row and a property test over adversarial text.
"""

from __future__ import annotations

import re

from hrm import _secret_checks as checks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FAMILIES", "SecretPattern"]


class SecretPattern:
    """One family of credential and how to recognise it.

    A frozen value (equal and hashed by its fields) whose `regex` may be given as source text
    and is then compiled on first use: most processes (a hook writing one log line) never
    compile most rows.
    """

    __slots__ = (
        "_hints", "_regex", "anchors", "back", "check", "flags", "group", "kind", "lead",
        "pattern", "phase",
    )
    kind: str
    pattern: str
    """The regular expression's source."""
    group: int | str
    """Which group holds the secret (a number or a name); 0 replaces the whole match."""
    anchors: tuple[str, ...]
    """Substrings at which a match starts (after stepping left over `back` and `lead`)."""
    phase: str
    """``shape`` (anchors matched as written), ``context`` (matched lower-cased) or ``scan``
    (the whole text is searched when it holds any anchor, lower-cased)."""
    back: str
    """Characters to step left over from an anchor to where a match starts (a name's)."""
    lead: int
    """Characters before that start the pattern begins with (``?`` of a query, ``<``)."""
    flags: int
    """`re` flags for compiling `pattern` (those of a compiled `regex` when one is given)."""
    check: Callable[[re.Match[str]], bool] | None
    """Decides whether a match is a secret; None when every match is one."""
    _regex: re.Pattern[str] | None
    _hints: tuple[str, ...]

    def __init__(
        self,
        kind: str,
        regex: re.Pattern[str] | str,
        group: int | str = 0,
        anchors: tuple[str, ...] = (),
        flags: int = 0,
        check: Callable[[re.Match[str]], bool] | None = None,
        *,
        phase: str = "scan",
        back: str = "",
        lead: int = 0,
    ) -> None:
        compiled = None if isinstance(regex, str) else regex
        values = {
            "kind": kind,
            "pattern": regex if isinstance(regex, str) else regex.pattern,
            "group": group,
            "anchors": anchors,
            "phase": phase,
            "back": back,
            "lead": lead,
            "flags": flags if compiled is None else compiled.flags & ~re.UNICODE,  # implied
            "check": check,
            "_regex": compiled,
            # Asked for every scan row of every text scrubbed: made once, not per call.
            "_hints": tuple(anchor.lower() for anchor in anchors),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def hints(self) -> tuple[str, ...]:
        """Lower-case substrings one of which every match contains."""
        return self._hints

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once, when first needed)."""
        compiled = self._regex
        if compiled is None:
            compiled = re.compile(self.pattern, self.flags)
            object.__setattr__(self, "_regex", compiled)
        return compiled

    def _key(self) -> tuple[object, ...]:
        return (self.kind, self.pattern, self.flags, self.group, self.anchors, self.phase,
                self.back, self.lead, self.check)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen SecretPattern")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SecretPattern):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"SecretPattern(kind={self.kind!r}, pattern={self.pattern!r}, group={self.group!r})"


def _shape(kind: str, pattern: str, *anchors: str, **options: object) -> SecretPattern:
    return SecretPattern(kind, pattern, anchors=anchors, phase="shape", **options)  # type: ignore[arg-type]


def _context(kind: str, pattern: str, *anchors: str, **options: object) -> SecretPattern:
    return SecretPattern(kind, pattern, anchors=anchors, phase="context", **options)  # type: ignore[arg-type]


_T = r"A-Za-z0-9_\-"
"""The characters of most providers' tokens."""
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$"
"""What a setting's name is made of (``DB_PASSWORD``, ``db.password``, ``$password``)."""
_SECRET_WORDS = (
    "pass", "pwd", "pw", "secret", "token", "key", "auth", "credential", "sig", "pin", "psk",
    "pat", "creds",
)
"""Anchors of the rows that read a name and a value: every secret-like name holds one."""
_VALUE = (
    r"(?P<secret>\"(?:[^\"\\\r\n]|\\.){1,512}\"|'[^'\r\n]{1,512}'|`[^`\r\n]{1,512}`"
    r"|[^\s\"'`,;=]{1,512}={0,3})"
)
"""An assigned value: quoted (spaces allowed, the quotes kept; in double quotes a backslash
escapes the next character, as in JSON, so ``"ab\\"cd"`` is one value, not ``"ab\\"``
followed by a stray quote) or bare up to a separator."""
_KEY = r"(?P<key>(?:--?)?\$?[A-Za-z_][\w.\-]{0,127}+)"
"""A setting's name, possessive so a long one is read once."""

_SHAPES: tuple[SecretPattern, ...] = (
    _shape(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "-----BEGIN ",
    ),
    _shape("anthropic_key", rf"(?<![{_T}])sk-ant-[{_T}]{{16,}}", "sk-ant-"),
    _shape(
        "openai_key",
        rf"(?<![{_T}])sk-(?:proj-|svcacct-|admin-|None-)?[{_T}]{{20,}}",
        "sk-",
        check=checks.has_digit,
    ),
    _shape(
        "aws_access_key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        "AKIA", "ASIA", "ABIA", "ACCA", "A3T",
    ),
    _shape(
        "github_token",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    ),
    _shape(
        "gitlab_token",
        rf"(?<![{_T}])gl(?:pat|dt|ptt|rt|soat)-[{_T}]{{20,}}",
        "glpat-", "gldt-", "glptt-", "glrt-", "glsoat-",
    ),
    _shape(
        "slack_token",
        r"(?<![A-Za-z0-9\-])xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9\-]{10,}",
        "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe-", "xoxe.",
    ),
    _shape("slack_app_token", r"(?<![A-Za-z0-9\-])xapp-[0-9]-[A-Za-z0-9\-]{10,}", "xapp-"),
    _shape(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+",
        "https://hooks.slack.com/",
    ),
    _shape(
        "discord_webhook",
        rf"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{{5,30}}/[{_T}]{{20,}}",
        "https://discord", "https://ptb.discord", "https://canary.discord",
    ),
    _shape("google_api_key", rf"(?<![{_T}])AIza[{_T}]{{35}}", "AIza"),
    _shape(
        "google_oauth",
        rf"(?<![{_T}.])(?:ya29\.[{_T}]{{20,}}|GOCSPX-[{_T}]{{20,}})",
        "ya29.", "GOCSPX-",
    ),
    _shape(
        "stripe_key",
        r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        "sk_live_", "sk_test_", "rk_live_", "rk_test_",
    ),
    _shape("stripe_webhook_secret", r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{16,}", "whsec_"),
    _shape("sendgrid_key", rf"(?<![{_T}.])SG\.[{_T}]{{16,32}}\.[{_T}]{{16,64}}", "SG."),
    _shape("twilio_key", r"\b(?:SK|AC)[0-9a-fA-F]{32}\b", "SK", "AC"),
    _shape("npm_token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}", "npm_"),
    _shape("pypi_token", rf"(?<![{_T}])pypi-[{_T}]{{32,}}", "pypi-"),
    _shape("huggingface_token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}", "hf_"),
    _shape(
        "shopify_token",
        r"(?<![A-Za-z0-9_])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
        "shpat_", "shpss_", "shpca_", "shppa_",
    ),
    _shape(
        "digitalocean_token",
        r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}",
        "dop_v1_", "doo_v1_", "dor_v1_",
    ),
    _shape("databricks_token", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", "dapi"),
    _shape("vault_token", rf"(?<![{_T}.])hv[sbr]\.[{_T}]{{24,}}", "hvs.", "hvb.", "hvr."),
    _shape("mailgun_key", r"\bkey-[0-9a-f]{32}\b", "key-"),
    _shape("mailchimp_key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b", "-us", back="0123456789abcdef"),
    _shape(
        "linear_key",
        r"(?<![A-Za-z0-9_])lin_(?:api|oauth)_[A-Za-z0-9]{32,}",
        "lin_api_", "lin_oauth_",
    ),
    _shape("groq_key", r"(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{20,}", "gsk_"),
    _shape("xai_key", r"(?<![A-Za-z0-9_\-])xai-[A-Za-z0-9]{20,}", "xai-"),
    _shape("replicate_token", r"(?<![A-Za-z0-9_])r8_[A-Za-z0-9]{20,}", "r8_"),
    _shape("perplexity_key", r"(?<![A-Za-z0-9_\-])pplx-[A-Za-z0-9]{20,}", "pplx-"),
    _shape("atlassian_token", r"(?<![A-Za-z0-9_\-])ATATT[A-Za-z0-9_\-=]{20,}", "ATATT"),
    _shape(
        "grafana_token",
        r"(?<![A-Za-z0-9_])gl(?:sa|c)_[A-Za-z0-9_+/]{32,}={0,2}",
        "glsa_", "glc_",
    ),
    _shape(
        "newrelic_key",
        r"(?<![A-Za-z0-9\-])NR(?:AK|II|JS)-[A-Za-z0-9]{19,}",
        "NRAK-", "NRII-", "NRJS-",
    ),
    _shape("postman_key", r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b", "PMAK-"),
    _shape(
        "doppler_token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
        "dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.",
    ),
    _shape("figma_token", rf"(?<![{_T}])figd_[{_T}]{{20,}}", "figd_"),
    _shape(
        "telegram_bot_token",
        rf"\b[0-9]{{8,10}}:AA[{_T}]{{33}}(?![{_T}])",
        ":AA",
        back="0123456789",
    ),
    _shape("age_secret_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", "AGE-SECRET-KEY-1"),
    _shape(
        "jwt",
        rf"(?<![{_T}])eyJ[{_T}]{{8,}}+\.eyJ[{_T}]{{8,}}+\.[{_T}]{{8,}}",
        "eyJ",
    ),
)
"""Credentials recognisable by their own shape, wherever they stand."""

_CONTEXTS: tuple[SecretPattern, ...] = (
    _context(
        "basic_auth",
        r"(?i)\bbasic[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})",
        "basic",
        group="secret",
        check=checks.basic_credentials,
    ),
    _context(
        "bearer_token",
        r"(?i)\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/\-]{8,}=*)",
        "bearer",
        group="secret",
        check=checks.bearer_value,
    ),
    _context(
        "authorization_header",
        r"(?i)authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:(?:token|digest|apikey|sso-key|ssws|key|otp)[ \t]+)?(?P<secret>[^\s\"',;]{8,})",
        "authorization",
        group="secret",
        check=checks.header_value,
    ),
    _context(
        "url_password",
        r"(?<=[A-Za-z0-9])://[^\s:/@?#\"'<>]{0,256}:(?P<secret>[^\s@/?#\"'<>]{1,256})@",
        "://",
        group="secret",
        check=checks.userinfo_value,
    ),
    _context(
        "cli_password",
        r"(?<![^\s])(?:-u|--user|--proxy-user)[ \t=]+[\"']?[^\s:\"']{1,128}:"
        r"(?P<secret>[^\s\"']{1,256})",
        "-u", "--user", "--proxy-user",
        group="secret",
        check=checks.userinfo_value,
    ),
    _context(
        "url_query_secret",
        r"[?&;](?P<key>[A-Za-z_][\w.\-]{0,127}+)=(?P<secret>[^&\s#\"'<>;]{1,1024})",
        *_SECRET_WORDS,
        group="secret",
        back=_NAME_CHARS,
        lead=1,
        check=checks.query_secret,
    ),
    _context(
        "assigned_secret",
        rf"(?<![\w.\-$]){_KEY}[\"'\]]?\??[ \t]{{0,8}}(?::=|=>|[:=])[ \t]{{0,8}}{_VALUE}",
        *_SECRET_WORDS,
        group="secret",
        back=_NAME_CHARS,
        check=checks.assigned_secret,
    ),
    _context(
        "flag_secret",
        r"(?<![\w\-])--?(?P<key>[A-Za-z][\w\-]{0,63}+)[ \t]+"
        r"(?P<secret>\"[^\"\r\n]{1,256}\"|'[^'\r\n]{1,256}'|[^\s\"'`\-][^\s\"'`]{0,255})",
        *_SECRET_WORDS,
        group="secret",
        back=_NAME_CHARS,
        check=checks.assigned_secret,
    ),
    _context(
        "xml_secret",
        r"<(?P<key>[A-Za-z_][\w.\-:]{0,63}+)>(?P<secret>[^<\r\n]{1,512})</",
        *_SECRET_WORDS,
        group="secret",
        back=_NAME_CHARS,
        lead=1,
        check=checks.assigned_secret,
    ),
    _context(
        "netrc_password",
        r"(?i)password[ \t]+(?P<secret>\S{3,256})",
        "password",
        group="secret",
        check=checks.netrc_password,
    ),
    _context(
        "cookie",
        r"(?i)cookie[ \t]*:[ \t]*(?P<secret>[^\r\n]{8,2048})",
        "cookie",
        group="secret",
        check=checks.cookie_value,
    ),
    _context(
        "prose_secret",
        r"(?i)\b(?:pass(?:word|wd|phrase|code)s?|pwd|pin(?:[ \t]?code)?|secret(?:[ \t]?key)?"
        r"|api[ \t_\-]?key|access[ \t_\-]?key|token|credentials?)\b"
        r"(?:[ \t]+(?:for|of|to|on|in|at)(?:[ \t]+[^\s]{1,40}){1,4}?)?[ \t]+"
        r"(?:is[ \t]+set[ \t]+to|is[ \t]+now|(?:was|is|has[ \t]+been|has)[ \t]+changed[ \t]+to"
        r"|changed[ \t]+to|(?:would|will)[ \t]+be|became|is|was|are|=|:)[ \t]+"
        "(?P<quote>[\"'`\u201c\u2018])?(?P<secret>[^\\s\"'`\u201d\u2019]{3,128})",
        "pass", "pwd", "pin", "secret", "api", "access", "token", "credential",
        group="secret",
        check=checks.prose_secret,
    ),
    _context(
        "high_entropy_secret",
        r"(?i)\b(?:secret|token|key|password|passwd|pwd|credential|apikey)s?\b[^\r\n]{0,30}?"
        r"(?<![A-Za-z0-9+/_\-=.])(?P<secret>[A-Za-z0-9+/_\-=.]{16,512})",
        "secret", "token", "key", "pass", "pwd", "credential", "api",
        group="secret",
        check=checks.high_entropy,
    ),
)
"""Credentials recognisable by what stands around them: a name, a header, a URL, a sentence."""

_SCANS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "aws_secret_key",
        r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        anchors=("aws", "akia", "asia", "secret", "amazon"),
        check=checks.shaped_aws_secret,
    ),
)
"""Credentials with a shape too plain to anchor: searched when the text speaks of them."""

FAMILIES: tuple[SecretPattern, ...] = _SHAPES + _CONTEXTS + _SCANS
"""Every family, in the order scrubbing applies them."""
