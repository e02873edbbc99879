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
- `is_follow_up`: does no sentence of it bring something of its own? A question, a request
  about the answer ("show me", "make it shorter"), a report on what was tried or seen ("I
  restarted the service but nothing changed", "The logs say …", D61), a short reaction
  ("Still failing.") and a remark on the work at hand ("We run three app servers", "The bundle
  is about 12 MB", D62) follow the conversation's last problem. A sentence brings something of
  its own (`_introduces`) when it states a need or a task ("I need to …", "Write a script that
  …", "the rollout needs a plan"), an undertaking ("I'm building …"), a subject of the
  person's ("Our Redis instance …", "My bike …") or something wrong ("The invoice totals look
  wrong"); such a message is judged by its words, and is a topic of its own when nothing
  matches.

Pure and deterministic (D12).
"""

from __future__ import annotations

import re
from functools import lru_cache

from hrm.reading.rules._engine import TASK_VERBS
from hrm.reading.rules.preference_scope import INTERROGATIVES, is_past_form
from hrm.reading.sentences import sentence_spans
from hrm.reading.types import Cues

__all__ = [
    "FILLER_WORDS",
    "cues_of",
    "filler_pattern",
    "is_closing",
    "is_follow_up",
    "opens_new_topic",
    "opens_on_own_subject",
    "remarks_on_own_subject",
    "without_announcement",
    "without_lead_in",
    "without_opening",
    "without_trailing_aside",
]

_HEAD_CHARS = 2000
"""A follow-up is a short message; a longer one (a paste) is not one, and is not read."""

_NEW_TOPIC = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|also|and|oh|btw|sorry|stop|wait|now)\W+)?"
    r"(?:(?:completely|totally|entirely)\s+)?(?:"
    r"unrelated|(?:on an?|in an?)\s+(?:other|different|unrelated|separate)\s+(?:note|topic|matter)"
    r"|on another (?:note|topic|matter)|(?:a\s+)?different (?:topic|question|subject|matter)"
    r"|(?:a\s+)?new (?:topic|task|question|subject|problem|issue)|separately"
    r"|changing (?:the )?subject"
    r"|(?:a\s+)?quick (?:question|one|aside)|off[- ]topic"
    r"|(?:another|(?:one\s+)?other) (?:thing|question|topic|task)"
    r"|by the way|btw|side (?:question|note)|(?:a\s+)?separate (?:question|issue|topic|thing)"
    r"|something (?:else|different)|switching (?:gears|topics?)"
    r")\b",
    re.IGNORECASE,
)
"""How people announce that what follows is about something else, at a message's start."""

_WORD = re.compile(r"[a-z0-9'][a-z0-9'_-]*")


def _sentences(text: str) -> list[str]:
    """The sentences of `text` as every reader splits them (`hrm.reading.sentences`): after an
    end mark and a space ("/var/log/app/*.log" is one sentence), not after "Mr." (D429)."""
    return [text[start:end] for start, end in sentence_spans(text, len(text))]


_MORE_QUESTION_TEXT = """
wasn't weren't haven't hasn't any anything whats what's hows how's whys why's wheres where's
"""
_QUESTION_WORDS = INTERROGATIVES | frozenset(_MORE_QUESTION_TEXT.split())
"""First words of a question that may lack its question mark ("would chunks work")."""
_LEADING_TEXT = """
ok okay so and also then now but right alright great cool thanks hmm well please oh hey yes
no sure fine hi hello hiya nvm nevermind
"""
_LEADING = frozenset(_LEADING_TEXT.split())
"""Words that may precede a follow-up's first word ("OK so how …", "Now tighten …")."""
_LEAD_IN = re.compile(
    r"^(?:(?:" + "|".join(sorted(_LEADING, key=len, reverse=True)) + r")\b[\s,;:!.\-–—]*)+",
    re.IGNORECASE,
)
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
_OWNERS = frozenset(("our", "my"))
"""A sentence about "our X" or "my X" brings a subject of the person's ("Our staging Postgres is
out of disk space again", "My bike makes a clicking noise")."""
_PROGRESSIVE_SUBJECTS = frozenset(("i'm", "we're"))
_NEEDS = frozenset(("need", "needs", "want", "must", "have", "wanna", "gotta", "like", "plan"))
"""After "I"/"we": a need or a task ("I need to", "we have to", "I'd like to")."""
_CONTINUING = frozenset(("still", "same", "too"))
"""An undertaking or a subject said with these continues one ("I'm still getting 502s", "My
income varies a bit each month too"); "also" may add a new one ("Also, my sourdough …")."""
_TASK_VERBS = TASK_VERBS
"""Opening a sentence, and referring to nothing said: a task ("Write a script that renames the
stale branches"); "Add tests for it" and "Now add a retry" continue one."""
_CONTINUING_LEADS = frozenset(("now", "also", "and", "then", "so", "but", "next"))
"""Before a task verb, these continue the work at hand ("Now add a retry to the upload")."""
_OBJECTS_SAID = frozenset(("it", "them", "its"))
_SEQUENCE = frozenset(("first", "someday", "later", "eventually", "tomorrow"))
_NEED_WORDS = frozenset(("need", "needs", "require", "requires"))
"""A need said of anything ("the control plane rollout needs a plan") is work brought."""
_TROUBLE_TEXT = """
wrong broken broke bug bugs buggy crash crashes crashed crashing fail fails failing failed
error errors errored stuck hang hangs hanging froze freezes freezing leak leaks leaking corrupt
corrupted missing outage slow break breaks
"""
_TROUBLE = frozenset(_TROUBLE_TEXT.split())
"""Words of something wrong: a statement of one that is no report on the work at hand brings
a problem ("The invoice totals look wrong for the billing migration")."""
_TROUBLE_NAMES = frozenset(
    ("report", "reports", "reporting", "reporter", "handling", "handler", "handlers", "message",
     "messages", "tracker", "tracking", "page", "pages", "code", "codes", "bounty", "fix", "fixes")
)  # fmt: skip
"""After a trouble word, a noun it modifies: the two name a thing ("crash reports")."""
_OUTPUTS = frozenset(
    ("logs", "log", "error", "errors", "output", "trace", "traceback", "message", "console",
     "stack", "result", "results", "response", "status", "exit")
)  # fmt: skip
_SAYING = frozenset(
    ("says", "said", "shows", "showed", "returns", "returned", "reports", "reported", "throws",
     "threw", "prints", "printed", "complains", "complained", "gives", "gave")
)  # fmt: skip
"""A thing or a service telling what it sees, two words in at most ("Stripe says …", "the
stripe dashboard shows …"): a report on the work at hand (D461)."""
_WANTS_SAID = _NEED_WORDS | {"want", "wants", "wanted", "asks", "asked"}
"""What makes "X said …" a wish of someone's, which may be new work, not a report."""
_SHOWING = frozenset(
    ("say", "says", "said", "show", "shows", "showed", "print", "prints", "printed", "is", "are",
     "was", "were", "reads", "contains", "code")
)  # fmt: skip


_CLOSING_SENTENCE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|alright|all right|great|perfect|cool|awesome|nice|so|well|anyway)\W+)*"
    r"(?:thanks?(?: you)?(?: so much| a lot| again)?|thx|ty|cheers|bye|goodbye|good ?night"
    r"|see (?:you|ya)(?: (?:later|tomorrow|soon|next week|on monday))?"
    r"|(?:talk|speak) (?:to you )?(?:later|tomorrow|soon|next week|on monday)"
    r"|(?:that'?s|that is|this is) (?:all|it|enough)(?: (?:for (?:today|now|tonight)|i need"
    r"|from me|thanks?))?"
    r"|(?:i'?m|i am|we'?re|we are) (?:done|finished|off|out)(?: (?:for (?:today|now|tonight"
    r"|the day)|here))?"
    r"|(?:let'?s|we can|we'?ll) (?:stop|call it a day|pick (?:it|this) up (?:tomorrow|later))"
    r"(?: (?:here|there|for (?:today|now)))?"
    r"|(?:have a )?(?:good|nice|great) (?:night|day|evening|weekend)"
    r"|(?:that|this|it|you) (?:helped|was helpful|were helpful)(?: a lot| a ton)?"
    r"|ok(?:ay)?|alright|all right|great|perfect|cool|awesome|nice|phew)"
    r"\W*$",
    re.IGNORECASE,
)
"""One part of a closing (`is_closing` splits at stops and commas): "thanks", "that's all for
today", "talk to you tomorrow"."""
_CLOSING_PARTS = re.compile(r"(?<=[.!?])\s+|,\s*|\n+")
_CLOSING_CHARS = 200
"""A goodbye is short; a longer message says something besides."""
_CLOSING_TEXT = """
ok okay alright all right great perfect cool awesome nice so well anyway thanks thank you much
a lot again thx ty cheers bye goodbye good night goodnight see ya later tomorrow soon next week
on monday talk to speak that's thats that is this it enough for today now tonight i need from
me i'm im am we're we are done finished off out the day here let's lets can we'll stop call pick
up there have evening weekend helped was were helpful ton phew
"""
_CLOSING_WORDS = frozenset(_CLOSING_TEXT.split())
"""Every word a closing may say: a message with any other word is none (one set test a turn,
before the pattern)."""


