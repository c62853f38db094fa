"""ChatCRS: an LLM writes the replies, embedding retrieval picks the items.

As in the papers' LLM-based system, the model never invents the item list:
the conversation so far (the user's recent utterances weigh more, and the
titles they liked pull the query towards those items) is embedded and
matched against the catalog's item embeddings. The best `TOP_K_KEPT` are
kept (`rank`), the best `TOP_K_SHOWN` are shown and handed to the LLM as its
only allowed candidates. Items the user mentioned, turned down or was
already shown are excluded. Before the user has expressed any preference
the system asks a question instead and recommends nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from arena.catalog import CATALOG_DIR, DATASETS, Catalog, CatalogItem, load_catalog
from arena.config import ASSETS_DIR
from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.llm import LLMClient, LLMError, Message
from arena.mentions import normalize
from arena.retrieval import INSTALL_FIX, ItemRetriever, embedding_problem
from arena.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable

PROMPT_VERSION = "chatcrs_v1"
PROMPT_PATH = ASSETS_DIR / "prompts" / f"{PROMPT_VERSION}.txt"
ITEM_KINDS = {"redial": "movies", "opendialkg": "movies, TV shows and books"}

HISTORY_UTTERANCES = 12  # utterances of context the LLM sees
QUERY_UTTERANCES = 6  # user utterances that shape the retrieval query
RECENCY_DECAY = 0.5  # each older user utterance counts half as much
TITLE_WEIGHT = 0.8  # a liked title, relative to the utterance that mentions it
REJECTED_WEIGHT = 0.3  # pushes the query away from titles the user disliked
MAX_REPLY_CHARS = 1200

_NEGATIVE = re.compile(
    r"\b(not|never|no|don'?t|didn'?t|doesn'?t|isn'?t|wasn'?t|hate[ds]?|dislike[ds]?|boring|awful|"
    r"terrible|worst|already (seen|watched)|seen (it|that)|watched (it|that))\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(recommend\w*|suggest\w*|looking for|want|watch\w*|something|anything|ideas?|similar|"
    r"like[ds]?|love[ds]?|enjoy\w*|prefer\w*|into|fan|favou?rite|mood|another|else|more|other|"
    r"genre|actor|actress|director|funny|scary|sad|action|comedy|drama|horror|thriller|romantic)\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.!?;]+|,?\s+\b(but|although|though|whereas|however)\b", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")
_SPEAKER_PREFIX = re.compile(r"^\s*(assistant|system|recommender)\s*:\s*", re.IGNORECASE)


@dataclass
class DialogueState:
    """What the conversation so far tells the recommender."""

    mentioned: list[tuple[int, CatalogItem, bool]] = field(default_factory=list)  # (age, item, liked)
    shown_ids: set[str] = field(default_factory=set)
    user_texts: list[str] = field(default_factory=list)  # oldest first
    has_preference: bool = False
    reacting_to_items: bool = False

    @property
    def recommend(self) -> bool:
        return self.has_preference or self.reacting_to_items

    def excluded(self) -> set[str]:
        return self.shown_ids | {item.item_id for _, item, _ in self.mentioned}


def clean_reply(text: str) -> str:
    """Plain text for the chat: no markup, no speaker label, bounded length."""
    text = _TAG.sub("", text or "")
    text = text.replace("<", "").replace(">", "")
    text = _SPEAKER_PREFIX.sub("", text)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if len(text) > MAX_REPLY_CHARS:
        cut = text[:MAX_REPLY_CHARS]
        end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
        text = cut[: end + 1] if end > MAX_REPLY_CHARS // 2 else cut.rstrip() + "..."
    return text


class ChatCRS(ConversationalRecommender):
    def __init__(
        self,
        name: str,
        catalog: Catalog,
        retriever: ItemRetriever,
        llm: LLMClient,
        *,
        prompt_path: Path = PROMPT_PATH,
        temperature: float = 0.0,
        max_tokens: int = 220,
    ):
        self.name = name
        self.catalog = catalog
        self.retriever = retriever
        self.llm = llm
        self.temperature = temperature
        self.max_tokens = max_tokens
        item_kind = ITEM_KINDS.get(catalog.dataset, "items")
        self.system_prompt = Path(prompt_path).read_text(encoding="utf-8").replace("{item_kind}", item_kind)
        self.prompt_version = Path(prompt_path).stem

    # -- the turn -----------------------------------------------------------------
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        state = self.analyse(dialogue)
        ranking = self.rank(dialogue, state) if state.recommend else []
        shown = [item for item, _ in ranking[:TOP_K_SHOWN]]
        response = self.llm.complete(
            self.build_messages(dialogue, shown),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        text = clean_reply(response.text)
        if not text:
            raise LLMError("the language model returned an empty reply")
        return text, [item.to_recommended() for item in self._mentioned_first(text, shown)]

    def analyse(self, dialogue: Dialogue) -> DialogueState:
        state = DialogueState()
        user_turns = [u for u in dialogue.utterances if u.role == Role.USER]
        for age, utterance in enumerate(reversed(user_turns)):
            linked = self.catalog.link_spans(utterance.text)
            for item, start, _ in linked:
                state.mentioned.append((age, item, not _NEGATIVE.search(_clause(utterance.text, start))))
            if linked or _PREFERENCE.search(utterance.text) or self._has_attribute(utterance.text):
                state.has_preference = True
        state.user_texts = [u.text for u in user_turns]
        for utterance in dialogue.utterances:
            if utterance.role == Role.AGENT:
                state.shown_ids.update(item.item_id for item in utterance.items)
        last_agent = next((u for u in reversed(dialogue.utterances) if u.role == Role.AGENT), None)
        state.reacting_to_items = bool(last_agent and last_agent.items and user_turns)
        return state

    def rank(
        self, dialogue: Dialogue, state: Optional[DialogueState] = None
    ) -> list[tuple[CatalogItem, float]]:
        """The `TOP_K_KEPT` best items for the dialogue so far, best first."""
        state = state or self.analyse(dialogue)
        query = self._query_vector(state)
        if query is None:
            return []
        excluded = state.excluded()
        # Several catalog entries can share a title (e.g. with and without the year).
        seen_titles = {normalize(self.catalog.get(i).title) for i in excluded if self.catalog.get(i)}
        ranking = []
        for item, score in self.retriever.search_vector(query, k=TOP_K_KEPT * 2, exclude_ids=excluded):
            key = normalize(item.title)
            if key not in seen_titles:
                seen_titles.add(key)
                ranking.append((item, score))
            if len(ranking) == TOP_K_KEPT:
                break
        return ranking

    # -- pieces ---------------------------------------------------------------------
    def _has_attribute(self, text: str) -> bool:
        return bool(self.catalog.link_entities(text))

    def _query_vector(self, state: DialogueState) -> Optional[np.ndarray]:
        texts = [t for t in state.user_texts[-QUERY_UTTERANCES:] if t.strip()]
        if not texts:
            return None
        vectors = self.retriever.encode(texts)
        ages = np.arange(len(texts) - 1, -1, -1, dtype=np.float32)  # the latest utterance has age 0
        weights = RECENCY_DECAY**ages
        query = (weights[:, None] * vectors).sum(axis=0)
        for age, item, liked in state.mentioned:
            if age >= QUERY_UTTERANCES:
                continue
            vector = self.retriever.item_vector(item)
            if vector is not None:
                sign = TITLE_WEIGHT if liked else -REJECTED_WEIGHT
                query = query + sign * (RECENCY_DECAY**age) * vector
        norm = float(np.linalg.norm(query))
        return query / norm if norm > 0 else None

    def build_messages(self, dialogue: Dialogue, candidates: list[CatalogItem]) -> list[Message]:
        if candidates:
            lines = [f"{rank}. {_candidate_line(item)}" for rank, item in enumerate(candidates, 1)]
            note = (
                "Candidates for your next reply (recommend only from these, best match first):\n"
                + "\n".join(lines)
            )
        else:
            note = "No candidates this turn: do not recommend a title; ask what they would enjoy."
        messages: list[Message] = [{"role": "system", "content": f"{self.system_prompt.strip()}\n\n{note}"}]
        for utterance in dialogue.utterances[-HISTORY_UTTERANCES:]:
            if utterance.error or not utterance.text.strip():
                continue
            role = "user" if utterance.role == Role.USER else "assistant"
            messages.append({"role": role, "content": utterance.text.strip()})
        if len(messages) == 1 or messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": "Hello!"})
        return messages

    def _mentioned_first(self, text: str, shown: list[CatalogItem]) -> list[CatalogItem]:
        """The shown items, those the reply talks about first (in the order it names them)."""
        reply = f" {normalize(text)} "
        positions = {}
        for item in shown:
            where = reply.find(f" {normalize(item.title)} ")
            if where >= 0:
                positions[item.item_id] = where
        named = sorted((i for i in shown if i.item_id in positions), key=lambda i: positions[i.item_id])
        return named + [i for i in shown if i.item_id not in positions]


def _clause(text: str, position: int) -> str:
    """The clause around `position`: "I hated Cats, but loved Up" splits at the "but"."""
    bounds = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(text)] + [len(text) + 1]
    start = max(b for b in bounds if b <= position)
    end = min(b for b in bounds if b > position)
    return text[start:end]


def _candidate_line(item: CatalogItem) -> str:
    parts = [item.label]
    if item.genres:
        parts.append(", ".join(item.genres[:4]))
    if item.people.get("director"):
        parts.append("directed by " + ", ".join(item.people["director"][:2]))
    cast = item.people.get("star") or item.people.get("actor")
    if cast:
        parts.append("with " + ", ".join(cast[:3]))
    line = " | ".join(parts)
    if item.plot:
        plot = item.plot if len(item.plot) <= 220 else item.plot[:217].rsplit(" ", 1)[0] + "..."
        line += f" | {plot}"
    return line


# -- registration -----------------------------------------------------------------------
def _check(name: str, dataset: str) -> Optional[CRSUnavailable]:
    if not (CATALOG_DIR / dataset / "id2info.json").exists():
        return CRSUnavailable(
            name,
            f"the {dataset} catalog is missing from {CATALOG_DIR / dataset}",
            "restore it with: git checkout -- assets/catalogs",
        )
    if not PROMPT_PATH.exists():
        return CRSUnavailable(
            name, f"the prompt file {PROMPT_PATH} is missing", "git checkout -- assets/prompts"
        )
    problem = embedding_problem()
    if problem is not None:
        return CRSUnavailable(name, problem, INSTALL_FIX)
    return None


def _load(
    name: str,
    dataset: str,
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path,
    catalog_loader: Callable[[str], Catalog],
) -> ChatCRS:
    catalog = catalog_loader(dataset)
    retriever = ItemRetriever(catalog, cache_dir)
    retriever.prepare()  # embeds the catalog the first time (about a minute), then reads the cache
    return ChatCRS(name, catalog, retriever, llm_client_factory())


def chatcrs_specs(
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path | str,
    catalog_loader: Callable[[str], Catalog] = load_catalog,
) -> list[CRSSpec]:
    """One ChatCRS per dataset: `chatcrs_redial` and `chatcrs_opendialkg`.

    `catalog_loader` maps a dataset name to its catalog (tests pass a smaller one).
    """
    specs = []
    for dataset in DATASETS:
        name = f"chatcrs_{dataset}"
        label = {"redial": "ReDial", "opendialkg": "OpenDialKG"}[dataset]
        specs.append(
            CRSSpec(
                name=name,
                family="chatcrs",
                dataset=dataset,
                description=(
                    f"ChatCRS on {label}: an LLM writes the replies; the items come from "
                    f"sentence-embedding retrieval over the {label} catalog."
                ),
                load=partial(_load, name, dataset, llm_client_factory, Path(cache_dir), catalog_loader),
                check=partial(_check, name, dataset),
            )
        )
    return specs
