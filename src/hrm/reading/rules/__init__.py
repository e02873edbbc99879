"""The rules tier: today's phrasings as tables per intent, fast and precise, always on.

`RulesReader` (`tier.py`) runs every table over the sentences it is given and returns their
intents, the first table's intent winning where two commands overlap (answers, forget, problems,
preferences, facts, decisions, focus, moves). The tables:

- `answers`: yes / no, switch / queue, a bare "switch", thanks and goodbyes, negative feedback;
- `memory`: facts to remember (D73), requests to forget (D77, D83);
- `problems`: resolve / park / list what is open (D82, D87);
- `preferences`: the stated preference and its guards (D45–D47, D64, D69, D74);
- `decisions`: decisions stated about the work (D88);
- `focus`: focus requests (D54), resume (D75), set-aside (D81);
- `cues`: what arbitration weighs besides similarity (D59–D63, D68, D76, D78).
"""
