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
- `is_follow_up`: is every sentence of it a question, or a request about the answer ("show
  me", "explain", "rewrite", "make it shorter"), apart from a short interjection ("OK.",
  "Thanks!")? Then it continues the conversation's last problem.

Statements, and tasks given as imperatives ("Write the migration step for …"), are neither:
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

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
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
_INTERJECTION_WORDS = 3
"""A sentence of at most this many words and no question ("OK.", "Got it, thanks!") is an
interjection: it neither opens a topic nor asks anything."""


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
    """Is every sentence a question or a request about the answer, bar short interjections?

    A message holding a statement ("Our status page shows the API as degraded. What should
    the update say?") is not: the statement may be a new problem, and it is judged by words.
    """
    if len(text) > _HEAD_CHARS:
        return False
    asked = False
    for match in _SENTENCE.finditer(text.strip().lower()):
        sentence = match.group().strip()
        words = _WORD.findall(sentence)
        if not words:
            continue
        if sentence.endswith("?") or _asks(words):
            asked = True
        elif len(words) > _INTERJECTION_WORDS:
            return False
    return asked


def _asks(words: list[str]) -> bool:
    """A sentence that opens (after "OK", "so", "now" …) as a question or a request."""
    start = 0
    while start < len(words) - 1 and words[start] in _LEADING:
        start += 1
    first = words[start]
    if first in _QUESTION_WORDS or first in _ASKING_VERBS:
        return True
    if first == "make" and start + 1 < len(words):
        rest = " ".join(words[start + 1 : start + 8])
        return words[start + 1] in _MAKE_OBJECT or _COMPARATIVE.search(rest) is not None
    return False