def is_closing(text: str) -> bool:
    """Is the whole message a thanks or a goodbye ("Thanks, that's all for today.", "Ok, I'm
    done for today. Thanks!")? It ends the exchange and brings no problem: "That's all for
    today" was titled as one, and its "today" read as a deadline."""
    if len(text) > _CLOSING_CHARS or "?" in text:  # a question asks for more
        return False
    if not _CLOSING_WORDS.issuperset(_WORD.findall(text.lower())):
        return False
    parts = [part for part in _CLOSING_PARTS.split(text.strip()) if part.strip()]
    return bool(parts) and all(_CLOSING_SENTENCE.match(part) for part in parts)


def opens_new_topic(text: str) -> bool:
    """Does the message say it turns to something else ("Unrelated: …"), at its start or at
    the start of a sentence after a word on the last answer ("ok I'll try the compost tea.
    Different topic: …", D441)?"""
    return _announcement(text) is not None


_ANNOUNCE_REACH = 200
"""Characters of a message in which a sentence may announce a new topic."""


def _announcement(text: str) -> tuple[str, re.Match[str]] | None:
    """The text from the sentence that announces a new topic, with the announcement's match."""
    head = text[:_ANNOUNCE_REACH]
    found = _NEW_TOPIC.match(head)
    if found is not None:
        return head, found
    for start, _ in sentence_spans(head, len(head))[1:]:
        found = _NEW_TOPIC.match(head[start:])
        if found is not None:
            return head[start:], found
    return None


