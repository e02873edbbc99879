"""Damage done to a home's files — byte flips, truncations, deletions — must be detected.

Each trial copies a home built through real use, damages one ledger (picked at random,
weighted by size, so the big ledgers are hit as often as they would be), and asks
`verify_home` — what ``hrm ledger verify`` runs. A trial whose damage verify misses is
*undetected*. Byte flips are then repaired with a quarantine, and the home must verify again
with every record that was not itself damaged still there.

What a hash chain cannot see by design is counted apart: a ledger cut at a line boundary
together with its anchor *and* its manifest entry, or deleted with its manifest entry *and*
the governance record of its creation, leaves nothing that remembers it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from homes import copy


@dataclass
class DamageResult:
    """The trials of one kind of damage."""

    kind: str
    trials: int = 0
    detected: int = 0
    undetected: list[str] = field(default_factory=list)
    repaired: int | None = None
    """For byte flips: trials after which a quarantine left a home that verifies."""
    salvaged: int | None = None
    """For byte flips: records kept after the damaged one (salvage), over all trials."""
    by_design: int = 0
    """Trials whose damage nothing in the home can show (see the module's docstring)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind, "trials": self.trials, "detected": self.detected,
            "undetected": len(self.undetected), "undetected_examples": self.undetected[:3],
            "repaired": self.repaired, "salvaged": self.salvaged, "by_design": self.by_design,
        }


def _ledgers(home: Path) -> list[Path]:
    from hrm.home import HRMHome

    return HRMHome(home).all_ledgers()


def _pick(rng: random.Random, home: Path) -> Path:
    ledgers = _ledgers(home)
    return rng.choices(ledgers, weights=[max(1, p.stat().st_size) for p in ledgers])[0]


def _detected(home: Path) -> bool:
    from hrm.home import HRMHome
    from hrm.storage.home_verify import verify_home

    return not verify_home(HRMHome(home)).ok


def flips(template: Path, root: Path, trials: int, rng: random.Random) -> DamageResult:
    from hrm.home import HRMHome
    from hrm.storage import quarantine_damage
    from hrm.storage.home_verify import verify_home
    from hrm.storage.rebuild import after_quarantine

    result = DamageResult("byte flip", repaired=0, salvaged=0)
    for number in range(trials):
        home = copy(template, root / f"flip-{number}")
        ledger = _pick(rng, home)
        data = bytearray(ledger.read_bytes())
        at = rng.randrange(len(data))
        data[at] ^= rng.randint(1, 255)
        ledger.write_bytes(bytes(data))
        result.trials += 1
        if not _detected(home):
            result.undetected.append(f"{ledger.name}@{at}")
            continue
        result.detected += 1
        report = quarantine_damage(ledger)
        result.salvaged = (result.salvaged or 0) + report.salvaged
        after_quarantine(HRMHome(home), [ledger])
        result.repaired = (result.repaired or 0) + verify_home(HRMHome(home)).ok
    return result


def truncations(
    template: Path, root: Path, trials: int, rng: random.Random, *, drop: tuple[str, ...]
) -> DamageResult:
    """Cut a ledger at a random byte; also delete its anchor and/or the manifest (`drop`)."""
    name = "truncation" + ("" if not drop else " without " + " and ".join(drop))
    result = DamageResult(name)
    for number in range(trials):
        home = copy(template, root / f"cut-{'-'.join(drop)}-{number}")
        ledger = _pick(rng, home)
        data = ledger.read_bytes()
        at = rng.randrange(len(data))
        ledger.write_bytes(data[:at])
        _drop(home, ledger, drop)
        result.trials += 1
        if _detected(home):
            result.detected += 1
        elif _invisible_cut(drop):
            result.by_design += 1
        else:
            result.undetected.append(f"{ledger.name}@{at}")
    return result


def _invisible_cut(drop: tuple[str, ...]) -> bool:
    """A cut made together with deleting every record of where the ledger ended: its anchor
    and its manifest entry. What is left is a shorter chain (and perhaps a line cut short,
    which looks like an append a crash interrupted): nothing says more was committed."""
    return "anchor" in drop and ("manifest" in drop or "manifest entry" in drop)


def deletions(
    template: Path, root: Path, trials: int, rng: random.Random, *, drop: tuple[str, ...]
) -> DamageResult:
    name = "deleted ledger" + ("" if not drop else " and " + " and ".join(drop))
    result = DamageResult(name)
    for number in range(trials):
        home = copy(template, root / f"del-{'-'.join(drop)}-{number}")
        ledger = rng.choice(_ledgers(home))
        ledger.unlink()
        _drop(home, ledger, ("anchor", *drop))
        result.trials += 1
        if _detected(home):
            result.detected += 1
        elif "governance" in drop or ledger.name == "governance.jsonl":
            result.by_design += 1  # deleted with every record of it
        else:
            result.undetected.append(ledger.name)
    return result


def _drop(home: Path, ledger: Path, what: tuple[str, ...]) -> None:
    if "anchor" in what:
        ledger.with_name(ledger.name + ".anchor").unlink(missing_ok=True)
    manifest = home / "HOT" / "ledger" / "manifest.json"
    if "manifest" in what:
        manifest.unlink(missing_ok=True)
    if "manifest entry" in what and manifest.exists():
        body = json.loads(manifest.read_text())
        body["ledgers"].pop(ledger.relative_to(home).as_posix(), None)
        manifest.write_text(json.dumps(body))
    if "governance" in what:
        (home / "HOT" / "ledger" / "governance.jsonl").unlink(missing_ok=True)

