"""Configuration: `HRMConfig` (001 §10), `LLMConfig` (§11.4), `PolicySurface` (§12.1),
and where each value came from (003 §1 get_config).

Precedence, lowest first, implemented once in `load_config`:

    built-in defaults  <  $HRM_HOME/config.yaml  <  ./.hrm/config.yaml  <  HRM_* environment

Environment names: ``HRM_<KEY>`` for a top-level key (``HRM_ESCALATION_THRESHOLD=0.5``) and
``HRM_<SECTION>__<KEY>`` inside a section (``HRM_LLM__PROVIDER=openai``,
``HRM_POLICY__ASK_BAND_LOW=0.5``); ``HRM_PROVIDER`` and ``HRM_MODEL`` are shorthands for the LLM
section. Values are parsed as YAML scalars, so ``0.5``, ``true`` and ``[a, b]`` work.

Every file is safe-loaded and validated before anything uses it: an unknown key, a wrong type, a
value out of range, PolicySurface weights that do not sum to 1.0 or ask bands out of order are
rejected with an `HRMError` naming the key and the file (and line, for YAML syntax errors). A key
001 §10 had and hrm removed loads with a warning instead (D225–D227).

The project's file is data until the person trusts the project (`hrm trust`, D215): the keys that
could move data or credentials apply only then, the harmless ones always (`hrm._config_trust`,
D216), and what was left aside is said once per file content (D217).

Values are checked by pydantic `TypeAdapter`s over the classes' own annotations
(`hrm._config_build`). This module imports only the standard library and PyYAML, and pydantic is
imported only for a value that is not already of its field's exact type: the Claude Code hook
loads the configuration whenever a config file changed, so it must stay cheap.
"""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from hrm._config_build import build_section
from hrm.errors import ErrorCode, HRMError
from hrm.home import ENV_HOME, HRMHome
from hrm.trust import TrustedFile
from hrm.types import AltitudeLevel, Stance

if typing.TYPE_CHECKING:
    from hrm._config_trust import IgnoredSettings

__all__ = [
    "ConfigScope",
    "ConfigSource",
    "ConfigValue",
    "ContinuityConfig",
    "HRMConfig",
    "LLMConfig",
    "PolicySurface",
    "ReadingConfig",
    "ResolvedConfig",
    "get_config",
    "load_config",
]

ENV_PREFIX = "HRM_"
_ENV_RESERVED = frozenset({ENV_HOME, "HRM_DEBUG", "HRM_LOG_LEVEL"})
_ENV_SHORTHANDS = {"HRM_PROVIDER": "llm.provider", "HRM_MODEL": "llm.model"}

Switch = Literal["auto", "on", "off"]
"""A setting that is on, off, or decided by hrm (``auto``); a bare YAML ``on``/``off`` counts."""
OnOff = Literal["on", "off"]
"""A setting that is on or off; a bare YAML ``on``/``off`` counts."""
PROJECT_CONFIG = Path(".hrm") / "config.yaml"


# ── the configuration classes ──────────────────────────────────────────────


