"""Whether a retrieved human turn's filler fits the conversation it would go into.

CRB-CRS answers with a sentence a ReDial recommender once wrote, its movie slots refilled. The
sentence's words around the slots were said to someone else, and some of them only make sense as a
reply to what that person said: "Yes I have seen that movie many times" answers "have you seen it?",
"You're welcome" answers thanks, "Hi!" opens a conversation, "I also loved" follows a title already
talked about. Each such dialogue act is listed here with what the conversation must hold for it to
fit; a turn whose filler carries an act the conversation does not support is not used. The rules
are over acts (an answer, a greeting, a claim of having seen), not over the wording of any set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional, Sequence

_SLOT = re.compile(r"<movie_\d>")
_QUESTION_START = re.compile(
    r"^\s*(do|does|did|is|are|was|were|have|has|had|can|could|would|will|should|shall|which|what|who|whom|"
    r"whose|when|where|why|how|any|ever)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TurnContext:
    """What the conversation holds that a filler act may answer or continue."""

    last_user: str = ""
    agent_turns: int = 0  # the system's turns so far
    recommended_before: bool = False  # the system has shown an item already
    user_named_title: bool = False  # the user's last message names a catalog title
    user_named_person: bool = False  # the user's last message names a person of the catalog
    named_years: tuple[int, ...] = ()  # years of the titles the user's last message names

    @property
    def asked(self) -> bool:
        """The user's last message asks something (a question mark, or a question's first word)."""
        return "?" in self.last_user or bool(_QUESTION_START.search(self.last_user))

    @property
    def asked_seen(self) -> bool:
        """The user asked whether the system has seen or watched something."""
        return bool(re.search(r"\b(have|did|had) you (ever )?(seen|watched|see|watch)\b|\bseen it\?|"
                              r"\b(seen|watched|see|watch) (any|anything)\b", self.last_user, re.IGNORECASE))

    def says(self, pattern: str) -> bool:
        return bool(re.search(pattern, self.last_user, re.IGNORECASE))


_GREETED = r"\b(hi|hello|hey|good (morning|afternoon|evening)|how are you|howdy)\b"
_THANKED = r"\b(thanks?|thank you|thx|ty|appreciate)\b"
_LIKED = (r"\b(i|we) (really )?(like|love|liked|loved|enjoy|enjoyed|adore|prefer|am into|'m into)\b|"
          r"\bfavou?rite\b")
_ASKED_HOW = (r"\bhow (are |r )?(you|u)( been| doin'?g?)?\b|\bhow'?s it going\b|\bhow (are|have) you been\b|"
              r"\bhow do you do\b")
_COMPLAINED = r"\b(no|not|don'?t|didn'?t|never|hate|hated|dislike|already|seen it|boring|bad)\b"

# (act, what in the filler carries it, whether the conversation supports it)
ACTS: tuple[tuple[str, re.Pattern, Callable[[TurnContext], bool]], ...] = (
    ("answers a yes/no question nobody asked",
     re.compile(r"\b(yes|yeah|yep|yup|nope|nah)\b|(^|[.!?]\s*)no\b(?!\s+(more|other|one|problem))|"
                r"\b(i think so|i don'?t think so|of course|absolutely|definitely not)\b", re.IGNORECASE),
     lambda c: c.asked),
    ("says it has or has not seen a film, unasked",
     re.compile(r"\bi('?ve| have| had)? (not |never |already |just |also |recently )?(seen|watched|saw)\b|"
                r"\bi (haven'?t|havent|didn'?t|didnt|never) (seen|watched|see|watch)\b|"
                r"\b(never|haven'?t|havent|not yet) (seen|watched)\b|"
                r"\b(seen|watched) (it|that|this)( one| movie| film)? "
                r"(many|a few|several|so many|\d+) times\b",
                re.IGNORECASE),
     lambda c: c.asked_seen),
    ("greets in the middle of a conversation",
     re.compile(r"\b(hi|hello|hey|hiya|howdy|good (morning|afternoon|evening))\b|\bhow are you\b|"
                r"\bnice to meet you\b", re.IGNORECASE),
     lambda c: c.agent_turns == 0 or c.says(_GREETED)),
    ("says how it is, unasked",
     re.compile(r"\b(i'?m|i am|im) (good|fine|great|well|doing (well|good|great|fine)|ok|okay)\b( thanks?)?",
                re.IGNORECASE),
     lambda c: c.says(_ASKED_HOW)),
    ("opens the conversation again",
     re.compile(r"\bwhat can i (help you (find|with)|recommend|do for you)\b|\bhow (can|may) i help\b|"
                r"\bcome to the right place\b",
                re.IGNORECASE),
     lambda c: c.agent_turns == 0 or c.says(_GREETED)),
    ("speaks of a person nobody named",
     re.compile(r"\b(he|she|his|her|him|hers)\b", re.IGNORECASE),
     lambda c: c.user_named_person),
    ("answers a question about its favourite nobody asked",
     re.compile(r"\b(mine is|mine'?s|mine would be)\b", re.IGNORECASE),
     lambda c: c.says(r"\byour\b.{0,20}\b(favou?rites?|fav|faves|top|pick)\b|"
                      r"\bwhat do you (like|love|recommend)\b|\bdo you have a favou?rite\b")),
    ("speaks of the person's family nobody mentioned",
     re.compile(r"\byour (kids?|children|child|son|sons|daughters?|wife|husband|girlfriend|boyfriend|family|"
                r"partner)\b|\byou (two|guys|both|all)\b|\bboth of you\b", re.IGNORECASE),
     lambda c: c.says(r"\b(kids?|children|child|son|sons|daughters?|wife|husband|girlfriend|boyfriend|family|"
                      r"partner|nephew|niece|grand\w+|year[ -]old)\b")),
    ("answers thanks nobody gave",
     re.compile(r"\b(you'?re welcome|no problem|my pleasure|anytime|glad (i|to) (could )?help|no worries)\b",
                re.IGNORECASE),
     lambda c: c.says(_THANKED)),
    ("agrees with an opinion nobody gave",
     re.compile(r"\b(me too|me neither|same here|i agree|i (do|did) too|so (do|did) i|agreed|"
                r"i feel the same)\b", re.IGNORECASE),
     lambda c: c.says(_LIKED)),
    ("continues from a title nobody has talked about",
     re.compile(r"\b(also|another|other one|similar|like that one|that one)\b", re.IGNORECASE),
     lambda c: c.recommended_before or c.user_named_title),
    ("apologises or sympathises with nothing to be sorry for",
     re.compile(r"\b(sorry|oh no|that'?s too bad|that'?s a shame|my bad)\b", re.IGNORECASE),
     lambda c: c.says(_COMPLAINED)),
    ("pans the title it recommends",
     re.compile(r"\b(not the (greatest|best)|not as good as|not that good|awful|terrible|horrible|overrated|"
                r"pretty bad|not a fan of|wasn'?t a fan|was not a fan|i (don'?t|didn'?t|did not|do not) "
                r"(like|love|enjoy)|i hated|was terrible|was awful|was boring)\b", re.IGNORECASE),
     lambda c: False),
    ("closes the conversation while it goes on",  # a user's closing never reaches retrieval
     re.compile(r"\b(last|final) (recommendation|suggestion|pick)\b|\bfor the day\b|"
                r"\bhope (that )?(i|this|that) (gave|helped|was)\b", re.IGNORECASE),
     lambda c: False),
    ("acknowledges a choice nobody made",
     re.compile(r"\b(good|great|excellent|nice) choice\b|\bglad you (like|liked|enjoy|enjoyed)\b|"
                r"(^|[.!?]\s*)enjoy (it|the (movie|film|show))\b", re.IGNORECASE),
     lambda c: c.user_named_title),
)


_ADJACENT_SLOTS = re.compile(r"<movie_\d>\s*<movie_\d>")
# An acknowledgement after the turn has begun ("... Scream (1996) Okay. It sounds great too") replies to
# something the other person said in the original dialogue, between two spliced messages.
_ACKNOWLEDGEMENT = re.compile(
    r"\b(ok|okay|alright|got it|sounds (good|great|fun|interesting)|it sounds)\b", re.IGNORECASE)
_COMPARED = re.compile(r"\b(newer|more recent|older)\b", re.IGNORECASE)
_SLANG = frozenset("lol lmao haha hahaha hahah omg btw hbu idk tbh ok okay yea ya yup nope hmm hmmm um umm "
                   "ummm uh oh ohh ooh wow aww awww fav faves flick flicks scifi rewatch rom com "
                   "coms".split())
_SHOUTED = re.compile(r"\b[A-Z]{2,}(\s+[A-Z]{2,}){2,}\b")  # three capitalised words in a row: a typo'd shout
_UNFINISHED = re.compile(r"\b(but|and|or|because|so|the|a|an|with)\s*$", re.IGNORECASE)


@lru_cache(maxsize=1)
def english() -> frozenset[str]:
    """Everyday English words: the catalog's plot words and the embedding model's whole words."""
    from arena.catalogs.catalog import _frequent_words, vocabulary

    return frozenset(vocabulary().words) | frozenset(_frequent_words(40000)) | _SLANG


_SUFFIXES = ("s", "es", "'s", "ed", "ing", "y", "er", "ers", "est", "ful", "ly", "ness", "ish", "ier", "iest")


def _known(word: str, words: frozenset[str]) -> bool:
    """Whether `word` or its stem is English ("thrillers", "suspenseful", "gory" from "gore")."""
    word = word.lower().strip("'")
    if word in words or word.replace("'", "") in words:
        return True
    for end in _SUFFIXES:
        if word.endswith(end) and len(word) > len(end) + 2:
            stem = word[:-len(end)]
            if stem in words or stem + "e" in words or (stem[-1:] == stem[-2:-1] and stem[:-1] in words):
                return True
    return False


def misspelt(filler: str) -> Optional[str]:
    """A lower-case word of the filler that is no English word ("similiar", "lkke"), or None."""
    words = english()
    for word in re.findall(r"(?<![\w'])[a-z][a-z']{2,}", filler):
        if not _known(word, words):
            return word
    return None


# How two pieces fail to join once titles fill the slots (over sentence shape, not any set's words):
# a pronoun "i" written in lower case, a hesitation ("Oh.."), laughter at nothing, a question or a new
# clause run on after a title with no stop between, "who" (a person's pronoun) after a film, a second
# title left hanging off a sentence about the first ("<a> is a fav and <b>").
_JOINS = (
    ("writes 'i' in lower case", re.compile(r"(^|[\s,.!?])i('m|'d|'ve|'ll)?\s")),
    ("trails off", re.compile(r"\.\.|…")),
    ("laughs at nothing", re.compile(r"\b(lol|haha\w*|lmao|hehe\w*)\b", re.IGNORECASE)),
    ("runs a question on after a title", re.compile(
        r"<movie_\d>\s+(would|did|do|does|have|has|how|what|who|which)\b"
        r"(?=.*\?|\s+(this|that|it|you)\b)", re.IGNORECASE)),
    ("calls a film 'who'", re.compile(r"<movie_\d>\s+who\b", re.IGNORECASE)),
    ("runs two sentences together", re.compile(
        r"<movie_\d>\s+([a-z]+\s+)?(movie|film|one)\s+(is|was)\b|"
        r"\b(?!so\b|and\b|but\b|then\b|or\b|well\b)[a-z]+ (how|what) about\b|"
        r"<movie_\d>\s+(really|pretty|so|very) (good|great|fun|funny)\b")),
    ("starts in lower case", re.compile(r"^[^\w<]*[a-z]")),
    ("runs an interjection into a question", re.compile(
        r"^\W*(ok|okay|good|great|sure|alright|yes|well|so)\s+(have|do|did|how|what|would)\b",
        re.IGNORECASE)),
    ("runs two sentences together at 'I'", re.compile(
        r"\b(?!if\b|and\b|but\b|so\b|because\b|when\b|as\b|what\b|that\b|think\b|hope\b|guess\b|know\b|wish\b)"
        r"[a-z]+\s+I\s+(really|also|just|like|love|loved|liked|enjoy|enjoyed|think|would)\b")),
    ("writes a word twice", re.compile(r"\b(the|a|an|to|of|is|and|i|it|you)\s+\1\b", re.IGNORECASE)),
    ("writes in chat spelling", re.compile(r"\b(yo|u|ur|ya|pls|plz|thx)\b")),
    ("puts 'before' ahead of the title", re.compile(r"\b(seen|watched|saw) (before|already) <movie_\d>")),
    ("runs a new sentence on after a title", re.compile(
        r"<movie_\d>\s+(I|It's|It is|It was|That's|That is|That was|that (was|is)|it (was|is))\s")),
    ("capitalises a joining word after a title", re.compile(r"<movie_\d>\s+(Or|And|But)\b")),
    ("capitalises a word mid-sentence after a title",
     re.compile(r"<movie_\d>\s+(Is|Was|Are|Were|Has|Had)\b")),
    ("leaves a second title hanging", re.compile(r"[a-z]\s+(and|or)\s+<movie_\d>\W*$", re.IGNORECASE)),
)


# A sentence about "it" or "that" before the turn names any title ("It was great. So was <a>"): the
# "it" was a film the other person had named.
_BEFORE_NAMING = re.compile(r"^[^<]*(\b(it|that|this)('s| is| was)\b[^<]*[.!?]\s|"
                            r"\b(that|this|those) (series|movie|film|one|show)s?\b)", re.IGNORECASE)


def joining_problem(response: str, context: Optional["TurnContext"] = None) -> Optional[str]:
    """Why the turn will not read as one piece once its slots are filled, or None."""
    for problem, pattern in _JOINS:
        match = pattern.search(response)
        if match:
            return f"{problem} ({match.group(0).strip()!r})"
    if _BEFORE_NAMING.search(response) and not (context is not None and context.user_named_title):
        return "speaks of a film before naming it"
    return None


def context_problem(response: str, context: TurnContext, years: Sequence[int] = ()) -> Optional[str]:
    """Why the turn's filler (its words around the slots) does not fit the conversation, or None.
    `years`: those of the items the slots would be filled with, for "a newer one"."""
    if _UNFINISHED.search(response.strip().rstrip(" .!?,")):
        return "stops in the middle of a sentence"
    if _ADJACENT_SLOTS.search(response):
        return "runs two titles together with nothing between them"
    filler = _SLOT.sub(" ", response)
    words = re.findall(r"[a-z']+", response.lower())
    grams = [" ".join(words[i:i + 5]) for i in range(len(words) - 4)]
    if len(grams) != len(set(grams)):
        return "says the same words twice"
    word = misspelt(filler)
    if word is not None:
        return f"has a misspelt word ({word!r})"
    if (joined := joining_problem(response, context)) is not None:
        return joined
    for match in _ACKNOWLEDGEMENT.finditer(response):
        before = response[:match.start()]
        if _SLOT.search(before) or re.search(r"[.!?]", before):
            return f"acknowledges something mid-turn ({match.group(0)!r})"
    match = _COMPARED.search(filler)
    if match:
        newer = match.group(1).lower() != "older"
        named = context.named_years
        fits = bool(named and years) and (min(years) > max(named) if newer else max(years) < min(named))
        if not fits:
            return f"compares ages ({match.group(0)!r}) that the titles' years do not bear out"
    if _SHOUTED.search(filler):
        return "is written in capitals"
    for act, pattern, fits in ACTS:
        match = pattern.search(filler)
        if match and not fits(context):
            return f"{act} ({match.group(0).strip()!r})"
    return None
