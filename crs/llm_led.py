"""ChatCRS led by a capable LLM: it chooses the recommendations itself.

As in the original ChatCRS (iEvaLM, CRS Arena), the LLM recommends from its
own knowledge; the recommender's best candidates are offered in the prompt as
suggestions it may use. The titles the reply names are then linked to catalog
items (`TitleMatcher`: fuzzy, then embedding), and the shown items are the
linked ones in the order the reply names them. A draft naming titles that
cannot be shown (unknown to the catalog, turned down by the person, already
suggested) is written again once with those titles listed; whatever such
titles remain take their sentence with them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.dialogue import Dialogue, Role
from arena.llm import LLMClient, LLMError, Message
from arena.titles.phrases import normalize, unique
from arena.conversation.crs_interface import TOP_K_SHOWN
from crs.reply_check import NamedTitle, drop_sentences, named_titles, replace_spans, sentence_spans
from crs.title_matching import TitleMatcher

OFFERED_CANDIDATES = 10  # recommender candidates listed in the prompt as suggestions
HISTORY_UTTERANCES = 12
MENTIONED_REFERENCE = "the one you mentioned"


@dataclass
class Draft:
    """A reply as the LLM wrote it, its titles sorted by what may be done with them."""

    text: str
    recommended: list[NamedTitle] = field(default_factory=list)  # new titles, shown
    references: list[NamedTitle] = field(default_factory=list)  # titles the person brought up
    refused: list[NamedTitle] = field(default_factory=list)  # unknown, turned down or repeated

    def refused_names(self) -> list[str]:
        return list(dict.fromkeys(t.text.strip("\"“”*_ ") for t in self.refused))


@dataclass
class History:
    """What the dialogue says about titles: turned down, brought up, already shown."""

    rejected: set[str] = field(default_factory=set)  # normalised titles
    mentioned: set[str] = field(default_factory=set)
    shown: set[str] = field(default_factory=set)
    rejected_labels: list[str] = field(default_factory=list)
    shown_labels: list[str] = field(default_factory=list)


def read_history(dialogue: Dialogue, mentioned: Sequence[tuple[int, CatalogItem, bool]]) -> History:
    history = History()
    for _, item, liked in mentioned:
        key = normalize(item.title)
        if liked:
            history.mentioned.add(key)
        elif key not in history.rejected:
            history.rejected.add(key)
            history.rejected_labels.append(item.label)
    for utterance in dialogue.utterances:
        if utterance.role == Role.AGENT:
            for shown in utterance.items:
                key = normalize(shown.title.rsplit(" (", 1)[0])
                if key not in history.shown:
                    history.shown.add(key)
                    history.shown_labels.append(shown.title)
    return history


def sort_titles(text: str, catalog: Catalog, matcher: TitleMatcher, history: History) -> Draft:
    draft = Draft(text)
    kept: list[str] = []
    for title in named_titles(text, catalog, resolve=matcher.match):
        key = normalize(title.item.title) if title.item is not None else None
        if key is None or key in history.rejected or key in history.shown:
            draft.refused.append(title)
        elif key in history.mentioned:
            draft.references.append(title)
        elif key in kept or len(kept) < TOP_K_SHOWN:
            if key not in kept:
                kept.append(key)
            draft.recommended.append(title)
        else:
            draft.refused.append(title)  # more titles than the list shows
    return draft


def finish(draft: Draft) -> tuple[str, list[CatalogItem]]:
    """Drop the sentences with refused titles and refer to the person's own titles without
    naming them; the shown items are the recommended titles left, in the order named."""
    text = replace_spans(draft.text, [(t.start, t.end, "\x00" * (t.end - t.start)) for t in draft.references])
    keep_together = [(t.start, t.end) for t in draft.recommended + draft.refused + draft.references]
    refused = [(t.start, t.end) for t in draft.refused]
    kept_sentences = [
        (start, end)
        for start, end in sentence_spans(text, keep_together)
        if not any(s < end and start < e for s, e in refused)
    ]
    shown = unique(
        t.item for t in draft.recommended
        if t.item is not None and any(start <= t.start < end for start, end in kept_sentences)
    )
    kept = drop_sentences(text, refused, keep_together)
    return re.sub("\x00+", MENTIONED_REFERENCE, kept), shown


@dataclass
class LLMLedReplies:
    catalog: Catalog
    llm: LLMClient
    matcher: TitleMatcher
    system_prompt: str
    clean: Callable[[str], str]
    temperature: float = 0.0
    max_tokens: int = 220

    def reply(
        self, dialogue: Dialogue, history: History, candidates: Sequence[CatalogItem]
    ) -> tuple[str, list[CatalogItem]]:
        messages = self.build_messages(dialogue, history, candidates)
        draft = self._draft(messages, history)
        if draft.refused:
            note = (
                "Your draft named titles that cannot be offered (not in the catalog, turned down, or "
                "already suggested): " + "; ".join(draft.refused_names())
                + ". Write the reply again without them."
            )
            retry = [dict(messages[0], content=messages[0]["content"] + "\n\n" + note), *messages[1:]]
            draft = self._draft(retry, history)
        return finish(draft)

    def _draft(self, messages: list[Message], history: History) -> Draft:
        response = self.llm.complete(messages, temperature=self.temperature, max_tokens=self.max_tokens)
        text = self.clean(response.text)
        if not text:
            raise LLMError("the language model returned an empty reply")
        return sort_titles(text, self.catalog, self.matcher, history)

    def build_messages(
        self, dialogue: Dialogue, history: History, candidates: Sequence[CatalogItem]
    ) -> list[Message]:
        notes = []
        if candidates:
            lines = [f"- {item.label}" for item in candidates[:OFFERED_CANDIDATES]]
            notes.append(
                "Titles from the catalog that match the conversation (use them if they fit; "
                "you may suggest others):\n" + "\n".join(lines)
            )
        if history.rejected_labels:
            notes.append("Turned down by the person: " + "; ".join(history.rejected_labels))
        if history.shown_labels:
            notes.append("Already suggested: " + "; ".join(history.shown_labels))
        system = self.system_prompt.strip() + ("\n\n" + "\n\n".join(notes) if notes else "")
        messages: list[Message] = [{"role": "system", "content": system}]
        messages += conversation_messages(dialogue, HISTORY_UTTERANCES)
        return messages


def conversation_messages(dialogue: Dialogue, limit: int) -> list[Message]:
    """The last `limit` utterances as chat messages, ending with the person's turn."""
    messages: list[Message] = []
    for utterance in dialogue.utterances[-limit:]:
        if utterance.error or not utterance.text.strip():
            continue
        role = "user" if utterance.role == Role.USER else "assistant"
        messages.append({"role": role, "content": utterance.text.strip()})
    if not messages or messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": "Hello!"})
    return messages
