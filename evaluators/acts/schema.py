"""The IARD dialogue-act schema and the intent groups the utility metrics use.

IARD (Cai and Chen, 2020) annotates each utterance with one or more intents;
the RDL paper's metrics only need three groups of them: a system *Recommend*
(REC-S "show" or REC-E "explore"), a user *Accept* (ACC) and a user *Reject*
(REJ). Everything here is plain data so that metrics can import it without
pulling in any model.
"""

from __future__ import annotations

from typing import Iterable, Optional

from arena.dialogue import DialogueAct, Role, Utterance

USER_INTENTS: tuple[str, ...] = (
    "IQU",  # initial query
    "CON",  # continue
    "REF",  # reformulate
    "STO",  # start over
    "PRO",  # provide preference
    "ANS",  # answer
    "ASK",  # ask opinion
    "SEE",  # seen
    "ACC",  # accept
    "REJ",  # reject
    "INQ",  # inquire
    "CRI-F",  # critique feature
    "CRI-A",  # critique add
    "CRI-C",  # critique compare
    "NRE",  # neutral response
    "OTH",  # other
)

AGENT_INTENTS: tuple[str, ...] = (
    "REQ",  # request information
    "CLQ",  # clarify (the data spells it CLQ; the paper's list says CLA)
    "RESP",  # respond to feedback
    "R-ANS",  # answer
    "REC-S",  # recommend (show)
    "REC-E",  # recommend (explore)
    "EXP-I",  # explain: introduction
    "EXP-P",  # explain: preference
    "EXP-S",  # explain: suggestion
    "OTH",  # other
)

# Spellings found in IARD and elsewhere, mapped onto the names above.
INTENT_ALIASES: dict[str, str] = {"CLA": "CLQ", "RES": "RESP"}

RECOMMEND: frozenset[str] = frozenset({"REC-S", "REC-E"})
ACCEPT: frozenset[str] = frozenset({"ACC"})
REJECT: frozenset[str] = frozenset({"REJ"})

SLOTS: tuple[str, ...] = (
    "GENRE",
    "TITLE",
    "PLOT",
    "ACTOR",
    "DIRECTOR",
    "RATING",
    "KEYWORDS",
    "YEAR",
    "OTHER",
)


def intents_for(role: Role) -> tuple[str, ...]:
    return USER_INTENTS if role == Role.USER else AGENT_INTENTS


def normalise_intent(intent: str, role: Optional[Role] = None) -> str:
    name = intent.strip().upper()
    if role == Role.AGENT and name == "ANS":
        return "R-ANS"
    return INTENT_ALIASES.get(name, name)


def intents_of(utterance: Utterance) -> set[str]:
    """The intents an utterance is annotated with (empty when unannotated)."""
    return {normalise_intent(a.intent, utterance.role) for a in utterance.dialogue_acts or []}


def is_recommendation(utterance: Utterance) -> bool:
    return utterance.role == Role.AGENT and bool(intents_of(utterance) & RECOMMEND)


def is_acceptance(utterance: Utterance) -> bool:
    return utterance.role == Role.USER and bool(intents_of(utterance) & ACCEPT)


def is_rejection(utterance: Utterance) -> bool:
    return utterance.role == Role.USER and bool(intents_of(utterance) & REJECT)


def titles_of(utterance: Utterance) -> list[str]:
    """TITLE slot values over all of an utterance's acts, first-seen order."""
    seen: list[str] = []
    for act in utterance.dialogue_acts or []:
        for slot in act.slot_values:
            if len(slot) >= 2 and str(slot[0]).upper() == "TITLE" and slot[1] not in seen:
                seen.append(str(slot[1]))
    return seen


def make_acts(intents: Iterable[str], titles: Iterable[list] = ()) -> list[DialogueAct]:
    """Acts in IARD form; TITLE slots go on the intents that are about items.

    `titles` are IARD slot lists (["TITLE", value] or with start/end offsets).
    """
    slots = [list(t) for t in titles]
    ordered = list(dict.fromkeys(intents))
    carriers = [i for i in ordered if i in _ITEM_INTENTS] or ordered[:1]
    return [
        DialogueAct(intent=i, slot_values=[list(s) for s in slots] if i in carriers else []) for i in ordered
    ]


# Intents whose slot values naturally name the items being talked about.
_ITEM_INTENTS = frozenset(
    {"REC-S", "REC-E", "ACC", "REJ", "SEE", "EXP-I", "EXP-P", "EXP-S", "INQ", "CRI-C", "PRO", "IQU"}
)
