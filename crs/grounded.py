"""ChatCRS with a small bundled model: the reply is assembled, not generated.

A 135M model invents titles, years and people when asked to recommend, so
here it never does: the items come from the recommender, every fact about an
item (year, genres, director, stars, plot) is copied from the catalog entry,
and the model contributes at most one short connecting sentence. That
sentence is checked (`connector_problem`): it may name no title, hold no
number, and every capitalised word inside it must come from the shown items'
catalog entries, and it must be tied to the user's last message (share a
content word with it, carry no apology or condolence: `tied_to_message`); if
it fails, it is left out and the policy's template sentence stands alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from arena.catalogs.catalog import Catalog, CatalogItem, person_label
from arena.dialogue import Dialogue, Role
from arena.llm import LLMClient, LLMError
from arena.reading.vocabulary import genre_label
from arena.titles.phrases import tokenize
from crs.item_answers import tied_to_message
from crs.reply_check import named_titles, sentence_spans

NAMED_IN_TEXT = 3  # items described in the text; the rest of the shown list speaks for itself
CONNECTOR_MAX_WORDS = 20
CONNECTOR_MAX_TOKENS = 16  # a twelve-word sentence; each generated token is most of the turn's cost
CONNECTOR_CONTEXT_CHARS = 160  # the end of the last message: enough to react to, few tokens to read
PLOT_MAX_CHARS = 180
PLOT_SENTENCE_MAX_CHARS = 260  # a first sentence up to this is kept whole
QUESTIONS = (
    "What kind of {kind} are you in the mood for? A genre, a favourite title or an actor would help.",
    "Tell me a bit more: is there a title you loved lately, or a genre you would like?",
    "What should it be like: funny, scary, romantic, exciting? Any favourite actors or directors?",
)
INTRODUCTIONS = ("Here are a few picks for you:", "These might suit you:", "You could try these:")
# Words that state facts about an item; facts come from the catalog, never from the model.
_FACT_WORDS = re.compile(
    r"\b(direct\w*|star(s|ring|red)?|actor|actress|cast|released?|plot|sequel|prequel|remake|"
    r"oscars?|awards?|won|wins|based on|book|novel|true story|box office|rated|rating|minutes|"
    r"called|titled|named)\b",
    re.IGNORECASE,
)
_STARTS_SENTENCE = re.compile(r"(^|[.!?]\s+)$")
# The first sentence is all we use: stop there rather than pay for more tokens.
_STOPS = ("\n", ". ", "! ", "? ")
_ALWAYS_CAPITALISED = frozenset({"i", "im", "ive", "id", "ill"})


def connector_problem(sentence: str, items: Sequence[CatalogItem], catalog: Catalog) -> Optional[str]:
    """Why the model's sentence cannot go into a reply about `items`, or None if it can."""
    text = sentence.strip()
    words = text.split()
    if not words:
        return "empty"
    if len(words) > CONNECTOR_MAX_WORDS:
        return "too long"
    if any(ch.isdigit() for ch in text):
        return "holds a number"
    if any(ch in text for ch in "\"“”*_<>[]{}|#@:/\\"):
        return "holds markup or quotes"
    if named_titles(text, catalog):
        return "names a title"
    if _FACT_WORDS.search(text):
        return "states a fact"
    allowed = _catalog_words(items)
    for token in tokenize(text):
        if not token.raw[0].isupper() or token.norm in _ALWAYS_CAPITALISED:
            continue
        if _STARTS_SENTENCE.search(text[: token.start]):
            continue
        if token.norm not in allowed:
            return f"names something not in the catalog entries ({token.raw})"
    return None


def _catalog_words(items: Sequence[CatalogItem]) -> set[str]:
    words: set[str] = set()
    for item in items:
        for value in (*item.genres, *(n for names in item.people.values() for n in names)):
            words.update(t.norm for t in tokenize(value))
    return words


def fact_line(item: CatalogItem) -> str:
    """One item as the catalog describes it: label, what it is (OpenDialKG mixes films, series and
    books), genres, director or writer, stars, then its plot."""
    details = []
    if item.dataset == "opendialkg":
        details.append({"film": "film", "series": "TV series", "book": "book"}[item.kind])
    if item.genres:
        details.append(", ".join(dict.fromkeys(genre_label(g) for g in item.genres[:3])))
    if item.people.get("director"):
        details.append("directed by " + " and ".join(map(person_label, item.people["director"][:2])))
    elif item.kind == "book" and item.people.get("writer"):
        details.append("by " + " and ".join(map(person_label, item.people["writer"][:2])))
    cast = item.people.get("star") or item.people.get("actor")
    if cast:
        details.append("starring " + ", ".join(map(person_label, cast[:2])))
    line = item.label + (f" ({'; '.join(details)})" if details else "") + "."
    plot = short_plot(item.plot)
    if plot:
        line += " " + plot
    return line


