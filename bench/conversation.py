"""A long conversation for the turn benchmarks: six kinds of message, their words drawn anew.

Why not six fixed messages in a loop: a kernel keeps small caches keyed by text (a title's
keywords, a line's stems, a claim's parse), and a benchmark that says the same six things two
thousand times lets every one of them hit, turn after turn. A person does not repeat
themselves like that. Here every question, task and request names its subject anew (a repo, a
table, a launch, a test, a decision), so nearly every message is new to the process; only the
preferences come from a short list, as a person restates the few they hold rather than
inventing a new one every sixth message (which would grow the canon without bound).

The shapes are those of the fixed list the earlier figures were measured on (a how-to, a
planning question, a task, a preference, a diagnosis, a summary), in the same order.
"""

from __future__ import annotations

import random

__all__ = ["WARM_UP", "conversation"]

WARM_UP = (
    "How do I rename a git branch?",
    "What should we check first for the billing launch?",
    "Write the migration step for the invoices table",
    "I prefer short answers with examples",
    "Why does the test suite fail on CI but not locally?",
    "Summarise what we decided about the cache layer",
)
"""The fixed six, said three times before measuring: they open the problem and the patterns."""

_VERBS = ("rename", "delete", "rebase", "squash", "tag", "revert", "stash", "merge",
          "cherry-pick", "bisect", "archive", "protect", "move", "mirror", "prune", "restore")
_OBJECTS = ("a git branch", "the release branch", "a remote branch", "the last three commits",
            "a merge commit", "the feature branch", "an old tag", "the main branch",
            "a forked branch", "the hotfix branch", "a stale branch", "the docs branch")
_PLACES = ("billing", "search", "payments", "onboarding", "reporting", "gateway", "mobile",
           "analytics", "inventory", "auth", "notifications", "checkout", "admin", "docs",
           "scheduler", "ledger", "exports", "pricing", "catalog", "support", "shipping",
           "identity", "webhooks", "metrics", "frontend")
_LAUNCHES = ("billing", "pricing page", "mobile app", "partner API", "search relaunch",
             "EU region", "checkout", "new onboarding", "reporting dashboard", "invoice export",
             "status page", "audit log", "referral programme", "dark mode", "SSO", "CSV import")
_WHEN = ("on Monday", "next week", "this sprint", "before the freeze", "for the beta",
         "for enterprise customers", "in staging", "after the migration", "for the pilot",
         "at month end", "in the APAC region", "with the design team", "before the audit")
_TABLES = ("invoices", "customers", "orders", "payments", "refunds", "subscriptions",
           "accounts", "audit_events", "sessions", "shipments", "products", "coupons",
           "tax_rates", "webhooks", "users", "teams", "addresses", "carts", "plans", "credits")
_CHANGES = ("adding a currency column", "dropping the legacy flag", "splitting the address field",
            "adding an index on created_at", "backfilling the status", "renaming the owner column",
            "adding a unique constraint", "moving notes to a new table", "widening the amount",
            "making the region nullable", "adding a foreign key to accounts")
_FAILING = ("test suite", "integration test", "lint step", "snapshot test", "build",
            "migration test", "API contract test", "date parsing test", "end-to-end run",
            "type check", "docs build", "coverage job", "fixture loader", "locale test")
_SINCE = ("", " since the upgrade", " after the rebase", " only on Fridays",
          " with the new runner", " in the nightly job", " on the ARM runners",
          " when run in parallel", " after the dependency bump")
_TOPICS = ("cache layer", "retry policy", "release cadence", "API versioning", "logging format",
           "on-call rota", "error budget", "schema naming", "feature flags", "queue backend",
           "rate limits", "backup schedule", "code review rules", "branch naming",
           "incident reviews", "deploy windows", "secrets rotation", "test data")
_PREFERENCES = (
    "I prefer short answers with examples",
    "I prefer answers that start with the command",
    "I prefer British spelling in documents",
    "I prefer tables when comparing options",
    "I prefer code in Python unless I say otherwise",
    "I prefer links to the official docs",
)


def conversation(seed: int, n: int) -> list[str]:
    """`n` messages in the fixed order of the six shapes; the same `seed` says the same ones."""
    rng = random.Random(seed)
    pick = rng.choice
    messages: list[str] = []
    for i in range(n):
        shape = i % 6
        if shape == 0:
            text = f"How do I {pick(_VERBS)} {pick(_OBJECTS)} in the {pick(_PLACES)} repo?"
        elif shape == 1:
            text = (f"What should we check first for the {pick(_LAUNCHES)} launch "
                    f"{pick(_WHEN)}?")
        elif shape == 2:
            text = (f"Write the migration step for the {pick(_TABLES)} table, "
                    f"{pick(_CHANGES)}, in the {pick(_PLACES)} service")
        elif shape == 3:
            text = pick(_PREFERENCES)
        elif shape == 4:
            text = (f"Why does the {pick(_FAILING)} fail on CI but not locally in the "
                    f"{pick(_PLACES)} repo{pick(_SINCE)}?")
        else:
            text = f"Summarise what we decided about the {pick(_TOPICS)} for {pick(_PLACES)}"
        messages.append(text)
    return messages
