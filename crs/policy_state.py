"""The dialogue policy's working copy of the conversation state, and its stored form.

`Reading` is what the policy keeps while it takes in one message after another (catalog items,
the `Constraints` the recommender filters with); `to_state` writes it as the typed
`arena.conversation.dialogue_state.DialogueState` stored with each system turn, and `from_state` reads a
stored state back, so the next turn starts where the last one stopped instead of reading the
whole conversation again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.conversation.dialogue_state import Constraint, DialogueState, MentionedItem, OpenQuestion, ShownItem
from arena.reading.constraints import Constraints

ERA_OPEN_END = 2100  # "after 2005" is stored as 2006-2100, "before 1980" as 1800-1979


@dataclass
class Reading:
    """The conversation so far as the policy reads it (mutable while a message is taken in)."""

    constraints: Constraints = field(default_factory=Constraints)
    left_out: set[str] = field(default_factory=set)
    shown: list[CatalogItem] = field(default_factory=list)  # the last system turn's items
    last_list: list[CatalogItem] = field(default_factory=list)  # the last turn that showed several
    shown_years: list[int] = field(default_factory=list)
    shown_records: list[ShownItem] = field(default_factory=list)
    mentioned: list[MentionedItem] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    turned_down: list[str] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    like: list[str] = field(default_factory=list)  # ids of titles held up as the model of the wish
    moods: list[str] = field(default_factory=list)
    sinces: dict[tuple, int] = field(default_factory=dict)  # (slot, value, polarity) -> user turn
    focus: list[str] = field(default_factory=list)  # ids "it" refers to when the last reply showed none
    understood: str = ""
    audience_asked: bool = False  # the child in the audience was named only in a question
    last_aspect: Optional[str] = None  # what the last question asked ("and the third one?" asks it again)
    has_preference: bool = False
    user_turns: int = 0
    system_turns: int = 0
    read_through: int = 0
    reader: str = "rules"


def constraint_list(c: Constraints, like: list[str] = (), moods: list[str] = ()) -> list[tuple]:
    """(slot, value, polarity, scope) of every constraint in `c`."""
    out: list[tuple] = []
    scope = "any" if c.any_genre else "all"
    out += [("genre", g, "want", scope) for g in sorted(c.genres)]
    out += [("genre", g, "avoid", "all") for g in sorted(c.unwanted_genres)]
    out += [("person", p, "want", "all") for p in sorted(c.people)]
    out += [("person", p, "avoid", "all") for p in sorted(c.unwanted_people)]
    if c.years is not None:
        out.append(("era", f"{c.years[0]}-{c.years[1]}", "want", "all"))
    if c.kind is not None:
        out.append(("kind", c.kind, "want", "all"))
    if c.for_children:
        out.append(("audience", "children", "want", "all"))
    out += [("subject", s, "want", "all") for s in sorted(c.subjects)]
    out += [("origin", o, "want", "all") for o in sorted(c.origins)]
    out += [("maker", m, "want", "all") for m in sorted(c.makers)]
    out += [("intensity", i, "avoid", "all") for i in sorted(c.unwanted_intensity)]
    out += [("word", w, "avoid", "all") for w in sorted(c.unwanted_words)]
    out += [("like", i, "want", "all") for i in like]
    out += [("mood", m, "want", "all") for m in moods]
    return out


def constraints_of(items: list[Constraint]) -> Constraints:
    """The `Constraints` the recommender filters with, from a stored state's list."""
    def values(slot: str, polarity: str) -> frozenset[str]:
        return frozenset(c.value for c in items if c.slot == slot and c.polarity == polarity)

    era = next((c.value for c in items if c.slot == "era"), None)
    years = None
    if era:
        low, _, high = era.partition("-")
        years = (int(low), int(high))
    return Constraints(
        years=years,
        for_children=any(c.slot == "audience" and c.value == "children" for c in items),
        unwanted_genres=values("genre", "avoid"), genres=values("genre", "want"),
        any_genre=any(c.slot == "genre" and c.polarity == "want" and c.scope == "any" for c in items),
        kind=next((c.value for c in items if c.slot == "kind"), None),
        people=values("person", "want"), unwanted_people=values("person", "avoid"),
        unwanted_intensity=values("intensity", "avoid"), unwanted_words=values("word", "avoid"),
        subjects=values("subject", "want"), origins=values("origin", "want"), makers=values("maker", "want"))