def short_plot(plot: str) -> str:
    """The plot in whole sentences up to PLOT_MAX_CHARS; a first sentence a little longer is kept whole
    (a summary cut off mid-clause reads as a broken reply). Only a first sentence far over the limit is
    cut at a word, and then it says so with an ellipsis."""
    plot = plot.strip()
    if len(plot) <= PLOT_MAX_CHARS:
        return plot
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'])", plot)
    kept = sentences[0]
    for sentence in sentences[1:]:
        if len(kept) + 1 + len(sentence) > PLOT_MAX_CHARS:
            break
        kept += " " + sentence
    if len(kept) <= PLOT_SENTENCE_MAX_CHARS:
        return kept
    return kept[: PLOT_MAX_CHARS - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."


@dataclass
class GroundedReplies:
    catalog: Catalog
    llm: Optional[LLMClient]
    prompt: str
    item_kind: str
    temperature: float = 0.0
    last_connector_problem: Optional[str] = field(default=None, init=False)  # why the last sentence was left out

    def reply(self, dialogue: Dialogue, shown: Sequence[CatalogItem], opening: Optional[str] = None,
              lead: str = "", use_model: bool = True) -> str:
        """`opening` replaces the plain introduction (the policy says what it did with the
        message); `lead` goes first (a correction's note); the model's sentence is asked for only
        when `use_model` (a plain request) and kept only when it fits the message."""
        turn = sum(1 for u in dialogue.utterances if u.role == Role.AGENT)
        connector = self.connector(dialogue, shown) if use_model else ""
        parts = [p for p in (lead, connector) if p]
        if not shown:
            parts.append(QUESTIONS[turn % len(QUESTIONS)].format(kind=_singular(self.item_kind)))
            return " ".join(parts)
        parts.append(opening or INTRODUCTIONS[turn % len(INTRODUCTIONS)])
        lines = [" ".join(parts)]
        lines += [f"{n}. {fact_line(item)}" for n, item in enumerate(shown[:NAMED_IN_TEXT], 1)]
        return "\n".join(lines)

    def connector(self, dialogue: Dialogue, shown: Sequence[CatalogItem]) -> str:
        """The model's sentence, if it passes the check; otherwise nothing."""
        self.last_connector_problem = None
        last_user = next((u.text for u in reversed(dialogue.utterances) if u.role == Role.USER), "")
        if self.llm is None or not last_user.strip():
            return ""
        messages = [
            {"role": "system", "content": self.prompt},
            {"role": "user", "content": _tail(last_user.strip(), CONNECTOR_CONTEXT_CHARS)},
        ]
        try:
            response = self.llm.complete(
                messages, temperature=self.temperature, max_tokens=CONNECTOR_MAX_TOKENS, stop=list(_STOPS)
            )
            raw = response.text.strip()
            if raw and raw[-1] not in ".!?" and response.completion_tokens < CONNECTOR_MAX_TOKENS:
                raw += "."  # generation stopped at the end of its first sentence
        except LLMError as exc:
            # The reply stands without the connecting sentence; the facts need no model.
            self.last_connector_problem = f"model failed: {exc}"
            return ""
        sentences = [raw[a:b].strip() for a, b in sentence_spans(raw.strip())]
        if not sentences:
            self.last_connector_problem = "empty"
            return ""
        sentence = sentences[0]
        if sentence[-1:] not in ".!?":
            self.last_connector_problem = "unfinished"
            return ""
        self.last_connector_problem = (connector_problem(sentence, shown, self.catalog)
                                       or tied_to_message(sentence, last_user))
        return "" if self.last_connector_problem else sentence


def _tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text`, starting at a word."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    return cut.split(" ", 1)[1] if " " in cut else cut


def _singular(kind: str) -> str:
    return {"movies": "movie"}.get(kind, "title")


def read_prompt(path: Path, item_kind: str) -> str:
    return Path(path).read_text(encoding="utf-8").replace("{item_kind}", item_kind).strip()
