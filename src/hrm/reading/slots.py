"""What an intent names, read leniently once its kind is known: the slots of `Slots`.

The classifier tiers (nearest exemplars, a capable model) decide *what* a sentence asks; this
module reads *what it names*: how many turns ("the next two turns" → 2), what to forget ("forget
about my cat" → "my cat"; "forget that" → None, what was just kept), which problem ("mark the
webhook problem as done" → "webhook"), what was decided ("Postgres it is" → "Postgres"), a
preference's statement and hedge, a fact and its subject. Knowing the kind makes the reading
lenient: any number word near "turns" is the span, any noun phrase after the verb is the object.

Pure and linear: every pattern is anchored or scans once over at most `SLOT_CHARS` characters,
with bounded repetitions only; never raises (an unreadable sentence gives empty slots).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hrm.reading.guards import readable
from hrm.reading.rules.corrections import correction_slots
from hrm.reading.rules.cues import without_trailing_aside
from hrm.reading.rules.instructions import is_imperative
from hrm.reading.sentences import IN_SENTENCE
from hrm.reading.types import IntentKind, Slots

__all__ = ["SLOT_CHARS", "appositive_named", "number_value", "slots_for"]

SLOT_CHARS = 400
"""Characters of a sentence read for slots: a command is said in its first few hundred."""

_NUMBERS = {
    "one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "couple": 2, "pair": 2, "three": 3,
    "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}
_MAX_TURNS = 50
"""A longer span is no focus request hrm can hold (the commitment limit is far below)."""

_DETERMINERS = r"(?:the|my|our|this|that|these|those|his|her|their|your)"
_GENERIC_TAIL = frozenset(
    {"problem", "problems", "issue", "issues", "thing", "things", "stuff", "one", "ticket",
     "task", "question", "topic", "work", "item", "part", "bit", "business", "matter", "story"}
)
"""Words that end a reference without naming anything ("the webhook *problem*")."""
_DETERMINER_WORDS = frozenset(
    {"the", "my", "our", "this", "that", "these", "those", "his", "her", "their", "your", "a",
     "an"}
)
_VAGUE = frozenset(
    {"it", "this", "that", "them", "these", "those", "one", "bug", "problem", "issue", "thing",
     "stuff", "task", "ticket", "last", "previous", "earlier", "current", "other", "before",
     "what", "where", "everything", "all", "whole", "last one", "this one", "that one"}
)
"""References that name nothing on their own: the problem in focus, or what was just kept."""
_NO_CONTENT = _VAGUE | _DETERMINER_WORDS | frozenset(
    {"down", "up", "please", "pls", "now", "for", "me", "us", "here", "there", "so", "too",
     "also", "as", "well", "somewhere", "again", "later"}
)
"""What is left of "note *this down*", "save *that for me*": words that point at something
said elsewhere and state nothing to keep."""

# Fillers a statement may open with. "no" only before a pause ("no, metric please"): in "no
# more java examples" it is the statement itself, and stripping it says the opposite.
_LEAD = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|also|but|hey|oh|well|actually|alright|right|pls|please|plz"
    r"|btw|fyi|hmm+|no(?=\s*[,;:.!—–-])|wait|sorry|great|nice|cool|good|perfect|thanks"
    r"|on second thought"
    r"|by the way|just so you know|for the record|to be honest|honestly)\b[\s,;:.!—–-]*)+",
    re.IGNORECASE,
)
_WORD = re.compile(r"[0-9]+|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def slots_for(kind: IntentKind, sentence: str) -> Slots:
    """The slots of an intent of `kind` said in `sentence` (its person's words, trimmed)."""
    reader = _READERS.get(kind)
    if reader is None:
        return Slots()
    clean = readable(sentence[:SLOT_CHARS]).strip()
    if not clean:
        return Slots()
    return reader(clean)


def number_value(word: str) -> int | None:
    """A count written as digits or a number word ("3", "three", "couple") → int, else None."""
    low = word.lower()
    if low.isdigit() and len(low) <= 3:
        return int(low)
    return _NUMBERS.get(low)


# ── focus ────────────────────────────────────────────────────────────────────

_UNIT = re.compile(
    r"\b(?P<count>[0-9]{1,3}|[a-z]+)\s+(?:more\s+|other\s+)?"
    r"(?:turns?|messages?|msgs?|replies|reply|rounds?|exchanges?|answers?|prompts?)\b",
    re.IGNORECASE,
)
_NEXT_COUNT = re.compile(r"\bnext\s+(?P<count>[0-9]{1,3}|[a-z]+)\b", re.IGNORECASE)
_FOCUS_VERB = re.compile(
    r"\b(?:focus(?:ed|ing)?\s+(?:only\s+)?on|concentrat\w*\s+on|stay(?:ing)?\s+(?:focused\s+)?"
    r"(?:on|with)|stick(?:ing)?\s+(?:to|with)|keep(?:\s+focus)?\s+(?:on|to)|attention\s+on"
    r"|work(?:ing)?\s+(?:only\s+)?on|commit\s+to|devote\s+\w+\s+(?:\w+\s+)?to|talk\s+only\s+"
    r"about|only\s+talk\s+about|give\s+|only(?:\s+do)?|just)\s+"
    r"(?P<topic>[^,.;:!?\n]{1,80})",
    re.IGNORECASE,
)
_FOCUS_TOPIC_END = re.compile(
    r"\s+(?:for|during|in|over|till|until|the\s+next|next|now|today|please|pls)\b.*$",
    re.IGNORECASE,
)


def _focus(sentence: str) -> Slots:
    return Slots(turns=_turns(sentence), topic=_focus_topic(sentence))


def _turns(sentence: str) -> int | None:
    for pattern in (_UNIT, _NEXT_COUNT):
        for match in pattern.finditer(sentence):
            value = number_value(match.group("count"))
            if value is not None and 0 < value <= _MAX_TURNS:
                return value
    return None


def _focus_topic(sentence: str) -> str | None:
    match = _FOCUS_VERB.search(sentence)
    if match is None:
        return None
    topic = _FOCUS_TOPIC_END.sub("", match.group("topic"))
    topic = re.sub(r"^(?:your\s+full\s+attention\s+to|your\s+attention\s+to)\s+", "", topic)
    topic = re.sub(r"^(?:on|to|with|about)\s+", "", topic, flags=re.IGNORECASE)
    return _named(topic)


# ── forget and set aside ─────────────────────────────────────────────────────

_FORGET_VERB = re.compile(
    r"\b(?:forget|forgot|delete|remove|drop|erase|wipe|clear|scratch|disregard|ignore|undo"
    r"|unlearn|unsave|never\s*mind|stop\s+remembering|(?:don'?t|do\s+not)\s+(?:keep|store"
    r"|save|remember)|(?:no\s+need|(?:you\s+)?(?:don'?t|do\s+not)\s+need)\s+to\s+"
    r"(?:remember|keep|store))\b\s*",
    re.IGNORECASE,
)
_FORGET_FRAME = re.compile(
    r"^(?:about\s+)?(?:(?:what|everything|anything|all)\s+(?:(?:i|we)\s+(?:said|told\s+you|"
    r"mentioned|wrote|asked\s+you\s+to\s+remember)|you\s+(?:know|remember|stored|kept|have))"
    r"(?:\s+(?:about|regarding|on|re|of))?\s+"
    r"|(?:everything|anything|all)\s+(?:about|regarding|on)\s+"
    r"|(?:the|my|that|your|our)\s+(?:thing|preference|fact|note|memory|bit|part|stuff)s?"
    r"(?:\s+(?:i|we)\s+(?:said|told\s+you|mentioned))?\s+(?:for|about|on|that|regarding|of)\s+"
    r"|(?:my\s+)?(?:preference|fact|note)s?\s+(?:for|about|on|regarding|of)\s+)?",
    re.IGNORECASE,
)
_FORGET_TAIL = re.compile(
    r"\s*(?:\b(?:from|in|out\s+of)\s+(?:your\s+|the\s+)?(?:memory|memories|notes|canon)"
    r"|\b(?:any\s*more|anymore|please|pls|now|for\s+good|completely|entirely|again)"
    r"|\b(?:i|we)\s+(?:told\s+you|mentioned|gave\s+you|said)(?:\s+about)?)\b.*$",
    re.IGNORECASE,
)
_THAT = re.compile(
    r"^(?:that|this|it|them|those)(?:\s+(?:one|last\s+one|last\s+bit|bit|part|preference|"
    r"fact|note|please|pls|too|as\s+well|then|again))*\W*$",
    re.IGNORECASE,
)
_GUESS = re.compile(
    r"^that\s+(?:i|we|my|our|i'm|we're|i've|we've|i'd|we'd)\b", re.IGNORECASE
)


_APPOSITIVE = re.compile(
    r"^[^,;:—–]*[,;:—–]\s*(?:i\s+mean\s+)?(?:the\s+)?(?:thing|bit|part|stuff|note|one|fact|line"
    r"|preference)s?\s+(?:about|on|re|regarding|with|of)\s+(?P<what>" + IN_SENTENCE + r"{2,80})",
    re.IGNORECASE,
)
"""What "that" is said to be after it: "drop that from memory, the thing about charts"."""


def appositive_named(text: str) -> str | None:
    """What a "that" is named as further on in `text` ("…, the thing about charts" →
    "charts"), if the sentence names it so."""
    found = _APPOSITIVE.match(text)
    return _named(found.group("what").strip(" ,"), keep_tail=True) if found else None


def _forget(sentence: str) -> Slots:
    verb = _FORGET_VERB.search(sentence)
    if verb is None:
        return Slots()
    rest = _clause(sentence[verb.end() :])
    if _THAT.match(rest) or not rest:
        return Slots(what=appositive_named(sentence[verb.end() :]))
    guess = _GUESS.match(rest)
    if guess is not None:
        # "forget that I prefer tabs": acted on only if something kept says it (D83)
        return Slots(what=_named(rest[5:]) or None, sure=False)
    framed = _FORGET_FRAME.sub("", rest, count=1)
    what = _FORGET_TAIL.sub("", framed).strip(" ,")
    return Slots(what=_named(what, keep_tail=True))


_ASIDE_VERB = re.compile(
    r"\b(?:forget(?:\s+about)?|never\s*mind|leave|skip|put|set|drop|enough\s+(?:about|with)"
    r"|moving\s+on\s+from|move\s+on\s+from|park|pause|stop\s+with)\s+",
    re.IGNORECASE,
)
_ASIDE_TAIL = re.compile(
    r"\s+(?:for\s+(?:now|a\s+(?:sec|second|moment|minute|bit|while))|aside|a\s+moment"
    r"|a\s+sec|on\s+hold|thought|and\b).*$",
    re.IGNORECASE,
)
_BREAK = re.compile(r"[,.;:!?\n]|\s+(?:and|but)\s+|\s+[—–-]\s+")


def _set_aside(sentence: str) -> Slots:
    cut = _BREAK.search(sentence)
    head, rest = (sentence[: cut.start()], sentence[cut.end() :]) if cut else (sentence, "")
    verb = _ASIDE_VERB.search(head)
    what = ""
    if verb is not None:
        what = _ASIDE_TAIL.sub("", head[verb.end() :]).strip()
    rest = _LEAD.sub("", rest.strip()).strip()
    named = _named(what)
    return Slots(what=named if named else ("" if verb else None), rest=rest or None)


# ── problems: resolve, park, resume ──────────────────────────────────────────

_PHRASE = re.compile(
    r"\b" + _DETERMINERS + r"\s+(?!(?:is|are|was|were|be|been|has|have|had|will|can|does|do"
    r"|did|one|once)\b)(?P<words>(?:[\w'’./-]+\s+){0,5}?[\w'’./-]+)"
    r"(?=\s+(?:problem|issue|thing|stuff|task|ticket|question|one|work|bit|part)\b"
    r"|\s+(?:as|is|are|was|for|on|to|till|until|now|resolved|done|closed|fixed|solved|sorted"
    r"|finished|complete|paused|aside|later|off|out|up|back|it|and|but|so|then|again|please"
    r"|pls)\b|\s*[,.;:!?]|\s*$)",
    re.IGNORECASE,
)


def _problem_ref(sentence: str) -> Slots:
    return Slots(ref=_first_named_phrase(sentence))


def _resume(sentence: str) -> Slots:
    back = re.search(
        r"\b(?:back\s+to|return\s+to|resume|continue(?:\s+with)?|get\s+back\s+to)\s+"
        r"(?P<rest>[^,.;:!?\n]{1,80})",
        sentence,
        re.IGNORECASE,
    )
    if back is None:
        return Slots()
    return Slots(topic=_first_named_phrase(back.group("rest"), bare=True))


def _first_named_phrase(text: str, *, bare: bool = False) -> str | None:
    for match in _PHRASE.finditer(text):
        named = _named(match.group("words"))
        if named:
            return named
    if bare:
        return _named(_FOCUS_TOPIC_END.sub("", text))
    return None


# ── statements: preference, fact, decision ───────────────────────────────────

_HEDGE = re.compile(
    r"\b(?:i\s+think|i\s+guess|maybe|perhaps|probably|not\s+(?:100%\s+|really\s+|entirely\s+)?"
    r"sure|kind\s+of|kinda|sort\s+of|i\s+suppose|might|possibly)\b",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"\b(?:always|never|from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|every\s+time"
    r"|in\s+(?:all|every|any)\b|(?:please|pls)\s+(?:use|write|answer|reply|keep|give|call"
    r"|format|add|stop|don'?t)|^(?:use|write|answer|reply|keep|give|call|format|add|stop"
    r"|don'?t|do\s+not|no)\b)",
    re.IGNORECASE,
)
_EXPLICIT = re.compile(
    r"\b(?:prefer\w*|preference|rather|favou?rite|i\s+(?:want|like|love|need|hate)|we\s+"
    r"(?:want|like|use))\b",
    re.IGNORECASE,
)
_KEEP_LEAD = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?)?(?:please\s+)?(?:"
    r"(?:i\s+want\s+you\s+to\s+)?(?:remember|rember|remembr)(?:\s+(?:that|this|for\s+next\s+time"
    r"(?:\s+that)?))?|keep\s+(?:this\s+|it\s+)?in\s+mind(?:\s+that)?|(?:don'?t|do\s+not)\s+forget"
    r"(?:\s+that)?|for\s+(?:future|later)\s+reference|note(?:\s+for\s+(?:later|the\s+future))?"
    r"(?:\s+that)?|make\s+a\s+note(?:\s+that)?|store(?:\s+this|\s+the\s+fact\s+that)?|save\s+this"
    r"(?:\s+for\s+later)?|write\s+this\s+down|add\s+to\s+your\s+memory(?:\s+that)?|fyi"
    r"|just\s+so\s+you\s+know|for\s+the\s+record)\b\s*[,:;—–-]?\s*",
    re.IGNORECASE,
)
_KEEP_TAIL = re.compile(
    r"[\s,;.—–-]*(?:\b(?:please\s+)?(?:keep|bear)\s+(?:it|that|this)\s+in\s+mind"
    r"|\bremember\s+(?:it|that|this)|\bnote\s+(?:it|that)|\b(?:please|pls|thanks))\W*$",
    re.IGNORECASE,
)
_NAMED_VALUE = re.compile(
    r"^(?:(?:update|correction|fyi|note|heads\s+up)\s*[:,-]\s*)?(?P<subject>.{3,60}?)\s+"
    r"(?:is|are|was|=|lives|runs|starts|ends|rotates|(?:got\s+|has\s+been\s+|have\s+been\s+)?"
    r"(?:moved|changed|switched|shifted|pushed|postponed|rescheduled)\s+to)\b",
    re.IGNORECASE,
)
_DECIDED = re.compile(
    r"\b(?:decision|decided|decide|conclusion|verdict|settled|final\s+(?:answer|decision|call))"
    r"\s*[:—–-]"
    r"\s*(?P<colon>.+)$"
    r"|\b(?:we|i|the\s+team)\s+(?:have\s+|'ve\s+)?"
    r"(?:decided|decide|agreed|agree|settled|chose|picked|opted)"
    r"(?:\s+(?:to|on|that|for))?\s+(?P<verb>.+)$"
    r"|\b(?:let'?s|lets|we'?ll|we\s+will|we'?re\s+going\s+to|i'?ll|going\s+to)\s+(?:go\s+"
    r"(?:with|for)|use|stick\s+with|pick|take|keep)\s+(?P<go>.+)$"
    r"|\b(?:we'?re\s+|i'?m\s+)?going\s+with\s+(?P<going>.+)$"
    r"|^(?:\W*\w+\W+){0,2}?go\s+(?:with|for)\s+(?P<bare>.+)$"
    r"|^(?P<itis>.{1,60}?)\s+it\s+is\b",
    re.IGNORECASE,
)