def stamp(reading: Reading) -> None:
    """Remember in which user turn each constraint in force was first set."""
    turn = max(reading.user_turns - 1, 0)
    current = {t[:3] for t in constraint_list(reading.constraints, reading.like, reading.moods)}
    reading.sinces = {key: reading.sinces.get(key, turn) for key in current}


def to_state(reading: Reading, *, act: str, intents: list[str], about: list[CatalogItem],
             aspect: Optional[str], understood: str = "") -> DialogueState:
    constraints = [Constraint(slot=slot, value=value, polarity=polarity, scope=scope,
                              since=reading.sinces.get((slot, value, polarity), 0))
                   for slot, value, polarity, scope in constraint_list(reading.constraints, reading.like,
                                                                        reading.moods)]
    return DialogueState(
        reader=reading.reader, read_through=reading.read_through, user_turns=reading.user_turns, act=act,
        understood=understood or (reading.understood if act == "clarify" else ""), intents=list(intents),
        constraints=constraints,
        shown=list(reading.shown_records), last_shown=[i.item_id for i in reading.shown],
        last_list=[i.item_id for i in reading.last_list], mentioned=list(reading.mentioned),
        seen=list(reading.seen), turned_down=list(reading.turned_down), taken=list(reading.taken),
        left_out=sorted(reading.left_out), about=[i.item_id for i in about],
        open_question=OpenQuestion(aspect=aspect, item_ids=[i.item_id for i in about])
        if act == "question" and aspect else None,
        asked=list(reading.asked), has_preference=reading.has_preference, focus=list(reading.focus),
        audience_asked=reading.audience_asked)


def from_state(state: DialogueState, catalog: Catalog) -> Reading:
    """The policy's working copy of a stored state (items the catalog no longer holds drop out)."""
    def items(ids: list[str]) -> list[CatalogItem]:
        return [i for i in (catalog.get(x) for x in ids) if i is not None]

    like = [c.value for c in state.constraints if c.slot == "like"]
    moods = [c.value for c in state.constraints if c.slot == "mood"]
    shown_years = [i.year for i in items([s.item_id for s in state.shown]) if i.year]
    return Reading(
        constraints=constraints_of(state.constraints), left_out=set(state.left_out),
        shown=items(state.last_shown), last_list=items(state.last_list), shown_years=shown_years,
        shown_records=list(state.shown), mentioned=list(state.mentioned), seen=list(state.seen),
        turned_down=list(state.turned_down), taken=list(state.taken), asked=list(state.asked), like=like,
        moods=moods, sinces={(c.slot, c.value, c.polarity): c.since for c in state.constraints},
        has_preference=state.has_preference, user_turns=state.user_turns, focus=list(state.focus),
        audience_asked=state.audience_asked,
        last_aspect=state.open_question.aspect if state.open_question else None,
        system_turns=len({s.turn for s in state.shown}) if state.shown else 0,
        read_through=state.read_through, reader=state.reader)


def with_reply(state: DialogueState, items: list[CatalogItem], turn: int, read_through: int,
               relaxed: Constraints | None = None) -> DialogueState:
    """The state once a system turn showed `items` (`turn`: the system turns before it)."""
    shown = list(state.shown) + [ShownItem(item_id=i.item_id, title=i.label, turn=turn, position=n)
                                 for n, i in enumerate(items, start=1)]
    update = {"shown": shown, "read_through": read_through, "last_shown": [i.item_id for i in items]}
    if len(items) > 1:
        update["last_list"] = [i.item_id for i in items]
    out = state.model_copy(update=update)
    if relaxed is not None:  # the list was made under looser constraints: the state says which
        kept = {t[:3] for t in constraint_list(relaxed)}
        out = out.model_copy(update={"relaxed": [
            c for c in state.constraints
            if c.slot not in ("like", "mood") and (c.slot, c.value, c.polarity) not in kept]})
    return out


__all__ = ["Reading", "constraint_list", "constraints_of", "from_state", "stamp", "to_state", "with_reply"]
