"""Turning a dialogue's utterances into the act model's inputs.

The model is a cross-encoder: it reads a pair of texts per utterance. The first
holds the context: a few exact facts from deterministic extraction, spelled as
words, and the utterance just before it. The second is the utterance itself,
after its role. Titles are replaced by a placeholder in both, so "I loved MOVIE"
reads the same whatever the movie.

The facts say how many titles the utterance names and how they were found
(items a CRS attached, a numbered list, "Title (Year)", a catalog link), whether
those titles are new to the dialogue or the user's own, and whether a
recommendation is pending (one of the two system turns before it named a title
new to the dialogue or attached items). No hand-written intent cue is involved:
the intent is the model's.

`INPUT_LAYOUT` names this layout; it is stored in the artifact and a mismatch
refuses to load.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

from arena.dialogue import Dialogue, RecommendedItem, Role, Utterance
from evaluators.acts.offers import cut_short, echoed_mentions
from arena.titles.linking import Mention, TitleLinker, find_mentions, list_mentions, mask_titles
from arena.titles.names import title_key

INPUT_LAYOUT = "pairs-v1"
# Words kept of each text: the previous utterance's end (where an offer or a question usually
# sits) and the utterance's start; together they fit the model's 128 tokens.
CONTEXT_WORDS = 48
UTTERANCE_WORDS = 64
ROLE_WORD = {Role.USER: "user", Role.AGENT: "system"}


@dataclass
class UtteranceView:
    """An utterance with the titles found in it."""

    utterance: Utterance
    mentions: list[Mention]
    masked: str
    new_titles: int = 0  # titles nobody named earlier in the dialogue
    user_named: bool = False  # it names titles, all of which the user named earlier

    @property
    def role(self) -> Role:
        return self.utterance.role

    @property
    def title_keys(self) -> set[str]:
        return {title_key(m.title) for m in self.mentions}

    @property
    def is_list(self) -> bool:
        return bool(list_mentions(self.utterance.text))


@lru_cache(maxsize=4096)
def _mentions_of(linker: Optional[TitleLinker], role: Role, text: str, items: tuple[tuple[str, str], ...]
                 ) -> tuple[Mention, ...]:
    """`find_mentions`, remembered per utterance: a running dialogue is read again at every turn,
    and linking its earlier utterances against the catalogs each time cost more than the network
    pass. The key holds the linker itself, so a new linker never meets an old one's entries."""
    utt = Utterance(role=role, text=text, items=[RecommendedItem(item_id=i, title=t) for i, t in items])
    return tuple(find_mentions(utt, linker))


def view_dialogue(dialogue: Dialogue, linker: Optional[TitleLinker] = None) -> list[UtteranceView]:
    views: list[UtteranceView] = []
    named: set[str] = set()
    named_by_user: set[str] = set()
    for utt in dialogue.utterances:
        mentions = list(
            _mentions_of(linker, utt.role, utt.text, tuple((i.item_id, i.title) for i in utt.items))
        )
        if utt.role == Role.AGENT:
            mentions = [m for m in mentions if not cut_short(utt.text, m)]
        else:
            recent = [m for v in views[-4:] if v.role == Role.AGENT for m in v.mentions]
            mentions = sorted(
                [*mentions, *echoed_mentions(utt.text, recent, mentions)], key=lambda m: m.start
            )
        view = UtteranceView(utterance=utt, mentions=mentions, masked=mask_titles(utt.text, mentions))
        keys = view.title_keys
        view.new_titles = len(keys - named)
        view.user_named = bool(keys) and keys <= named_by_user
        named |= keys
        if utt.role == Role.USER:
            named_by_user |= keys
        views.append(view)
    return views


def recommendation_pending(views: Sequence[UtteranceView], index: int) -> bool:
    """One of the two system turns before `index` named a title new to the dialogue or attached items."""
    seen = 0
    for j in range(index - 1, -1, -1):
        if views[j].role != Role.AGENT:
            continue
        if views[j].new_titles or views[j].utterance.items:
            return True
        seen += 1
        if seen >= 2:
            break
    return False


def facts(views: Sequence[UtteranceView], index: int) -> list[str]:
    """The exact facts about utterance `index`, each a short phrase (the act model reads them in this
    order)."""
    view = views[index]
    prev = views[index - 1] if index > 0 else None
    out = _own_facts(view, index)
    if prev is not None and view.title_keys & prev.title_keys:
        out.append("same title as before")
    if recommendation_pending(views, index):
        out.append("recommendation pending")
    if prev is not None:
        out += _previous_facts(prev)
    return out


def _own_facts(view: UtteranceView, index: int) -> list[str]:
    sources = {m.source for m in view.mentions}
    flags = [
        (index == 0, "first turn"),
        (bool(view.mentions), f"{min(len(view.mentions), 3)} titles"),
        (bool(view.new_titles), f"{min(view.new_titles, 3)} new titles"),
        (bool(view.user_named), "titles the user named"),
        (bool(view.utterance.items), "items attached"),
        (bool(view.is_list), "numbered list"),
        ("year" in sources, "title with year"),
        ("catalog" in sources, "catalog title"),
    ]
    return [fact for holds, fact in flags if holds]


def _previous_facts(prev: UtteranceView) -> list[str]:
    flags = [
        (bool(prev.utterance.items), "previous items attached"),
        (bool(prev.is_list), "previous numbered list"),
        (bool(prev.new_titles), "previous new titles"),
    ]
    return [fact for holds, fact in flags if holds]


def _words(text: str, n: int, keep_end: bool = False) -> str:
    words = text.split()
    if len(words) <= n:
        return " ".join(words)
    return " ".join(words[-n:] if keep_end else words[:n])


def pair_text(views: Sequence[UtteranceView], index: int) -> tuple[str, str]:
    """(context, utterance) texts for utterance `index`."""
    view = views[index]
    context = "; ".join(facts(views, index)) or "no facts"
    if index > 0:
        prev = views[index - 1]
        context += f" | {ROLE_WORD[prev.role]}: {_words(prev.masked, CONTEXT_WORDS, keep_end=True)}"
    return context, f"{ROLE_WORD[view.role]}: {_words(view.masked, UTTERANCE_WORDS)}"


def dialogue_pairs(dialogue: Dialogue, linker: Optional[TitleLinker] = None, last_only: bool = False
                   ) -> tuple[list[UtteranceView], list[tuple[str, str]]]:
    """The views and (context, utterance) pairs of every utterance, or of the last one alone
    (`last_only`; the views before it are still read, for the facts)."""
    views = view_dialogue(dialogue, linker)
    indexes = range(len(views))[-1:] if last_only else range(len(views))
    return [views[i] for i in indexes], [pair_text(views, i) for i in indexes]