@dataclass(frozen=True)
class PolicySurface:
    """Single source of truth for the governance tunables (001 §12.1). Version it carefully."""

    PRIORITY_SCALE: tuple[int, int] = (1, 10)
    AUTO_PREEMPT_THRESHOLD: float = 0.70
    """PreemptScore at or above this switches problems without asking."""
    ASK_BAND_LOW: float = 0.55
    """PreemptScore from here up to ASK_BAND_HIGH asks the person; below it, the input queues."""
    ASK_BAND_HIGH: float = 0.70
    WEIGHT_PRIORITY: float = 0.30
    WEIGHT_URGENCY: float = 0.25
    WEIGHT_STALENESS: float = 0.20
    WEIGHT_SWITCH_COST: float = 0.25
    CONFLICT_CONFIDENCE_GAP: float = 0.3
    """Agent outputs that disagree with a confidence gap at most this are true ambiguity (HIGH)."""
    BLAST_RADIUS_FILE_THRESHOLD: int = 3
    LLM_SIGNAL_FLOOR: float = 0.1
    LLM_SIGNAL_CEILING: float = 0.9
    LLM_SIGNAL_WEIGHT: float = 0.6
    ESCALATION_THRESHOLD: float = 0.6
    PREFERENCE_PATTERNS: tuple[str, ...] = (
        r"I prefer",
        r"I hate",
        r"I always",
        r"I never",
        r"I'm the kind of person who",
        r"I like",
        r"I don't like",
        r"I need",
        # Beyond 001 §12.4's eight (D69): the same statements as people make them.
        r"I (?:really|usually|generally|normally|strongly|definitely|much|mostly|typically"
        r"|also|do) (?:prefer|hate|like|don't like)",
        r"I don't (?:really|particularly|much|actually) like",
        r"I(?:'d| would) (?:much |really |definitely )?(?:prefer|rather)",
        r"My preference is",
        r"I can't stand",
        r"I'm (?:a )?(?:big |huge )?fan of",
    )
    NEW_SESSION_STANCE: str = "sensemaking"
    SENSEMAKING_MAX_TURNS: int = 2
    MID_COMMITMENT_STANCE: str = "execution"
    POST_DELIVERY_STANCE: str = "evaluation"
    EVALUATION_MAX_TURNS: int = 1
    INTERRUPT_CONDITIONS: tuple[str, ...] = (
        "ask_band",
        "preference_conflict",
        "high_stakes_irreversible",
        "you_should_know",
    )
    MAX_CONCURRENT_AGENTS: int = 3
    AGENT_TIMEOUT_MS: int = 30000
    VERSION: str = "1.0.0"

    def validate(self, *, source: str = "PolicySurface") -> bool:
        """Check weights sum to 1.0 and thresholds are ordered; raise `HRMError` naming the key."""
        weights = (
            self.WEIGHT_PRIORITY
            + self.WEIGHT_URGENCY
            + self.WEIGHT_STALENESS
            + self.WEIGHT_SWITCH_COST
        )
        if abs(weights - 1.0) >= 0.01:
            raise HRMError.validation_failed(
                f"policy.WEIGHT_PRIORITY + WEIGHT_URGENCY + WEIGHT_STALENESS + WEIGHT_SWITCH_COST "
                f"sum to {weights:.3f} in {source}; they must sum to 1.0",
                key="policy.WEIGHT_*",
                file=source,
            )
        if not self.ASK_BAND_LOW < self.ASK_BAND_HIGH <= self.AUTO_PREEMPT_THRESHOLD:
            raise HRMError.validation_failed(
                f"policy.ASK_BAND_LOW ({self.ASK_BAND_LOW}) < ASK_BAND_HIGH ({self.ASK_BAND_HIGH}) "
                f"<= AUTO_PREEMPT_THRESHOLD ({self.AUTO_PREEMPT_THRESHOLD}) "
                f"does not hold in {source}",
                key="policy.ASK_BAND_*",
                file=source,
            )
        for name in ("ESCALATION_THRESHOLD", "LLM_SIGNAL_WEIGHT"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise HRMError.validation_failed(
                    f"policy.{name} must be between 0 and 1 (exclusive), got {value} in {source}",
                    key=f"policy.{name}",
                    file=source,
                )
        if not 0 <= self.LLM_SIGNAL_FLOOR < self.LLM_SIGNAL_CEILING <= 1:
            raise HRMError.validation_failed(
                "policy.LLM_SIGNAL_FLOOR < LLM_SIGNAL_CEILING within [0, 1] "
                f"does not hold in {source}",
                key="policy.LLM_SIGNAL_*",
                file=source,
            )
        low, high = self.PRIORITY_SCALE
        if not 0 < low < high:
            raise HRMError.validation_failed(
                f"policy.PRIORITY_SCALE must be (low, high) with 0 < low < high in {source}",
                key="policy.PRIORITY_SCALE",
                file=source,
            )
        stances = {s.value for s in Stance}
        for name in ("NEW_SESSION_STANCE", "MID_COMMITMENT_STANCE", "POST_DELIVERY_STANCE"):
            if getattr(self, name) not in stances:
                raise HRMError.validation_failed(
                    f"policy.{name} must be one of {sorted(stances)} in {source}",
                    key=f"policy.{name}",
                    file=source,
                )
        return True


@dataclass
class LLMConfig:
    """How hrm talks to a model (001 §11.4).

    Provider ``auto`` means ``local`` when installed, else ``offline``.
    """

    provider: str = "auto"
    api_key: str | None = field(default=None, repr=False)
    """Never stored or recorded; prefer ``api_key_env``."""
    api_key_env: str | None = None
    """Environment variable holding the key (default per provider, e.g. ANTHROPIC_API_KEY)."""
    model: str = ""
    """Model id; empty means the provider's default."""
    temperature: float = 0.7
    max_tokens: int = 1024
    requests_per_minute: int = 60
    tokens_per_minute: int = 100_000
    max_retries: int = 3
    retry_delay_ms: int = 1000
    retry_on: list[str] = field(default_factory=lambda: ["rate_limit", "timeout", "server_error"])
    track_costs: bool = True
    cost_alert_threshold: float = 10.0
    """Dollars per session; crossing it logs a warning and records a cost alert."""
    base_url: str | None = None
    """For OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio)."""
    timeout_ms: int = 60_000
    pricing: dict[str, float] = field(default_factory=dict)
    """``input_per_1k`` and ``output_per_1k`` in dollars."""
    model_path: str | None = None
    """A GGUF file for the ``local`` provider (default: the bundled SmolLM2-135M-Instruct)."""
    n_ctx: int = 2048
    n_threads: int = 2
    restate_preferences: Switch = "auto"
    """auto | on | off — restate the canon the context kept at the end of the person's message.
    ``auto`` does for the ``local`` provider: small in-process models follow a system prompt
    weakly (D60)."""
    base_url_project: TrustedFile | None = field(
        default=None, repr=False, compare=False, metadata={"config_key": False}
    )
    """Set by `load_config` when ``base_url`` came from a trusted project's file: the adapter
    factory checks that the file is still trusted before the URL receives a credential (D218).
    Not a config key: no file or variable can set it."""

    @classmethod
    def from_yaml(cls, path: str | Path) -> LLMConfig:
        """Load an LLM config file (001 §11.8 shape), validated like the main config."""
        p = Path(path)
        data = _read_yaml(p)
        config: LLMConfig = build_section(cls, data, str(p), "")
        return config

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMConfig:
        """Build from the environment (001 §11.4).

        Reads ``LLM_PROVIDER``, ``LLM_MODEL``, ``LLM_TEMPERATURE``, ``LLM_MAX_TOKENS``,
        ``LLM_BASE_URL`` and ``HRM_LLM__*``; the key comes from the provider's variable.
        """
        env = os.environ if environ is None else environ
        raw: dict[str, Any] = {}
        legacy = {
            "LLM_PROVIDER": "provider",
            "LLM_MODEL": "model",
            "LLM_TEMPERATURE": "temperature",
            "LLM_MAX_TOKENS": "max_tokens",
            "LLM_BASE_URL": "base_url",
        }
        for var, key in legacy.items():
            if env.get(var):
                raw[key] = _parse_env_value(env[var])
        for var, value in env.items():
            if var.startswith("HRM_LLM__"):
                raw[var[len("HRM_LLM__") :].lower()] = _parse_env_value(value)
        for var, dotted in _ENV_SHORTHANDS.items():
            if env.get(var):
                raw[dotted.split(".", 1)[1]] = _parse_env_value(env[var])
        config: LLMConfig = build_section(cls, raw, "environment", "llm")
        return config

    def resolve_api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The API key from the config or from the provider's environment variable."""
        if self.api_key:
            return self.api_key
        env = os.environ if environ is None else environ
        var = self.api_key_env or _DEFAULT_KEY_ENV.get(self.provider)
        return env.get(var) if var else None


_DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


@dataclass
class ContinuityConfig:
    """Continuity for coding assistants (003): hook budgets, skill rules, decay, embeddings."""

    memory_search_budget_ms: int = 2000
    """SessionStart memory search budget (003 Integration 1)."""
    skill_match_budget_ms: int = 1000
    """UserPromptSubmit matching budget (003 Integration 2)."""
    skill_rules: list[str] = field(default_factory=list)
    """Extra skill-rules files, loaded after the project's and before the home's."""
    decay_age_weight: float = 0.5
    decay_access_weight: float = 0.3
    decay_min_score: float = 0.1
    embeddings: Switch = "auto"
    """auto | on | off — hybrid search when the `embeddings` extra is installed."""
    session_start_max_learnings: int = 5
    additional_context_max_chars: int = 10_000
    enforcement: Literal["suggest", "block"] = "suggest"
    """suggest | block — what a skill rule marked ``enforcement: block`` does to a prompt.
    ``suggest`` shows it to the assistant as a required step, as Continuous-Claude does; only
    ``block`` stops the prompt, and a project's rules block only once the project is trusted
    (D220, D221)."""
    capture: OnOff = "on"
    """on | off — whether the hooks store anything from this project: the handoffs written at
    PreCompact and SessionEnd, the artifact index of PostToolUse, learnings (D222)."""


@dataclass
class ReadingConfig:
    """How a message is read (issue 29): which tiers run after the rules."""

    sentence_model: Switch = "auto"
    """auto | on | off — the exemplar tier on the MiniLM sentence model; auto: when the
    `embeddings` extra is installed."""
    model_tier: Switch = "auto"
    """auto | on | off — a bounded structured call to the configured model for sentences the
    other tiers leave uncertain; auto: only a capable hosted model (anthropic, or openai
    without a base URL), never the local or offline one; on: any model but the offline one."""


@dataclass
class HRMConfig:
    """Configuration for all layers (001 §10 plus what hrm adds)."""

    altitude_default_level: AltitudeLevel = AltitudeLevel.L2_OPERATIONS
    altitude_allow_l4_actions: bool = False
    escalation_threshold: float = 0.6
    pattern_match_threshold: float = 0.7
    max_agents_per_bundle: int = 5
    default_stance: Stance = Stance.SENSEMAKING
    """The stance a new stack, and every new session, starts in: 001 §10's name for
    ``policy.NEW_SESSION_STANCE`` (001 §12.1); setting either sets both (D224)."""
    max_commitment_turns: int = 10
    agent_execution_timeout_ms: int = 30_000
    pattern_creation_threshold: int = 3
    """Successes of one signature and strategy before a pattern is created."""
    working_set_default_ttl_hours: int = 2
    problem_retire_days: int = 30
    """Queued or paused problems without progress this many days are resolved when a session
    starts (recorded as ``problems_retired``); 0 keeps every problem until the person resolves
    it."""
    reading_act_threshold: float = 0.75
    """A request read at least this sure is acted on; from `reading_ask_threshold` up to it,
    hrm asks one short question first (issue 29, D150)."""
    reading_ask_threshold: float = 0.45
    trace_enabled: bool = False
    trace_file: str = "trace.jsonl"
    """Relative paths are inside the home's logs directory."""
    ledger_durability: str = "group"
    """group: fsync at turn boundaries (fast); fsync: every record (safest)."""
    ledger_group_commit_ms: int = 20
    """Under group durability, the fsync that ends a turn is batched with the turns ending within
    this many milliseconds, off the turn's path; 0 fsyncs synchronously at every turn end."""
    topic_embeddings: Switch = "auto"
    """auto | on | off — a sentence model tells a question on the person's own subject that
    opens a new topic from one about the conversation (D68); auto: when the `embeddings`
    extra is installed."""
    context_token_budget: int = 2000
    """Tokens of assembled context a model sees per turn."""
    plan_default_ttl: int = 12
    """Step budget of a plan run when no commitment bounds it (002 TTL)."""
    default_agent_class: str = "ADMIN"
    stack_token_budget: int = 500_000
    """Token ceiling HO3 allocates to each stack (004 §3), enforced by the gateway: what one
    session of the stack may spend; a new session starts with the whole ceiling (D23)."""
    llm: LLMConfig = field(default_factory=LLMConfig)
    policy: PolicySurface = field(default_factory=PolicySurface)
    continuity: ContinuityConfig = field(default_factory=ContinuityConfig)
    reading: ReadingConfig = field(default_factory=ReadingConfig)

    def __post_init__(self) -> None:
        """Make ``default_stance`` and ``policy.NEW_SESSION_STANCE`` one setting (D224).

        Whichever was changed from its default wins; both changed and different is an error.
        `load_config` has already settled a pair set in different layers by precedence.
        """
        policy_stance = self.policy.NEW_SESSION_STANCE
        if self.default_stance.value == policy_stance:
            return
        if policy_stance == PolicySurface.NEW_SESSION_STANCE:
            self.policy = dataclasses.replace(
                self.policy, NEW_SESSION_STANCE=self.default_stance.value
            )
        elif self.default_stance is Stance.SENSEMAKING:
            if policy_stance in _STANCES:  # else `PolicySurface.validate` names the bad value
                self.default_stance = Stance(policy_stance)
        else:
            raise HRMError.validation_failed(
                f"default_stance ({self.default_stance.value}) and policy.NEW_SESSION_STANCE "
                f"({policy_stance}) are one setting and disagree; set one of them",
                key="default_stance",
            )


_STANCES = frozenset(member.value for member in Stance)


def _valid_agent_class(value: str) -> bool:
    from hrm.home import parse_agent_class

    try:
        parse_agent_class(value)
    except HRMError:
        return False
    return True


# ── ranges checked after loading (dotted key → predicate, message) ──────────

_RANGES: dict[str, tuple[typing.Callable[[Any], bool], str]] = {
    "escalation_threshold": (lambda v: 0 < v < 1, "between 0 and 1 (exclusive)"),
    "pattern_match_threshold": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "max_agents_per_bundle": (lambda v: 1 <= v <= 64, "between 1 and 64"),
    "max_commitment_turns": (lambda v: v >= 1, "at least 1"),
    "agent_execution_timeout_ms": (lambda v: v >= 1, "at least 1"),
    "pattern_creation_threshold": (lambda v: v >= 1, "at least 1"),
    "working_set_default_ttl_hours": (lambda v: v >= 1, "at least 1"),
    "problem_retire_days": (lambda v: v >= 0, "at least 0 (0 never retires)"),
    "reading_act_threshold": (lambda v: 0 < v <= 1, "between 0 (exclusive) and 1"),
    "reading_ask_threshold": (lambda v: 0 < v <= 1, "between 0 (exclusive) and 1"),
    "ledger_durability": (lambda v: v in ("group", "fsync"), "'group' or 'fsync'"),
    "ledger_group_commit_ms": (lambda v: 0 <= v <= 5000, "between 0 and 5000"),
    "context_token_budget": (lambda v: v >= 64, "at least 64"),
    "plan_default_ttl": (lambda v: v >= 1, "at least 1"),
    "stack_token_budget": (lambda v: v >= 1, "at least 1"),
    "default_agent_class": (_valid_agent_class, "ADMIN or RESIDENT:<name>"),
    "llm.temperature": (lambda v: 0 <= v <= 2, "between 0 and 2"),
    "llm.max_tokens": (lambda v: v >= 1, "at least 1"),
    "llm.requests_per_minute": (lambda v: v >= 1, "at least 1"),
    "llm.tokens_per_minute": (lambda v: v >= 1, "at least 1"),
    "llm.max_retries": (lambda v: 0 <= v <= 20, "between 0 and 20"),
    "llm.retry_delay_ms": (lambda v: v >= 0, "at least 0"),
    "llm.timeout_ms": (lambda v: v >= 1, "at least 1"),
    "llm.cost_alert_threshold": (lambda v: v >= 0, "at least 0"),
    "llm.n_ctx": (lambda v: v >= 128, "at least 128"),
    "llm.n_threads": (lambda v: v >= 1, "at least 1"),
    "continuity.memory_search_budget_ms": (lambda v: v >= 1, "at least 1"),
    "continuity.skill_match_budget_ms": (lambda v: v >= 1, "at least 1"),
    "continuity.decay_age_weight": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "continuity.decay_access_weight": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "continuity.decay_min_score": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "continuity.session_start_max_learnings": (lambda v: 0 <= v <= 100, "between 0 and 100"),
    "continuity.additional_context_max_chars": (
        lambda v: 100 <= v <= 10_000,
        "between 100 and 10000 (Claude Code's limit)",
    ),
}


# ── source attribution (003 §1 get_config) ─────────────────────────────────


class ConfigSource(str, Enum):
    """Where an effective value came from; precedence grows downward."""

    DEFAULT = "DEFAULT"
    GLOBAL = "GLOBAL"
    PROJECT = "PROJECT"
    ENV = "ENV"

    @property
    def precedence(self) -> int:
        """0 = default, 1 = global, 2 = project, 3 = environment."""
        return list(ConfigSource).index(self)


class ConfigScope(str, Enum):
    """Which configuration `get_config` reads (003 §1)."""

    GLOBAL = "GLOBAL"
    PROJECT = "PROJECT"
    MERGED = "MERGED"


@dataclass(frozen=True)
class ConfigValue:
    """One effective value with its source (003 §1 ConfigValue)."""

    key: str
    value: Any
    source: ConfigSource
    precedence: int
    origin: str
    """The file path, ``environment`` (with the variable name) or ``built-in default``."""


@dataclass
class ResolvedConfig:
    """The merged configuration with per-key attribution."""

    config: HRMConfig
    values: dict[str, ConfigValue]
    """Every dotted key (``llm.provider``, ``policy.ASK_BAND_LOW``…) with where it came from."""
    files: list[Path]
    """Config files that were read, in precedence order."""
    layers: dict[ConfigSource, dict[str, Any]]
    """The raw flat values of each layer (for scoped lookups)."""
    ignored: list[IgnoredSettings] = field(default_factory=list)
    """Keys of the project's file left aside because the project is not trusted (D216)."""

    @property
    def policy(self) -> PolicySurface:
        return self.config.policy

    def get(self, key: str) -> ConfigValue:
        """The effective value of a dotted key; ``KEY_NOT_FOUND`` names close matches."""
        try:
            return self.values[key]
        except KeyError:
            raise _key_not_found(key, self.values) from None


def _key_not_found(key: str, known: Mapping[str, Any], default: Any = None) -> HRMError:
    import difflib

    close = difflib.get_close_matches(key, list(known), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `hrm config show` lists every key"
    return HRMError(
        ErrorCode.KEY_NOT_FOUND,
        f"Unknown config key '{key}'{hint}",
        recoverable=False,
        context={"key": key, "default_value": default},
    )


def load_config(
    home: HRMHome | str | Path | None = None,
    project_dir: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    announce: bool = True,
) -> ResolvedConfig:
    """Merge defaults, the home's config, the project's config and the environment; validate.

    The project's file is data until the person trusts the project (D215, D216): keys that
    could move data or credentials apply only when `hrm.trust.TrustStore` holds the file with
    its current hash; the others are left aside and listed in `ResolvedConfig.ignored`.

    Args:
        home: The home whose ``config.yaml`` is the global layer (default: resolved home).
        project_dir: Directory whose ``.hrm/config.yaml`` is the project layer (default: cwd).
        environ: Environment mapping (default: ``os.environ``).
        announce: Log the keys left aside as a warning, once per file content (D217); the
            hooks say it their own way and pass False.

    Raises:
        HRMError: ``PARSE_ERROR`` (YAML syntax, with file and line) or ``VALIDATION_FAILED``
            (unknown key, wrong type, out of range), naming the key and the file.
    """
    h = home if isinstance(home, HRMHome) else HRMHome.resolve(home)
    env = os.environ if environ is None else environ
    project = Path(project_dir) if project_dir is not None else Path.cwd()

    known = _known_keys()
    layers: dict[ConfigSource, dict[str, Any]] = {source: {} for source in ConfigSource}
    layers[ConfigSource.DEFAULT] = {
        k: v for k, v in _flatten(dataclasses.asdict(HRMConfig()), "").items() if k in known
    }
    origins: dict[str, str] = {}
    read = _read_files(h, project, layers, origins, announce=announce)
    layers[ConfigSource.ENV] = _env_layer(env, origins)

    merged: dict[str, Any] = {}
    values: dict[str, ConfigValue] = {}
    for source in ConfigSource:
        for key, value in layers[source].items():
            merged[key] = value
            values[key] = ConfigValue(
                key=key,
                value=value,
                source=source,
                precedence=source.precedence,
                origin=origins.get(key, "built-in default"),
            )
    _align_stances(layers, merged, values, origins)

    # Only what a file or the environment set is validated; the rest are the classes' defaults.
    given = {key: value for key, value in merged.items() if key in origins}
    config = build_section(HRMConfig, _unflatten(given), "", "", origins=origins)
    _check_ranges(config, origins)
    policy_sources = sorted(
        {origins[k] for k in merged if k.startswith("policy.") and k in origins}
    )
    config.policy.validate(source=", ".join(policy_sources) or "built-in defaults")
    if read.trusted_project is not None and origins.get("llm.base_url") == str(
        read.trusted_project.path
    ):
        config.llm.base_url_project = read.trusted_project
    # Store the coerced values (e.g. enums) in the attribution table.
    for key, attributed in values.items():
        values[key] = dataclasses.replace(attributed, value=_get_dotted(config, key))
    return ResolvedConfig(
        config=config, values=values, files=read.files, layers=layers, ignored=read.ignored
    )


@dataclass
class _FilesRead:
    """What `_read_files` found besides the layers it filled."""

    files: list[Path] = field(default_factory=list)
    ignored: list[IgnoredSettings] = field(default_factory=list)
    trusted_project: TrustedFile | None = None
    """The project's file, when it is trusted and set a key that needs trust."""


def _read_files(
    home: HRMHome,
    project: Path,
    layers: dict[ConfigSource, dict[str, Any]],
    origins: dict[str, str],
    *,
    announce: bool,
) -> _FilesRead:
    """Fill the global and project layers from their files; the project's passes trust."""
    read = _FilesRead()
    global_path = home.config_path
    project_path = (project / PROJECT_CONFIG).absolute()
    for source, path in ((ConfigSource.GLOBAL, global_path), (ConfigSource.PROJECT, project_path)):
        if source is ConfigSource.PROJECT and path == global_path.absolute():
            continue
        if not path.is_file():
            continue
        data, raw = _read_config_file(path)
        flat = _without_removed(_flatten(data, ""), str(path))
        _check_known_keys(flat, str(path))
        if source is ConfigSource.PROJECT:
            from hrm._config_trust import apply_trust

            flat, ignored, trusted = apply_trust(home, project, path, raw, flat, announce=announce)
            if ignored is not None:
                read.ignored.append(ignored)
            read.trusted_project = trusted
        layers[source] = flat
        read.files.append(path)
        for key in flat:
            origins[key] = str(path)
    return read


def _env_layer(env: Mapping[str, str], origins: dict[str, str]) -> dict[str, Any]:
    env_flat: dict[str, Any] = {}
    for var, raw in env.items():
        env_key = _env_key(var)
        if env_key is None:
            if var.startswith(ENV_PREFIX) and var[len(ENV_PREFIX) :].lower() in _REMOVED_KEYS:
                _warn_removed(var[len(ENV_PREFIX) :].lower(), f"the environment ({var})")
            continue
        env_flat[env_key] = _parse_env_value(raw)
        origins[env_key] = f"environment ({var})"
    _check_known_keys(env_flat, "the environment")
    return env_flat


_STANCE_KEYS = ("default_stance", "policy.NEW_SESSION_STANCE")


def _align_stances(
    layers: Mapping[ConfigSource, Mapping[str, Any]],
    merged: dict[str, Any],
    values: dict[str, ConfigValue],
    origins: dict[str, str],
) -> None:
    """``default_stance`` and ``policy.NEW_SESSION_STANCE`` are one setting (D224): the layer
    of highest precedence that sets either sets both; one layer setting both differently is an
    error naming its file."""
    for source in (ConfigSource.ENV, ConfigSource.PROJECT, ConfigSource.GLOBAL):
        layer = layers[source]
        set_here = [key for key in _STANCE_KEYS if key in layer]
        if not set_here:
            continue
        if not all(isinstance(layer[key], str) for key in set_here):
            return  # not a stance name: building the config names the key and what it must be
        words = {str(layer[key]).lower() for key in set_here}
        if len(words) > 1:
            where = origins[set_here[0]]
            raise HRMError.validation_failed(
                f"default_stance and policy.NEW_SESSION_STANCE are one setting and disagree in "
                f"{where}; set one of them",
                key="default_stance",
                file=where,
            )
        winner = set_here[0]
        for key in _STANCE_KEYS:
            merged[key] = layer[winner] if key == winner else str(layer[winner]).lower()
            origins[key] = origins[winner]
            values[key] = dataclasses.replace(
                values[winner], key=key, value=merged[key]
            )
        return


def _check_ranges(config: HRMConfig, origins: Mapping[str, str]) -> None:
    for key, (check, expected) in _RANGES.items():
        value = _get_dotted(config, key)
        if not check(value):
            where = origins.get(key, "built-in default")
            raise HRMError.validation_failed(
                f"Config key '{key}' must be {expected}, got {value!r} (set in {where})",
                key=key,
                file=where,
            )


def get_config(
    scope: ConfigScope | str,
    key: str,
    *,
    resolved: ResolvedConfig | None = None,
    **load_kwargs: Any,
) -> ConfigValue:
    """Read one key with its source (003 §1): from the global file, the project file, or merged.

    Raises:
        HRMError: ``INVALID_SCOPE`` for an unknown scope; ``KEY_NOT_FOUND`` when the key is not
            known, or not set in the requested file (with ``context["default_value"]``).
    """
    try:
        scope = ConfigScope(scope.upper() if isinstance(scope, str) else scope)
    except ValueError:
        raise HRMError(
            ErrorCode.INVALID_SCOPE,
            f"Unknown config scope {scope!r}: use GLOBAL, PROJECT or MERGED",
            recoverable=False,
        ) from None
    r = resolved or load_config(**load_kwargs)
    effective = r.get(key)
    if scope is ConfigScope.MERGED:
        return effective
    source = ConfigSource(scope.value)
    layer = r.layers[source]
    if key not in layer:
        default = r.layers[ConfigSource.DEFAULT].get(key)
        raise HRMError(
            ErrorCode.KEY_NOT_FOUND,
            f"Config key '{key}' is not set in the {scope.value.lower()} config; "
            f"its default is {default!r}",
            recoverable=False,
            context={"key": key, "default_value": default},
        )
    origin = next((str(f) for f in r.files if _source_of_file(f, r) is source), source.value)
    return ConfigValue(
        key,
        effective.value if effective.source is source else layer[key],
        source,
        source.precedence,
        origin,
    )


def _source_of_file(path: Path, r: ResolvedConfig) -> ConfigSource:
    return ConfigSource.PROJECT if path.parent.name == ".hrm" else ConfigSource.GLOBAL


# ── loading machinery ──────────────────────────────────────────────────────


def _read_yaml(path: Path) -> dict[str, Any]:
    return _read_config_file(path)[0]


def _read_config_file(path: Path) -> tuple[dict[str, Any], bytes]:
    """The mapping a config file holds, and the bytes it was parsed from (for trust)."""
    import yaml

    from hrm import _paths, _yaml

    try:
        raw = _paths.read_bytes(path, max_bytes=_yaml.MAX_BYTES, what="config file")
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        raise HRMError.parse_error(f"cannot read config file: {exc.strerror}", path=path) from exc
    except UnicodeDecodeError as exc:
        raise HRMError.parse_error("config file is not UTF-8 text", path=path) from exc
    try:
        data = _yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise HRMError.parse_error(f"invalid YAML: {problem}", path=path, line=line) from exc
    if data is None:
        return {}, raw
    if not isinstance(data, dict):
        raise HRMError.validation_failed(
            f"{path}: the config must be a mapping of keys to values, got {type(data).__name__}",
            file=str(path),
        )
    return data, raw


def _flatten(data: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted in _SECTIONS:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        section, _, rest = key.partition(".")
        if rest and section in _SECTIONS:
            nested.setdefault(section, {})[rest] = value
        else:
            nested[key] = value
    return nested


_SECTIONS = {
    "llm": LLMConfig,
    "policy": PolicySurface,
    "continuity": ContinuityConfig,
    "reading": ReadingConfig,
}


def _known_keys() -> set[str]:
    keys = {f.name for f in _config_fields(HRMConfig)} - set(_SECTIONS)
    for name, cls in _SECTIONS.items():
        keys |= {f"{name}.{f.name}" for f in _config_fields(cls)}
    return keys


def _config_fields(cls: type[Any]) -> list[dataclasses.Field[Any]]:
    """The fields a file or variable may set (not those marked ``config_key: False``)."""
    return [f for f in dataclasses.fields(cls) if f.metadata.get("config_key", True)]


_REMOVED_KEYS = {
    "memory_file_locking": "ledgers and the turn lock always lock: several processes share a "
    "home, and writing without a lock loses records (D225)",
    "auto_trim_enabled": "patterns are never trimmed automatically, as 001 §10's user decision "
    "says; `hrm memory` removes one (D226)",
}
"""Keys 001 §10 had that hrm removed, with why: a file still holding one gets a warning."""
_warned_removed: set[tuple[str, str]] = set()


def _without_removed(flat: dict[str, Any], where: str) -> dict[str, Any]:
    for key in [k for k in flat if k in _REMOVED_KEYS]:
        _warn_removed(key, where)
        del flat[key]
    return flat


def _warn_removed(key: str, where: str) -> None:
    """One line per key and place a process: the setting is gone, and why (not an error)."""
    if (key, where) in _warned_removed:
        return
    _warned_removed.add((key, where))
    import logging

    logging.getLogger(__name__).warning(
        "config key '%s' in %s has no effect and can be deleted: %s",
        key, where, _REMOVED_KEYS[key],
    )


def _check_known_keys(flat: Mapping[str, Any], where: str) -> None:
    known = _known_keys()
    for key in flat:
        if key in _SECTIONS:
            raise HRMError.validation_failed(
                f"Config key '{key}' in {where} must be a mapping of its keys",
                key=key,
                file=where,
            )
        if key not in known:
            import difflib

            close = difflib.get_close_matches(key, sorted(known), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise HRMError.validation_failed(
                f"Unknown config key '{key}' in {where}.{hint}", key=key, file=where
            )


def _env_key(var: str) -> str | None:
    if not var.startswith(ENV_PREFIX) or var in _ENV_RESERVED:
        return None
    if var in _ENV_SHORTHANDS:
        return _ENV_SHORTHANDS[var]
    body = var[len(ENV_PREFIX) :]
    section, sep, rest = body.partition("__")
    if sep:
        if section.lower() not in _SECTIONS:
            return None
        name = rest if section.lower() == "policy" else rest.lower()
        return f"{section.lower()}.{name}"
    key = body.lower()
    return key if key in _known_keys() else None


def _parse_env_value(raw: str) -> Any:
    import yaml

    from hrm import _yaml

    try:
        return _yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def _get_dotted(config: HRMConfig, key: str) -> Any:
    obj: Any = config
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj
