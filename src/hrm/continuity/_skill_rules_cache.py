"""The on-disk cache of parsed skill rules, so a hook that loads unchanged files compiles nothing.

Validating a real rules file costs most of a hook's time (`_RulesCache` says how much); the cache
keeps each file's validated form as plain JSON rows and rebuilds `SkillRule` records from them,
their patterns already analysed. It is kept apart from the loader in `hrm.continuity.skills`
because its concerns are its own: the cached row format, when a file's identity can be trusted
(git's "racily clean" rule) and writing safely while other hooks race. `_path_digest` also names
`hrm.continuity.hook_entry`'s settings cache files.

`hrm hook` imports this module on every prompt: it imports only `json`, `os`, `time` and
`_thread` (not `threading`, `zlib` or `hashlib`).
"""

from __future__ import annotations

import _thread
import json
import os
import time

from hrm._private import make_private_dirs, write_private
from hrm.continuity._skill_patterns import _Compiled, _Pattern
from hrm.continuity._skill_records import (
    Enforcement,
    Priority,
    RuleLoadError,
    RuleType,
    SkillRule,
    TriggerConfig,
)

TYPE_CHECKING = False  # `hrm hook` imports this module: no typing, dataclasses or logging
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    _Loaded = tuple[str, dict[str, "SkillRule"], dict[str, "SkillRule"]] | None


_CACHE_FORMAT = 3
"""Bump when the cached form of a rule changes; older cache files are then ignored (2: each
pattern's engine, D243; 3: the ``re-short`` engine, D411)."""
_RACY_SECONDS = 2
"""Files changed more recently than this are parsed without the cache (see `_RulesCache.key`)."""


class _RulesCache:
    """Each rules file's parsed and validated form, as JSON, in the home's cache directory.

    Loading a rules file means parsing it, checking every pattern for nested quantifiers,
    extracting its required literals and compiling it to prove it valid: about 0.15 ms a pattern,
    most of a hook's time on a real (~100 KB) Continuous-Claude rules file. The cache keeps the
    result keyed by the file's path, size, modification and change times and inode, so a hook
    that finds the file unchanged rebuilds the rules without compiling anything; patterns are
    then compiled on first use, only when their required literals occur in a prompt. A
    cache that cannot be read or written is ignored: the file is parsed as without one.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def key(path: Path) -> str | None:
        """The file's identity, or None (no caching) for a file changed in the last seconds.

        File times tick coarsely: a same-size rewrite within one tick of the cached version
        would keep its key. A file is cached only once it has been still for `_RACY_SECONDS`,
        so any later change moves its times (git's "racily clean" rule).
        """
        try:
            st = path.stat()
        except OSError:
            return None
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_SECONDS * 1_000_000_000:
            return None
        return f"{_CACHE_FORMAT}|{path}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}"

    def _file(self, path: Path) -> Path:
        return self.directory / f"skill-rules-{_path_digest(path)}.json"

    def read(
        self, path: Path, key: str
    ) -> tuple[_Loaded, list[RuleLoadError], list[str]] | None:
        try:
            doc = json.loads(self._file(path).read_bytes())
            if not isinstance(doc, dict) or doc.get("key") != key:
                return None
            loaded = None
            if doc["rules"] is not None:
                version, skills, agents = doc["rules"]
                loaded = (str(version), _rules_from(skills, path), _rules_from(agents, path))
            errors = [RuleLoadError(path, rule, str(message)) for rule, message in doc["errors"]]
            return loaded, errors, [str(w) for w in doc["warnings"]]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # no cache, another version's, or damaged: parse the file instead

    def write(
        self,
        path: Path,
        key: str,
        loaded: _Loaded,
        errors: list[RuleLoadError],
        warnings: list[str],
    ) -> None:
        rules = None
        if loaded is not None:
            version, skills, agents = loaded
            rules = [version, _rules_to(skills), _rules_to(agents)]
        doc = {
            "key": key,
            "rules": rules,
            "errors": [[e.rule, e.message] for e in errors],
            "warnings": warnings,
        }
        target = self._file(path)
        writer = f"{os.getpid()}.{_thread.get_ident()}"  # processes and threads race safely
        temporary = target.with_name(f".{target.name}.{writer}.tmp")
        try:
            make_private_dirs(self.directory)
            write_private(temporary, json.dumps(doc, ensure_ascii=True).encode())
            os.replace(temporary, target)
        except (OSError, ValueError, TypeError):  # a cache is an optimisation, never a failure
            try:
                temporary.unlink(missing_ok=True)
            except OSError:
                return


def _path_digest(path: Path) -> str:
    """A stable short name for a path (64-bit FNV-1a); cache files check the full key inside.

    Not `zlib` or `hashlib`: loading either extension module costs a hook more than this loop.
    """
    value = 0xCBF29CE484222325
    for byte in str(path).encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def _rules_to(rules: dict[str, SkillRule]) -> list[list[Any]]:
    def patterns(compiled: tuple[_Pattern, ...]) -> list[list[Any]]:
        return [
            [p.pattern, None if p.required is None else [sorted(o) for o in p.required], p.engine]
            for p in compiled
        ]

    return [
        [
            r.skill,
            r.type.value,
            r.enforcement.value,
            r.priority.value,
            r.description,
            r.kind,
            r.extra,
            [[text, list(tokens)] for text, tokens in r._compiled.keywords],
            patterns(r._compiled.intents),
            patterns(r._compiled.negatives),
        ]
        for r in rules.values()
    ]


def _rules_from(rows: list[list[Any]], path: Path) -> dict[str, SkillRule]:
    def patterns(raw: list[list[Any]]) -> tuple[_Pattern, ...]:
        return tuple(
            _Pattern(str(text), None if req is None else tuple(frozenset(o) for o in req),
                     str(engine))
            for text, req, engine in raw
        )

    rules: dict[str, SkillRule] = {}
    for name, rule_type, enforcement, priority, description, kind, extra, kws, pos, neg in rows:
        keywords = tuple((str(text), tuple(tokens)) for text, tokens in kws)
        intents, negatives = patterns(pos), patterns(neg)
        rules[name] = SkillRule(
            skill=name,
            type=RuleType(rule_type),
            enforcement=Enforcement(enforcement),
            priority=Priority(priority),
            description=description,
            triggers=TriggerConfig(
                keywords=tuple(text for text, _ in keywords),
                intent_patterns=tuple(p.pattern for p in intents),
                negative_patterns=tuple(p.pattern for p in negatives),
            ),
            source_path=path,
            kind=kind,
            extra=dict(extra),
            _compiled=_Compiled(keywords, intents, negatives),
        )
    return rules