_AFTER_ANNOUNCEMENT = re.compile(
    r"^[\s:;,.!?\-–—]*(?:(?:question|note|topic|thing|issue|task|aside)\b[\s:;,.!?\-–—]*)?"
    r"(?:but\b[\s,]*)?",
    re.IGNORECASE,
)
"""What may follow an announcement before the subject: "Unrelated question: …", "…, but"."""


def without_announcement(text: str) -> str:
    """`text` without its opening "Unrelated: " ("Quick question, but …"), for a title.

    A problem titled "Unrelated: how do I rename a git branch?" names the announcement, and
    `hrm chat` then offered "switch to Unrelated rename git". The rest, capitalised; the text
    as it was when it announces nothing or is nothing but the announcement.
    """
    announced = _announcement(text)
    if announced is None:
        return text
    head, match = announced
    rest = text[len(text[:_ANNOUNCE_REACH]) - len(head) + match.end() :]
    rest = _AFTER_ANNOUNCEMENT.sub("", rest, count=1)
    return rest[:1].upper() + rest[1:] if rest.strip() else text


_FILLER_TEXT = """
ok okay so and also then now but right alright well oh hey hmm actually anyway btw
"""
FILLER_WORDS = ("by the way", *_FILLER_TEXT.split())
"""Words that open a sentence without saying anything of it ("OK so", "Actually,"). Not the
answers and moves a sentence may be ("no, forget it", "thanks, bye"), nor "please"."""


