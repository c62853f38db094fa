"""Scripted systems for known-answer tasks: replies a careful worker judges one way only.

A study mixes a few of these tasks among the real ones to see whether a worker
reads before judging (`arena.crowd.study.KnownAnswers`). `good` answers each
request with catalog items of the genres the worker named (the catalog's own
genre lists, the best-known items first) and says why they fit: a careful
worker is satisfied. `off_topic` ignores the request: it talks about something
else and offers items that share none of the genres asked for: a careful worker
is frustrated. Both are deterministic, so the same messages always get the
same reply, and neither needs a model.
"""

from __future__ import annotations

import itertools
from typing import Callable, Literal

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.conversation.crs_interface import ConversationalRecommender
from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.reading.constraints import genre_mentions

KnownKind = Literal["good", "off_topic"]
SHOWN_PER_TURN = 3
# Genres far from most requests, for the off-topic reply when the worker named none.
FAR_GENRES = ("documentary", "western", "musical")
ASIDES = (
    "Did you know that octopuses have three hearts and blue blood?",
    "The tallest mountain on Earth, measured from its base, is Mauna Kea in Hawaii.",
    "Honey never spoils: jars thousands of years old have been found still edible.",
)


class KnownAnswerCRS(ConversationalRecommender):
    """A scripted recommender whose replies are clearly good (`good`) or clearly off-topic (`off_topic`)."""

    def __init__(self, catalog: Catalog, kind: KnownKind):
        if kind not in ("good", "off_topic"):
            raise ValueError(f"kind must be good or off_topic, not {kind!r}")
        self.catalog = catalog
        self.kind = kind
        self.name = f"known_answer_{kind}"
        # The best-known items first, so that a good reply names films a worker can recognise.
        self._by_popularity = sorted(catalog.items, key=lambda item: -catalog.popularity(item))

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        asked = self.asked_genres(dialogue)
        shown = {item.item_id for u in dialogue.utterances for item in u.items}
        turn = sum(1 for u in dialogue.utterances if u.role == Role.AGENT)
        if self.kind == "good":
            return self._good(asked, shown)
        return self._off_topic(asked, shown, turn)

    @staticmethod
    def asked_genres(dialogue: Dialogue) -> list[str]:
        """The genres the worker named so far, in the order named."""
        text = " ".join(u.text for u in dialogue.utterances if u.role == Role.USER)
        return list(dict.fromkeys(genre for genre, _ in genre_mentions(text)))

    def _pick(self, keep: Callable[[CatalogItem], bool], shown: set[str]) -> list[CatalogItem]:
        fresh = (item for item in self._by_popularity if item.item_id not in shown and keep(item))
        return list(itertools.islice(fresh, SHOWN_PER_TURN))

    def _good(self, asked: list[str], shown: set[str]) -> tuple[str, list[RecommendedItem]]:
        if not asked:
            return "Happy to help! Which genre are you in the mood for: a comedy, a thriller, a drama?", []
        items = self._pick(lambda item: bool(set(asked) & set(item.genres)), shown)
        if not items:
            return f"I have no other {' or '.join(asked)} titles to suggest; would another genre do?", []
        lines = [f"- {item.label}: {', '.join(g for g in item.genres if g in asked)}" for item in items]
        opening = f"Since you asked for {' and '.join(asked)}, here are some well-liked picks:"
        return "\n".join([opening, *lines]), [item.to_recommended() for item in items]

    def _off_topic(self, asked: list[str], shown: set[str], turn: int) -> tuple[str, list[RecommendedItem]]:
        avoid = set(asked)
        far = [g for g in FAR_GENRES if g not in avoid]
        items = self._pick(lambda item: not avoid & set(item.genres) and bool(set(far) & set(item.genres)),
                           shown)
        names = ", ".join(item.label for item in items)
        text = f"{ASIDES[turn % len(ASIDES)]} Anyway, you could watch {names}." if items else ASIDES[0]
        return text, [item.to_recommended() for item in items]