def _preference(sentence: str) -> Slots:
    statement = _statement(sentence)
    scope = "instruction" if _INSTRUCTION.search(sentence) else (
        "explicit" if _EXPLICIT.search(sentence) else "inferred"
    )
    return Slots(statement=statement, scope=scope, hedged=_HEDGE.search(sentence) is not None)


_TASK_AFTER_FACT = re.compile(
    r"\s*[,;]\s*(?:(?:and|so|then|now|just|also)\s+)*(?:please\s+|pls\s+)?"
    r"(?P<verb>[a-z']+)\s+(?:me|us)\b",
    re.IGNORECASE,
)
"""A request for the assistant after a fact to keep ("…, and write me the flexbox version"):
an instruction addressed to "me" or "us" is asked for now; a fact states, it never asks."""
_TASK_SCAN = 2000


def task_start(text: str) -> int | None:
    """Where a request for the assistant begins after a fact to keep (`_TASK_AFTER_FACT`), or
    None: "Remember that we use 8px spacing, and write me the flexbox version" (D451)."""
    for task in _TASK_AFTER_FACT.finditer(text[:_TASK_SCAN]):
        if is_imperative(task.group("verb").lower()):
            return task.start()
    return None


def _fact(sentence: str) -> Slots:
    task = task_start(sentence)
    body = _LEAD.sub("", sentence if task is None else sentence[:task])
    fact = _KEEP_LEAD.sub("", body, count=1)
    if fact == body:
        fact = _without_misspelt_remember(body)
    fact = without_trailing_aside(_KEEP_TAIL.sub("", fact)).strip(" .!?;,")
    if not fact or all(w.lower() in _NO_CONTENT for w in _WORD.findall(fact)):
        return Slots()  # "note this down" keeps nothing by itself: what "this" is, is asked
    named = _NAMED_VALUE.match(fact)
    subject = named.group("subject").strip() if named else fact
    return Slots(statement=fact, subject=subject)