def filler_pattern(extra: tuple[str, ...] = ()) -> re.Pattern[str]:
    """A run of `FILLER_WORDS` (and `extra` phrases) at a sentence's start, with what
    separates them: one list, read the same way by every reader that leaves filler out."""
    words = sorted([*FILLER_WORDS, *extra], key=len, reverse=True)
    return re.compile(
        r"^\W*(?:(?:" + "|".join(words) + r")\b(?![-'’])[\s,;:.!\-–—]*)+", re.IGNORECASE
    )


_FILLER = filler_pattern()
_TRAILING_ASIDE = re.compile(
    r"(?:[\s,;:\-–—(]*\b(?:btw|fyi|fwiw|tbh|lol|haha+)"
    r"|\s*[,;:\-–—(]+\s*(?:by the way|just so you know|for the record|for your information))"
    r"\W*$",
    re.IGNORECASE,
)
"""An aside a sentence ends on: a short one after a space or a mark ("… btw"), a phrase only
after a mark ("…, just so you know"), since "the band is called For the Record" names one."""
_ASIDE_TAIL_CHARS = 48
"""An aside and the marks before it fit in a sentence's last 48 characters."""


def without_trailing_aside(text: str) -> str:
    """`text` without an aside it ends on ("we're vegetarian btw", "I prefer tabs, just so you
    know"): a kept statement keeps what it states; as it was when nothing else is left."""
    # Only the tail can hold it: searched from every position of a long run of marks, the
    # pattern would retry the run from each (quadratic).
    cut = max(0, len(text) - _ASIDE_TAIL_CHARS)
    rest = text[:cut] + _TRAILING_ASIDE.sub("", text[cut:])
    return rest if rest.strip() else text


def without_opening(text: str) -> str:
    """`text` without what opens it before what it says: an announcement ("Unrelated: …",
    "Quick question, …") and filler ("OK so …", "Actually, …"); as it was when nothing is
    left. What a tier that compares sentences with examples reads, and what a kept statement
    keeps: "Unrelated: pls remember that the staging box is stg-04" keeps "the staging box is
    stg-04", and "ok forget the password I just gave you" is read as the forget request its
    examples hold (D406)."""
    rest = without_announcement(text)
    plain = _FILLER.sub("", rest, count=1)
    return plain if plain.strip() else rest


def without_lead_in(text: str) -> str:
    """`text` without the words it opens with before its subject ("Also, my laptop's …",
    "OK so now the build fails"), capitalised; as it was when nothing else is left."""
    rest = _LEAD_IN.sub("", text, count=1)
    return rest[:1].upper() + rest[1:] if rest.strip() else text


def is_follow_up(text: str) -> bool:
    """Does every sentence follow the conversation: a question, a request about the answer, a
    report, a short reaction, or a remark that brings nothing of its own (`_introduces`)?

    A message with one sentence that brings something ("Our status page shows the API as
    degraded. What should the update say?") is not: it may be a new problem, and it is judged
    by its words.
    """
    if len(text) > _HEAD_CHARS:
        return False
    moved = False
    for sentence in _sentences(text.strip().lower()):
        words = _WORD.findall(sentence)
        if not words:
            continue
        if not _follows(sentence, words) and _introduces(words):
            return False
        moved = True
    return moved


def _follows(sentence: str, words: list[str]) -> bool:
    """A question, a short reaction, a request or a report: the conversation's next move."""
    return (
        sentence.rstrip().endswith("?")
        or len(words) <= _REACTION_WORDS
        or _asks(words)
        or _reports(words)
    )


