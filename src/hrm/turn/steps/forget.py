"""Step ``forget``: read a request to forget what hrm keeps (D77) before anything else reads
the message, so that "Forget that I prefer tabs" states no preference. "Forget that" means what
the turn before kept, and after nothing kept it is not about memory; "Forget that I asked, …"
is a figure of speech unless something kept says it (D83). The request is acted on in step
``memory``; here it is only left out of what arbitration weighs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.memory_requests import kept_matching, read_forget_request
from hrm.turn.preferences import without_sentence

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext
    from hrm.turn.state import TurnState

__all__ = ["forget", "just_kept"]


def just_kept(state: TurnState, turn: int) -> str | None:
    """What "forget that" refers to: the key the turn just before kept, if it kept one."""
    kept = state.last_kept if isinstance(state.last_kept, dict) else {}
    return str(kept["key"]) if kept.get("key") and kept.get("turn") == turn - 1 else None


def forget(ctx: TurnContext) -> Outcome | None:
    ctx.just_kept = just_kept(ctx.state, ctx.record.turn)
    request = read_forget_request(ctx.said) if ctx.confirmation is None else None
    if request is not None and request.what is None and ctx.just_kept is None:
        request = None
    if (
        request is not None and not request.sure
        and not kept_matching(ctx.services.stack.canon(), request.what or "")
    ):
        request = None  # "Forget that I asked, …": nothing kept says it (D83)
    ctx.forget = request
    ctx.heard = ctx.turn_input
    if request is not None:
        ctx.heard = without_sentence(ctx.turn_input, request.clause)
        if ctx.heard is not ctx.turn_input:
            ctx.record.notes.append("the request to forget was left out of arbitration")
    return None
