"""Is an input the next move in the conversation, or does it open a topic of its own?

A problem, in 001 §12's sense, is a piece of work a person brings: "Our pods keep getting
OOMKilled in staging", "I also need to write the quarterly report by Friday". Between such
statements people mostly ask about the work at hand ("Should I set -Xmx explicitly as well?")
or ask for more of the answer they just had ("Show me the upload function", "Make the opening
paragraph less generic"), usually without repeating a word of the problem's title. Read only
by its words, each such message looked like a new topic: on a set of eight realistic
conversations, 41 of 62 turns went to the wrong problem and `/problems` held three times the
problems the people had raised (D59). Arbitration therefore asks two questions of an input
that matched no problem by name or by words:

- `opens_new_topic`: does it say it is about something else ("Unrelated: …", "Quick
  question, …", "New task: …", "On another note, …")? Then it is a new problem, whatever its
  form.
- `is_follow_up`: is every sentence of it a question, a request about the answer ("show
  me", "explain", "rewrite", "make it shorter"), a report on the work at hand ("I restarted the
  service but nothing changed", "The logs say …", "That fixed it", D61) or a short reaction
  ("OK.", "Still failing.")? Then it continues the conversation's last problem.

Other statements, and tasks given as imperatives ("Write the migration step for …"), are neither:
they are matched by words as before, and a topic of their own when nothing matches. Pure and
deterministic (D12).
"""

from __future__ import annotations

import re

__all__ = ["is_follow_up", "opens_new_topic", "without_announcement"]

_HEAD_CHARS = 2000
"""A follow-up is a short message; a longer one (a paste) is not one, and is not read."""

_NEW_TOPIC = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|also|and|oh|btw)\W+)?(?:"
    r"unrelated|(?:on an?|in an?)\s+(?:other|different|unrelated|separate)\s+(?:note|topic|matter)"
    r"|on another (?:note|topic|matter)|(?:a\s+)?different (?:topic|question|subject|matter)"
    r"|(?:a\s+)?new (?:topic|task|question|subject|problem|issue)|separately"
    r"|changing (?:the )?subject"
    r"|(?:a\s+)?quick (?:question|one|aside)|off[- ]topic|another (?:thing|question|topic|task)"
    r"|by the way|btw|side (?:question|note)|(?:a\s+)?separate (?:question|issue|topic|thing)"
    r"|something (?:else|different)|switching (?:gears|topics?)"
    r")\b",
    re.IGNORECASE,
)
"""How people announce that what follows is about something else, at a message's start."""

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
"""Between sentences: after an end mark and a space ("/var/log/app/*.log" is one sentence)."""
_WORD = re.compile(r"[a-z0-9'][a-z0-9'_-]*")
_QUESTION_TEXT = """
how what why when where which who whom whose is are am was were do does did can could would
will should shall may might must have has had isn't aren't wasn't weren't don't doesn't didn't
can't couldn't wouldn't won't shouldn't haven't hasn't any anything whats what's hows how's
whys why's wheres where's
"""
_QUESTION_WORDS = frozenset(_QUESTION_TEXT.split())
"""First words of a question that may lack its question mark ("would chunks work")."""
_LEADING_TEXT = """
ok okay so and also then now but right alright great cool thanks hmm well please oh hey yes
no sure fine
"""
_LEADING = frozenset(_LEADING_TEXT.split())
"""Words that may precede a follow-up's first word ("OK so how …", "Now tighten …")."""
_ASKING_TEXT = """
show tell give walk explain describe summarise summarize recap rewrite rephrase reword shorten
tighten simplify expand elaborate clarify compare list suggest recommend continue illustrate
sketch demonstrate
"""
_ASKING_VERBS = frozenset(_ASKING_TEXT.split())
"""Requests for more of, or another form of, the answer just given ("Show me the model")."""
_MAKE_OBJECT = frozenset(("it", "this", "that", "them", "these", "those"))
_COMPARATIVE = re.compile(
    r"\b(?:less|more|shorter|longer|clearer|simpler|better|tighter|punchier|friendlier|"
    r"smaller|bigger|faster|warmer|formal|casual)\b"
)
_REACTION_WORDS = 3
"""A sentence of at most this many words ("OK.", "Still failing.", "Same error.") reacts to the
answer; a short new problem ("Production is down!", "Login is broken") carries an emergency or
urgency marker, which arbitration weighs first."""
_REFERRING_TEXT = """
it it's its that that's this these those they they're them he she same still nothing neither
"""
_REFERRING = frozenset(_REFERRING_TEXT.split())
"""Opening words that refer back to what was just said ("It listens on port 8000", "That
fixed it", "They only need the reporting schema")."""
_REPORTERS = frozenset(("i", "we", "i've", "we've", "i'd", "we'd"))
_REPORT_ADVERBS = frozenset(
    ("just", "also", "already", "then", "still", "have", "had", "now", "even", "finally",
     "actually", "again", "both", "all")
)  # fmt: skip
_PAST_TEXT = """
ran did got saw found made set put went read wrote built took kept left gave began came chose
felt forgot heard hit knew lost meant paid quit rebuilt reran redid reset rewrote said sent shut
spent told thought understood been seen done gone taken written given upgraded
"""
_PAST_FORMS = frozenset(_PAST_TEXT.split())
"""Irregular past forms; regular ones end in "-ed" ("I restarted", "we added")."""
_OUTPUTS = frozenset(
    ("logs", "log", "error", "errors", "output", "trace", "traceback", "message", "console",
     "stack", "result", "results", "response", "status", "exit")
)  # fmt: skip
_SHOWING = frozenset(
    ("say", "says", "said", "show", "shows", "showed", "print", "prints", "printed", "is", "are",
     "was", "were", "reads", "contains", "code")
)  # fmt: skip