def _introduces(words: list[str]) -> bool:
    """A statement that brings something of its own (D62): a need or a task ("I need to …",
    "Write a script that …"), an undertaking ("I'm building …", "We're designing …"), a
    subject of the person's ("Our Redis instance …", "My bike …"), or something wrong ("The
    invoice totals look wrong …"). Any other statement ("We run three app servers", "The
    bundle is about 12 MB") tells more about the work at hand."""
    own = _own_subject(words)
    if own is not None:
        return own
    start = _after_leading(words)
    first = words[start]
    rest = words[start + 1 :]
    if first in _REPORTERS:
        if rest[:2] == ["have", "to"]:  # "have" is skipped below as in "I have restarted it"
            return True  # "I have to renew my passport"
        verbs = [w for w in rest if w not in _REPORT_ADVERBS][:2]
        if verbs[:1] and verbs[0] in _NEEDS:
            # "I'd like to …" is a need; "I like that idea" is a reaction.
            return verbs[0] not in ("have", "like") or verbs[1:2] == ["to"]
    lead = words[:start]
    if first in _TASK_VERBS and _CONTINUING_LEADS.isdisjoint(lead):
        # "Write a script that …", "Someday rename the docs folder"; not "fix it", "now add …"
        return not (rest[:1] and rest[0] in _REFERRING) and _OBJECTS_SAID.isdisjoint(rest)
    if first in _SEQUENCE and rest[:1] and rest[0] in _TASK_VERBS:
        return True  # "First refactor the parser module, then update the tests"
    return _troubled(words) or not _NEED_WORDS.isdisjoint(words)


def _own_subject(words: list[str]) -> bool | None:
    """Does the sentence open on a subject of the person's ("My laptop's battery …", "Our
    Redis instance …") or an undertaking ("I'm building …", "We are designing …")?

    None when it opens on neither; False when it says it continues one ("I'm still getting
    502s", "same", "too").
    """
    start = _after_leading(words)
    first = words[start]
    if first in _OWNERS:
        return _CONTINUING.isdisjoint(words)
    if first not in _REPORTERS and first not in _PROGRESSIVE_SUBJECTS:
        return None
    verbs = [w for w in words[start + 1 :] if w not in _REPORT_ADVERBS][:2]
    if first in _PROGRESSIVE_SUBJECTS and verbs[:1] and verbs[0].endswith("ing"):
        return _CONTINUING.isdisjoint(words)
    if verbs[:1] and verbs[0] in ("am", "are") and verbs[1:2] and verbs[1].endswith("ing"):
        return _CONTINUING.isdisjoint(words)
    return None


def opens_on_own_subject(text: str) -> bool:
    """Does a sentence of `text` bring a subject of the person's own ("Also, my laptop's
    battery drains really fast, any tips?")?

    Such a question follows the conversation more often than not ("My replica is on a
    different host, does it need upgrading first?"): words cannot tell the two apart, so the
    arbiter asks a sentence model when one is installed (D68).
    """
    for sentence in _sentences(text[:_HEAD_CHARS].strip().lower()):
        words = _WORD.findall(sentence)
        if words and _own_subject(words):
            return True
    return False


def remarks_on_own_subject(text: str) -> bool:
    """Does `text` follow the conversation but for remarks on subjects of the person's own
    ("Our budget is about 5000 euros excluding flights", "My partner is vegetarian")?

    Such a remark names nothing wrong and no need or task: it may be a detail of the work at
    hand or the start of something else ("Our Redis instance keeps evicting keys"), and words
    cannot tell which, so the arbiter asks a sentence model when one is installed (D79).
    """
    if len(text) > _HEAD_CHARS:
        return False
    lower = text.lower()
    if "our " not in lower and "my " not in lower:
        return False  # most messages: no subject of one's own to remark on
    remarked = False
    for sentence in _sentences(lower.strip()):
        words = _WORD.findall(sentence)
        if not words:
            continue
        if _follows(sentence, words):
            continue
        if _remark(words):
            remarked = True
        elif _introduces(words):
            return False
    return remarked


def _remark(words: list[str]) -> bool:
    """A statement about "our X" / "my X" that names nothing wrong and no need or task."""
    start = _after_leading(words)
    return (
        words[start] in _OWNERS
        and bool(_own_subject(words))
        and not _troubled(words)
        and not _wants(words)
    )


_WANTING = (_NEEDS | _NEED_WORDS | {"wants"}) - {"have"}
"""A need or a want said anywhere in a remark ("My team wants to move the offsite") makes it
work brought, not a detail."""


