"""The second reader of the conversation's state: an LLM asked for the change of state as JSON.

The model gets the state so far (constraints, the last list with positions) and the new message,
and answers with the act, the constraints in force after the message, the shown positions or
titles it refers to and the aspect asked. The answer is checked against the schema
(`StateChange`) and against the catalog and the phrase table: a genre must be a genre word, a
person a person of the catalog, a subject on the curated list, a title a catalog title, a
position one that was shown. Anything else and the answer is refused whole; the caller then keeps
the offline reader's reading, so a bad answer costs nothing but the call. An endpoint that fails
(`LLMError`) fails the turn, as the reply's own call would.
"""

from __future__ import annotations

import json
import re
from typing import Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.catalogs.catalog import Catalog, CatalogItem, person_key
from arena.conversation.dialogue_state import Act, Constraint, DialogueState
from arena.llm import LLMClient
from arena.llm.json_output import json_object
from arena.reading.phrase_table import known_subject, moods_named
from arena.reading.vocabulary import GENRE_WORDS

ASPECTS = ("plot", "director", "writer", "stars", "year", "genres", "suitability", "true_story", "rating", "runtime",
           "compare_children")
_SLOTS_FROM_MODEL = ("genre", "person", "era", "kind", "mood", "audience", "subject", "intensity")
_ERA = re.compile(r"^(1[89]\d\d|20\d\d|2100)-(1[89]\d\d|20\d\d|2100)$")
PROMPT = """You keep track of what a person wants from a movie recommender.
Known genres: {genres}.
The state so far, as JSON: {state}
The items just shown, by position: {shown}
The person's new message: {message}
Answer with one JSON object and nothing else:
{{"act": one of request, question, reject, seen, accept, end, chat, correction, shrug, clarify,
 "constraints": the constraints in force after the message, each {{"slot": genre|person|era|kind|mood|
audience|subject|intensity, "value": ..., "polarity": "want"|"avoid", "scope": "all"|"any"}}
(era as "1990-1999"; audience "children"; kind film, series or book; a refinement replaces, a new
wish adds, "start over" clears),
 "refers_to": the positions (1 = first) of shown items the message is about,
 "titles": titles the message names, "aspect": for a question, one of {aspects}, else null}}"""


class StateChange(BaseModel):
    """The model's answer, as the schema allows it."""

    model_config = ConfigDict(extra="ignore")

    act: Act
    constraints: list[Constraint] = Field(default_factory=list)
    refers_to: list[int] = Field(default_factory=list)
    titles: list[str] = Field(default_factory=list)
    aspect: Optional[Literal[ASPECTS]] = None  # type: ignore[valid-type]


class LLMStateReader:
    """Reads one message into a `StateChange` with the project's one LLM client."""

    def __init__(self, llm: LLMClient, catalog: Catalog, *, max_tokens: int = 300):
        self.llm = llm
        self.catalog = catalog
        self.max_tokens = max_tokens
        self.label = f"llm:{llm.describe()}"
        self.refused = 0  # answers that failed the schema or the catalog (the offline reading was kept)

    def read(self, state: DialogueState, message: str, shown: Sequence[CatalogItem]
             ) -> Optional[tuple[StateChange, list[CatalogItem]]]:
        """(the checked change, the items it refers to), or None when the answer cannot be used."""
        prompt = PROMPT.format(
            genres=", ".join(sorted(set(GENRE_WORDS.values()))),
            state=json.dumps([c.model_dump(exclude={"since"}) for c in state.constraints]),
            shown=json.dumps({n: i.label for n, i in enumerate(shown, start=1)}),
            message=json.dumps(message), aspects=", ".join(ASPECTS))
        # An endpoint that fails (LLMError) is not a bad answer: the turn fails as with any other model call
        # and is recorded as a failed turn, rather than going on to a reply call on the same endpoint.
        answer = self.llm.complete([{"role": "user", "content": prompt}], max_tokens=self.max_tokens,
                                   json_mode=True)
        checked = self.check(json_object(answer.text), shown)
        if checked is None:
            self.refused += 1
        return checked

    def check(self, raw: Optional[dict], shown: Sequence[CatalogItem]
              ) -> Optional[tuple[StateChange, list[CatalogItem]]]:
        if raw is None:
            return None
        try:
            change = StateChange.model_validate(raw)
        except ValidationError:
            return None
        if not all(self._valid(c) for c in change.constraints):
            return None
        if any(not 1 <= n <= len(shown) for n in change.refers_to):
            return None
        about = [shown[n - 1] for n in change.refers_to]
        for title in change.titles:
            item = self.catalog.find_title(title)
            if item is None:
                return None
            about.append(item)
        if change.act == "question" and (change.aspect is None or not about):
            return None
        return change, about

    def _valid(self, c: Constraint) -> bool:
        """Whether a constraint holds only words the reader knows (the closed vocabulary)."""
        if c.slot not in _SLOTS_FROM_MODEL:
            return False
        value = c.value.strip().lower()
        if c.slot == "genre":
            return value in set(GENRE_WORDS.values())
        if c.slot == "person":
            linked = self.catalog.link_people(c.value)
            return any(person_key(name) == person_key(c.value) for name, _, _ in linked)
        if c.slot == "era":
            match = _ERA.match(value)
            return bool(match) and int(match.group(1)) <= int(match.group(2))
        if c.slot == "kind":
            return value in ("film", "series", "book")
        if c.slot == "audience":
            return value == "children"
        if c.slot == "subject":
            return known_subject(value)
        if c.slot == "mood":
            return moods_named(value) == [value]
        return value in ("gore", "violence")
