"""Where a negation or a "seen it" reaches in a user message, read per clause.

"I hated Cats, but loved Up" rejects Cats only: a cue counts for what follows it
in its clause ("not too gory" rules out "gory"; "I've seen it" and "seen that
one" mark the titles just offered as seen). The constraints, the act rules and
the recommender's reading of the dialogue all take their scope from here.
"""

from __future__ import annotations

import re

from arena.titles.phrases import FUNCTION_WORDS, normalize

# A cue that turns what follows it in the clause into something unwanted.
NEGATION_CUE = re.compile(
    r"\b(not|never|no|nothing|without|don'?t|didn'?t|doesn'?t|isn'?t|wasn'?t|aren'?t|can'?t|won'?t|"
    r"hate[ds]?|dislike[ds]?|avoid|except|minus|other than|rather than|instead of|too much|tired of|sick of|"
    # Dislike idioms, whatever they name (a person, a genre, a franchise): "had my fill of Stallone",
    # "fed up with Jim Carrey", "done with superheroes", "so over Home Alone", "enough of the sequels".
    r"fed up (with|of)|done with|bored (of|with)|had (my|our|their|his|her|enough of( my)?) fill of|"
    r"(had|seen) enough( of)?|enough (of|with)|^\s*enough|no more|not into|not keen on|"
    r"(i'?m|we'?re|i am|we are|they'?re|(s)?he'?s) (so |totally |completely |really |kind of |kinda |a bit |"
    r"pretty )?over)\b",
    re.IGNORECASE,
)
# Words after a cue that still say the user likes the thing ("not a fan of X" is negative,
# but "I don't know, something like X" is not); kept small on purpose.
_POSITIVE_AFTER_CUE = re.compile(r"^\s*(only|just|sure|mind|know|care|matter|problem|doubt)\b", re.IGNORECASE)
# The user has seen the title(s) in this clause, or those the system just offered.
SEEN_CUE = re.compile(
    r"\b(i'?ve (already )?(seen|watched)|i have (already )?(seen|watched)|already (seen|watched|saw)|"
    r"seen (it|that|this|them|those|both|all)|watched (it|that|this|them|those)|saw (it|that|this|them))\b",
    re.IGNORECASE,
)
# Where a new phrase starts inside a clause, ending the scope of a negation before it: "a comedy without
# romance or a thriller" and "funny with no romance, maybe an action movie" rule out romance only. A bare
# list stays in scope ("no horror or thriller", "no horror, thriller or crime"); "or" and a new subject
# ("never heard of it or they can be horror") starts a clause of its own.
_NEW_PHRASE = re.compile(
    r"(,\s*|\s+(?=(or|and)\s+(a|an|some|something|anything|maybe|perhaps|possibly|just|one|ones|any|"
    r"instead|else|preferably|ideally|they|it|he|she|you|we|i)\b))"
    r"(?=(or|and|maybe|perhaps|possibly|preferably|ideally|something|anything|a|an|some|just|i|i'?d|i'?m|"
    r"we|please|like|more|how|what|one|ones|any|instead|else|rather)\b)",
    re.IGNORECASE)
# A request that starts within the clause ends a negation's phrase before it: "I don't like that movie can
# you give me a true story instead?" turns down the movie, not the true story.
_NEW_REQUEST = re.compile(r"\s+(?=((can|could|would|will) you|give me|show me|i'?d like|i would like|i want|"
                          r"how about|what about|maybe)\b)", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[.!?;]+|,?\s+\b(but|although|though|whereas|however|yet)\b", re.IGNORECASE)
# Filler that a negated phrase drops: "not too gory" rules out "gory", not "too".
_NEGATION_FILLER = frozenset(
    "too very so that much many really any anything something movie movies film films show shows "
    "one ones kind sort type stuff like want watch see seen please".split()
)


def clause_bounds(text: str, position: int) -> tuple[int, int]:
    """The clause around `position`: "I hated Cats, but loved Up" splits at the "but"."""
    bounds = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(text)] + [len(text) + 1]
    start = max(b for b in bounds if b <= position)
    end = min(b for b in bounds if b > position)
    return start, min(end, len(text))


def phrase_end(text: str, start: int) -> int:
    """Where the phrase a negation cue ending at `start` attaches to stops: the clause end, or an
    earlier point where a new phrase begins (`_NEW_PHRASE`)."""
    _, end = clause_bounds(text, start)
    found = (_NEW_PHRASE.search(text, start, end), _NEW_REQUEST.search(text, start, end))
    return min((m.start() for m in found if m), default=end)


def negated_before(text: str, start: int) -> bool:
    """Whether a negation cue governs the span starting at `start`: a cue before it in its clause
    whose phrase reaches it."""
    clause_start, _ = clause_bounds(text, start)
    for cue in NEGATION_CUE.finditer(text, clause_start, start):
        if not _POSITIVE_AFTER_CUE.match(text, cue.end()) and phrase_end(text, cue.end()) > start:
            return True
    return False


def _scope_end(text: str, start: int) -> int:
    """Where the words a negation rules out stop: its phrase's end or the next comma."""
    end = phrase_end(text, start)
    comma = text.find(",", start, end)
    return comma if comma >= 0 else end


def negated_phrases(text: str) -> list[str]:
    """The content words each negation cue rules out: "nothing too gory please" -> ["gory"]."""
    out = []
    for cue in NEGATION_CUE.finditer(text):
        rest = text[cue.end():]
        if _POSITIVE_AFTER_CUE.match(rest):
            continue
        end = _scope_end(text, cue.end())
        words = [
            w for w in normalize(text[cue.end():end]).split()[:4]
            if w not in FUNCTION_WORDS and w not in _NEGATION_FILLER
        ]
        if words:
            out.append(" ".join(words))
    return out


def without_negations(text: str) -> str:
    """The text less what its negation cues rule out: "horror but nothing too gory" -> "horror but"."""
    cut, kept = 0, []
    for cue in NEGATION_CUE.finditer(text):
        if cue.start() < cut or _POSITIVE_AFTER_CUE.match(text[cue.end():]):
            continue
        end = _scope_end(text, cue.end())
        kept.append(text[cut:cue.start()])
        cut = end
    kept.append(text[cut:])
    return " ".join(part.strip() for part in kept if part.strip())


# Turns that carry nothing to recommend from: greetings, thanks, small talk.
_SMALL_TALK = frozenset(
    """hi hello hey hiya howdy yo greetings good morning afternoon evening day there thanks thank
    you ok okay cool great nice sure yes yeah yep no nope well fine how are doing today bye goodbye
    see later lol hmm um uh oh ah wow""".split()
)


def has_request_content(text: str) -> bool:
    """Whether a user turn gives anything to recommend from: any word beyond greetings,
    thanks and small talk ("hi there" no; "a classic mob movie", "recommend something" yes)."""
    return any(w not in FUNCTION_WORDS and w not in _SMALL_TALK for w in normalize(text or "").split())
