"""Titles the user holds up as the model of the wish, and the order they give a list.

"I really liked Uncle Buck and Home Alone" asks for films like those two: of their kind, not films that
share a word of their titles. The ranker already reads a named title as an item rather than as words, but
the co-mention counts and the items' own embeddings still bring titles that only look alike ("Daddy's Home"
beside Home Alone, "Bride Wars" beside Bridesmaids), and genres asked earlier can fill a list with titles
of nothing like the model ("I also loved Mr. Holland's Opus" after comedies, answered with crime comedies).
So, among the candidates that keep to the conversation's constraints, those that share a genre with a
model title and no title word with any come first; the others stay, after them, for a list that would
otherwise run short. A named title's own series is left out where the title is read (`crs.franchises`).

The models are the titles the latest user turn that spoke well of any spoke well of: "I also like
Pacquiao" makes Pacquiao the model from then on, as a person reads it, and the titles liked before it stop
leading by their genres; a word of any of their titles still brings no lookalike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.conversation.dialogue_state import DialogueState, liked_lately
from arena.titles.phrases import normalize
from crs.franchises import franchise_key, title_stems


def model_titles(state: DialogueState | None, catalog: Catalog, text: str = ""
                 ) -> tuple[list[CatalogItem], list[CatalogItem]]:
    """(the models of the latest user turn that spoke well of a title, every title spoken well of or held
    up so far). A title the last message (`text`) asks for as a kind ("a Star Wars movie") is what is
    wanted, not a model, and counts in neither."""
    if state is None:
        return [], []
    held = [c.value for c in state.constraints if c.slot == "like"]
    found = {x: catalog.get(x) for x in dict.fromkeys([*held, *(m.item_id for m in state.mentioned)])}
    wanted = {x: i for x, i in found.items() if i is not None and not named_as_kind(text, i)}
    liked = [m for m in state.mentioned if m.liked and m.item_id in wanted]
    every = [wanted[x] for x in dict.fromkeys([*held, *(m.item_id for m in liked)]) if x in wanted]
    latest = set(liked_lately(liked))
    return [i for i in every if i.item_id in latest], every


def named_as_kind(text: str, item: CatalogItem) -> bool:
    """"I want a Star Wars movie", "any Harry Potter films": the title's series named as the kind of film."""
    key = franchise_key(item)
    return bool(key) and re.search(rf"\b{re.escape(key)}\s+(movie|film|one)s?\b", normalize(text)) is not None


def _genres(item: CatalogItem) -> set[str]:
    return {g.lower() for g in item.genres}


def like_the_models(item: CatalogItem, models: Sequence[CatalogItem], held: Sequence[CatalogItem] = (), *,
                    lookalikes_allowed: bool = False) -> bool:
    """Whether the item reads as one "like" the models: it shares a genre with one of them (when the
    catalog gives them genres) and, unless the series is asked for, no title word with any title held up."""
    if not lookalikes_allowed and any(title_stems(item) & title_stems(m) for m in (*models, *held)):
        return False
    model_genres = set().union(*(_genres(m) for m in models)) if models else set()
    return not model_genres or bool(_genres(item) & model_genres)


def models_first(items: list[CatalogItem], models: Sequence[CatalogItem], held: Sequence[CatalogItem] = (), *,
                 lookalikes_allowed: bool = False) -> list[CatalogItem]:
    """The items, those like the models first, each part in its ranked order."""
    if not models and not held:
        return items
    ids = {m.item_id for m in (*models, *held)}
    items = [i for i in items if i.item_id not in ids]
    fit = [like_the_models(i, models, held, lookalikes_allowed=lookalikes_allowed) for i in items]
    return [i for i, ok in zip(items, fit) if ok] + [i for i, ok in zip(items, fit) if not ok]


__all__ = ["like_the_models", "model_titles", "models_first"]