def _wants(words: list[str]) -> bool:
    """A need or a want anywhere in `words`; "have" only as "have to" ("my name is Priya and I
    have 3 years of experience" has something, it needs nothing, D417)."""
    if not _WANTING.isdisjoint(words):
        return True
    return any(
        word in ("have", "has", "had") and words[i + 1 : i + 2] == ["to"]
        for i, word in enumerate(words)
    )


def _troubled(words: list[str]) -> bool:
    """Does a word of something wrong occur, other than as a modifier ("crash reports", "error
    handling", "bug tracker" name things, not trouble)?"""
    return any(
        word in _TROUBLE and (i + 1 == len(words) or words[i + 1] not in _TROUBLE_NAMES)
        for i, word in enumerate(words)
    )


def reports_on_the_work(text: str) -> bool:
    """Does `text` open by reporting on the work at hand (`_reports`): "it was the wrong user
    crontab", "I restarted it but nothing changed"?"""
    words = _WORD.findall(text[:_HEAD_CHARS].lower())
    return bool(words) and _reports(words)


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
    if rest[:1] and rest[0] in _BACK_REFERENCES and is_past_form(first):
        return True  # "Fixed it — the signature check used the wrong secret", "Tried that"
    if first == "here's" or (first == "here" and rest[:1] in (["is"], ["are"])):
        return True
    if first in _REPORTERS:
        return is_past_form(next((w for w in rest if w not in _REPORT_ADVERBS), ""))
    if first == "the" and _refers_back(rest):
        return True  # "The tests for it are failing now": the work at hand's, said of it
    if first in _OUTPUTS and rest[:1] and rest[0] in _SHOWING:
        return True  # "error is: …", "logs show a 403"
    if (
        first not in _OWNERS and first not in _REPORTERS
        and not _SAYING.isdisjoint(rest[:2])
        and _WANTS_SAID.isdisjoint(rest)
    ):
        # "Stripe says signature verification failed", "the dashboard shows …"; not "John
        # said he wants a new landing page", a need of someone's
        return True
    return (
        first == "the"
        and bool(rest)
        and rest[0] in _OUTPUTS
        and any(w in _SHOWING for w in rest[1:4])
    )


def _refers_back(words: list[str]) -> bool:
    """Does the phrase name what was being talked about: "for it", "of this", "in them"?"""
    return any(
        word in _BACK_REFERENCES and words[i - 1] in _OF_PREPOSITIONS
        for i, word in enumerate(words) if i
    )


_BACK_REFERENCES = frozenset(("it", "this", "that", "them"))
_OF_PREPOSITIONS = frozenset(("for", "of", "in", "on", "with", "behind", "from", "to"))


def _after_leading(words: list[str]) -> int:
    """Where a sentence starts after "OK", "so", "now" …"""
    start = 0
    while start < len(words) - 1 and (
        words[start] in _LEADING or words[start : start + 2] == ["never", "mind"]
    ):
        start += 2 if words[start] == "never" else 1
    return min(start, len(words) - 1)


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


# ── as cues (the rules tier) ─────────────────────────────────────────────────


@lru_cache(maxsize=64)
def cues_of(rest: str) -> Cues:
    """What arbitration weighs besides similarity, read from what is left of the person's
    words once the commands are out (`Reading.rest`); the arbiter reads a text it derives
    itself (what follows a set-aside) through this same function."""
    if not rest.strip():
        return Cues()
    from hrm.reading.rules.focus import asks_to_resume, read_focus_request, read_set_aside

    words = _WORD.findall(rest[:_HEAD_CHARS].lower())
    focus = read_focus_request(rest)
    aside = read_set_aside(rest)
    return Cues(
        follow_up=is_follow_up(rest),
        report=bool(words) and _reports(words),
        opens_new_topic=opens_new_topic(rest),
        own_subject=opens_on_own_subject(rest),
        remark=remarks_on_own_subject(rest),
        closing=is_closing(rest),
        resume=asks_to_resume(rest),
        focus=focus is not None,
        focus_turns=focus.turns if focus is not None else None,
        focus_topic=focus.description if focus is not None else "",
        aside=aside.aside if aside is not None else None,
        aside_rest=aside.rest if aside is not None else "",
    )