def _without_misspelt_remember(body: str) -> str:
    """`body` without a first word spelt close to "remember" and the "that" after it: "remeber
    that the venue is in Porto" keeps "the venue is in Porto". The tiers read such a sentence
    as a fact to keep; the words of the request are no part of the fact, however spelt."""
    first, _, rest = body.lstrip().partition(" ")
    word = first.lower().strip(",:;")
    if not rest or not 5 <= len(word) <= 9:
        return body
    from difflib import SequenceMatcher

    if SequenceMatcher(None, word, "remember").ratio() < _MISSPELT:
        return body
    return re.sub(r"^(?:that|this)\b[\s,:]*", "", rest.lstrip(), flags=re.IGNORECASE)


_MISSPELT = 0.8
"""How close a word must be to "remember" to be taken for it: "remeber" 0.93, "rember" 0.86,
"remembr" 0.93; "remind" 0.57 is another verb."""


def _decision(sentence: str) -> Slots:
    body = _LEAD.sub("", sentence).strip()
    match = _DECIDED.search(body)
    if match is None:
        return Slots(statement=_statement(sentence))
    value = next(group for group in match.groups() if group is not None)
    value = re.sub(r"^(?:we|i)\s+(?:go|use|will\s+use)\s+(?:with\s+)?", "", value.strip())
    value = re.sub(r"\s*,?\s*(?:then|decision\s+made|that'?s\s+decided|decided)\W*$", "", value)
    return Slots(statement=value.strip(" .!;,") or _statement(sentence))


