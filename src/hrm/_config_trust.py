"""Which settings a project's ``.hrm/config.yaml`` may set before the person trusts the project.

`hrm.config.load_config` reads a project's file as data (ARCHITECTURE §7): a key that can move
data or credentials — the provider, its base URL, API key and key variable, the model file, the
trace file, extra skill-rule files — or widen what hrm may do or spend (identity-level actions,
the token ceiling, blocking prompts, patterns run on every message) applies only when
`hrm.trust.TrustStore` holds the file with its current hash. The list is of what is harmless
(an allow-list): a key added to the schema later needs trust until it is named here (D216).

Two keys are harmless in one direction only: ``continuity.capture: off`` keeps less and
``continuity.enforcement: suggest`` blocks nothing, so a project may say either without trust;
``on`` and ``block`` need it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.trust import TrustedFile, TrustStore, digest_of, project_root

if TYPE_CHECKING:
    from hrm.home import HRMHome

__all__ = [
    "PROJECT_SAFE_KEYS",
    "IgnoredSettings",
    "announce_ignored",
    "apply_trust",
    "needs_trust",
    "split_untrusted",
    "untrusted_settings",
]

logger = logging.getLogger("hrm.config")

PROJECT_SAFE_KEYS = frozenset({
    # how the supervisor weighs and paces the work: thresholds, budgets of turns and time
    "altitude_default_level",
    "escalation_threshold",
    "pattern_match_threshold",
    "max_agents_per_bundle",
    "default_stance",
    "max_commitment_turns",
    "agent_execution_timeout_ms",
    "pattern_creation_threshold",
    "working_set_default_ttl_hours",
    "problem_retire_days",
    "topic_embeddings",
    "context_token_budget",
    "plan_default_ttl",
    "default_agent_class",
    # how durably the home is written, and whether traces are kept in it
    "trace_enabled",
    "ledger_durability",
    "ledger_group_commit_ms",
    # the tone of the answers
    "llm.temperature",
    "llm.restate_preferences",
    # hook budgets and what SessionStart shows
    "continuity.memory_search_budget_ms",
    "continuity.skill_match_budget_ms",
    "continuity.decay_age_weight",
    "continuity.decay_access_weight",
    "continuity.decay_min_score",
    "continuity.embeddings",
    "continuity.session_start_max_learnings",
    "continuity.additional_context_max_chars",
})
"""Keys a project may set without trust. Every ``policy.*`` key is one too, except
``policy.PREFERENCE_PATTERNS`` (regular expressions run on every message)."""

_SAFE_VALUES: dict[str, frozenset[str]] = {
    "continuity.capture": frozenset({"off"}),
    "continuity.enforcement": frozenset({"suggest"}),
}


def needs_trust(key: str, value: Any) -> bool:
    """Whether a project's file may set `key` to `value` only once the project is trusted."""
    safe = _SAFE_VALUES.get(key)
    if safe is not None:
        word = ("on" if value else "off") if isinstance(value, bool) else str(value).lower()
        return word not in safe
    if key.startswith("policy."):
        return key == "policy.PREFERENCE_PATTERNS"
    return key not in PROJECT_SAFE_KEYS


@dataclass(frozen=True, kw_only=True)
class IgnoredSettings:
    """Keys of a project's config file that were left aside because it is not trusted."""

    file: Path
    """The project's config file."""
    project: Path
    """The project's directory (what ``hrm trust`` takes)."""
    digest: str
    """SHA-256 of the file as read."""
    keys: tuple[str, ...]
    """The dotted keys ignored, sorted."""
    changed: bool
    """True when the project was trusted with other content of this file."""

    def message(self) -> str:
        """One line: what was ignored, why, and the command that applies it."""
        shown = ", ".join(self.keys[:6]) + (
            f" and {len(self.keys) - 6} more" if len(self.keys) > 6 else ""
        )
        why = (
            "it changed since you trusted the project"
            if self.changed
            else "the project is not trusted"
        )
        return (
            f"ignored {shown} from {self.file}: {why}, and these settings could send your "
            f"data or API key elsewhere or widen what hrm may do; `hrm trust {self.project}` "
            "applies them"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``hrm config show --json``)."""
        return {
            "file": str(self.file),
            "project": str(self.project),
            "keys": list(self.keys),
            "changed": self.changed,
        }


def split_untrusted(
    flat: dict[str, Any],
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`flat` without the keys that need trust, and those keys (sorted)."""
    held = tuple(sorted(key for key, value in flat.items() if needs_trust(key, value)))
    return {k: v for k, v in flat.items() if k not in held}, held


def apply_trust(
    home: HRMHome,
    project: Path,
    path: Path,
    raw: bytes,
    flat: dict[str, Any],
    *,
    announce: bool,
) -> tuple[dict[str, Any], IgnoredSettings | None, TrustedFile | None]:
    """The project file's keys that apply: all when the file is trusted with the bytes `raw`
    it was parsed from, else the harmless ones.

    Returns:
        The keys that apply; what was left aside (None when nothing was); and, when the file
        is trusted and set a key that needs it, the file as read (for the base URL's stamp).
    """
    kept, held = split_untrusted(flat)
    if not held:
        return flat, None, None
    store = TrustStore(home)
    digest = digest_of(raw)
    verdict = store.check(project, path, digest)
    if verdict.trusted:
        root = str(project_root(project))
        return flat, None, TrustedFile(str(home.root), root, str(path), digest)
    ignored = IgnoredSettings(
        file=path,
        project=project_root(project),
        digest=digest,
        keys=held,
        changed=verdict.state == "changed",
    )
    if announce:
        announce_ignored(ignored, store)
    return kept, ignored, None


def untrusted_settings(data: dict[str, Any]) -> dict[str, Any]:
    """The dotted keys of a project config file's mapping that need trust, with their values."""
    from hrm.config import _flatten

    flat = _flatten(data, "")
    return {key: flat[key] for key in split_untrusted(flat)[1]}


def announce_ignored(ignored: IgnoredSettings, store: TrustStore) -> None:
    """Log the ignored keys once per file content (D217); later loads stay quiet."""
    if store.first_notice("log", ignored.file, ignored.digest):
        logger.warning("%s", ignored.message())