def opens_new_topic(text: str) -> bool:
    """Does the message open by saying it is about something else ("Unrelated: …")?"""
    return _NEW_TOPIC.match(text[:200]) is not None


_AFTER_ANNOUNCEMENT = re.compile(r"^[\s:;,.!?\-–—]*(?:but\b[\s,]*)?", re.IGNORECASE)


def without_announcement(text: str) -> str:
    """`text` without its opening "Unrelated: " ("Quick question, but …"), for a title.

    A problem titled "Unrelated: how do I rename a git branch?" names the announcement, and
    `hrm chat` then offered "switch to Unrelated rename git". The rest, capitalised; the text
    as it was when it announces nothing or is nothing but the announcement.
    """
    match = _NEW_TOPIC.match(text[:200])
    if match is None:
        return text
    rest = text[match.end() :]
    rest = _AFTER_ANNOUNCEMENT.sub("", rest, count=1)
    return rest[:1].upper() + rest[1:] if rest.strip() else text


def is_follow_up(text: str) -> bool:
    """Is every sentence a question, a request about the answer, a report on the work at hand
    or a short reaction?

    A message holding any other statement ("Our status page shows the API as degraded. What
    should the update say?") is not: the statement may be a new problem, and it is judged by
    words.
    """
    if len(text) > _HEAD_CHARS:
        return False
    moved = False
    for sentence in _SENTENCE_BREAK.split(text.strip().lower()):
        words = _WORD.findall(sentence)
        if not words:
            continue
        if not (
            sentence.rstrip().endswith("?")
            or len(words) <= _REACTION_WORDS
            or _asks(words)
            or _reports(words)
        ):
            return False
        moved = True
    return moved


def _reports(words: list[str]) -> bool:
    """A sentence that reports on the work at hand: what was tried or seen ("I restarted the
    upstream service but nothing changed", "It listens on port 8000", "The logs say …",
    "Here is my config: …"). A need ("I need to …") or a new subject ("Our CI pipeline …") is
    no report."""
    start = _after_leading(words)
    first = words[start]
    rest = words[start + 1 :]
    if first in _REFERRING:
        return True
    if first == "here's" or (first == "here" and rest[:1] in (["is"], ["are"])):
        return True
    if first in _REPORTERS:
        verb = next((w for w in rest if w not in _REPORT_ADVERBS), "")
        return verb in _PAST_FORMS or (len(verb) > 4 and verb.endswith("ed"))
    return (
        first == "the"
        and bool(rest)
        and rest[0] in _OUTPUTS
        and any(w in _SHOWING for w in rest[1:4])
    )


def _after_leading(words: list[str]) -> int:
    """Where a sentence starts after "OK", "so", "now" …"""
    start = 0
    while start < len(words) - 1 and words[start] in _LEADING:
        start += 1
    return start


def _asks(words: list[str]) -> bool:
    """A sentence that opens (after "OK", "so", "now" …) as a question or a request."""
    start = _after_leading(words)
    first = words[start]
    if first in _QUESTION_WORDS or first in _ASKING_VERBS:
        return True
    if first == "make" and start + 1 < len(words):
        rest = " ".join(words[start + 1 : start + 8])
        return words[start + 1] in _MAKE_OBJECT or _COMPARATIVE.search(rest) is not None
    return False
