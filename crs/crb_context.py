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
from typing import Callable, Optional

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

    @property
    def asked(self) -> bool:
        """The user's last message asks something (a question mark, or a question's first word)."""
        return "?" in self.last_user or bool(_QUESTION_START.search(self.last_user))

    @property
    def asked_seen(self) -> bool:
        """The user asked whether the system has seen or watched something."""
        return bool(re.search(r"\b(have|did|had) you (ever )?(seen|watched|see|watch)\b|\bseen it\?",
                              self.last_user, re.IGNORECASE))

    def says(self, pattern: str) -> bool:
        return bool(re.search(pattern, self.last_user, re.IGNORECASE))


_GREETED = r"\b(hi|hello|hey|good (morning|afternoon|evening)|how are you|howdy)\b"
_THANKED = r"\b(thanks?|thank you|thx|ty|appreciate)\b"
_LIKED = (r"\b(i|we) (really )?(like|love|liked|loved|enjoy|enjoyed|adore|prefer|am into|'m into)\b|"
          r"\bfavou?rite\b")
_ASKED_HOW = r"\bhow (are|r) (you|u)\b|\bhow'?s it going\b|\bhow (are|have) you been\b|\bhow do you do\b"
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
     re.compile(r"\bwhat can i (help you (find|with)|recommend|do for you)\b|\bhow (can|may) i help\b",
                re.IGNORECASE),
     lambda c: c.agent_turns == 0 or c.says(_GREETED)),
    ("speaks of a person nobody named",
     re.compile(r"\b(his|her|him)\b", re.IGNORECASE),
     lambda c: c.user_named_person),
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
    ("acknowledges a choice nobody made",
     re.compile(r"\b(good|great|excellent|nice) choice\b|\bglad you (like|liked|enjoy|enjoyed)\b|"
                r"(^|[.!?]\s*)enjoy (it|the (movie|film|show))\b", re.IGNORECASE),
     lambda c: c.user_named_title),
)


_SHOUTED = re.compile(r"\b[A-Z]{2,}(\s+[A-Z]{2,}){2,}\b")  # three capitalised words in a row: a typo'd shout
_UNFINISHED = re.compile(r"\b(but|and|or|because|so|the|a|an|with)\s*$", re.IGNORECASE)


def context_problem(response: str, context: TurnContext) -> Optional[str]:
    """Why the turn's filler (its words around the slots) does not fit the conversation, or None."""
    if _UNFINISHED.search(response.strip()):
        return "stops in the middle of a sentence"
    filler = _SLOT.sub(" ", response)
    if _SHOUTED.search(filler):
        return "is written in capitals"
    for act, pattern, fits in ACTS:
        match = pattern.search(filler)
        if match and not fits(context):
            return f"{act} ({match.group(0).strip()!r})"
    return None