def _statement(sentence: str) -> str | None:
    text = _LEAD.sub("", sentence).strip(" .!;,")
    return text or None


# ── shared ───────────────────────────────────────────────────────────────────


def _clause(text: str) -> str:
    """`text` up to the end of its clause (a stop, a semicolon or a comma before a new verb)."""
    cut = re.search(r"[.;!?\n]|,\s+(?=[\w'’]+\s)|\s+(?:and|but|so)\s+(?=\w)", text)
    return (text[: cut.start()] if cut else text).strip()


def _named(text: str, *, keep_tail: bool = False) -> str | None:
    """The words of `text` that name something, as said ("my cat", "the webhook"): trailing
    generic nouns dropped unless `keep_tail`, None when nothing but a pronoun, a determiner or
    a generic word is left."""
    words = [m.group() for m in _WORD.finditer(text)]
    while words and words[0].lower() == "about":
        words.pop(0)
    core = list(words)
    while not keep_tail and len(core) > 1 and core[-1].lower() in _GENERIC_TAIL:
        core.pop()
    bare = [w for w in core if w.lower() not in _DETERMINER_WORDS]
    if not bare or " ".join(bare).lower() in _VAGUE:
        return None
    first, last = core[0], core[-1]
    begin = text.find(first)
    end = text.rfind(last) + len(last)
    named = text[begin:end].strip() if 0 <= begin < end else " ".join(core)
    return named or None


_READERS: dict[IntentKind, Callable[[str], Slots]] = {
    IntentKind.FOCUS: _focus,
    IntentKind.FORGET: _forget,
    IntentKind.SET_ASIDE: _set_aside,
    IntentKind.RESOLVE: _problem_ref,
    IntentKind.PARK: _problem_ref,
    IntentKind.RESUME: _resume,
    IntentKind.PREFERENCE: _preference,
    IntentKind.FACT: _fact,
    IntentKind.DECISION: _decision,
    IntentKind.CORRECT: correction_slots,
}
