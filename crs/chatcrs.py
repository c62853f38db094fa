"""ChatCRS: an LLM-based CRS with two ways of writing its replies.

`llm_led` (a capable endpoint): as in the original ChatCRS (iEvaLM, CRS
Arena) the LLM recommends from its own knowledge, with the recommender's
candidates offered in the prompt; the titles it names are linked to catalog
items and shown in the order named (`crs.llm_led`).
`grounded` (the bundled 135M model): the items come from the recommender and
the reply is assembled from their catalog entries; the model writes at most
one checked connecting sentence (`crs.grounded`).

The candidates come from `rank`: the conversation so far (recent user
utterances weigh more, liked titles pull the query towards those items) is
embedded and matched against the catalog's item embeddings; items the user
mentioned, turned down or was already shown are excluded. Whatever the mode,
the reply passes `enforce_shown_titles`: it names no title it does not show.
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
from crs.base import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable
from crs.grounded import GroundedReplies, read_prompt
from crs.llm_led import LLMLedReplies, read_history
from crs.reply_check import enforce_shown_titles
from crs.title_matching import TitleMatcher

PROMPTS_DIR = ASSETS_DIR / "prompts"
PROMPT_PATHS = {
    "llm_led": PROMPTS_DIR / "chatcrs_llm_led_v1.txt",
    "grounded": PROMPTS_DIR / "chatcrs_grounded_v1.txt",
}
PROMPT_PATH = PROMPT_PATHS["llm_led"]
MODES = tuple(PROMPT_PATHS)
NO_TITLE_FALLBACK = "What kind of {kind} would you like? Tell me a genre, a title you loved or an actor."
ITEM_KINDS = {"redial": "movies", "opendialkg": "movies, TV shows and books"}

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
        mode: str = "llm_led",
        prompt_path: Optional[Path] = None,
        temperature: float = 0.0,
        max_tokens: int = 220,
    ):
        if mode not in MODES:
            raise ValueError(f"ChatCRS mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.name = name
        self.catalog = catalog
        self.retriever = retriever
        self.llm = llm
        self.mode = mode
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.item_kind = ITEM_KINDS.get(catalog.dataset, "items")
        path = Path(prompt_path or PROMPT_PATHS[mode])
        self.system_prompt = read_prompt(path, self.item_kind)
        self.prompt_version = path.stem
        self.matcher = TitleMatcher(catalog, retriever.encode)
        self.llm_led = LLMLedReplies(
            catalog, llm, self.matcher, self.system_prompt, clean_reply,
            temperature=temperature, max_tokens=max_tokens,
        )
        self.grounded = GroundedReplies(catalog, llm, self.system_prompt, self.item_kind, temperature=temperature)

    # -- the turn -----------------------------------------------------------------
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        state = self.analyse(dialogue)
        candidates = self.candidates(dialogue, state)
        if self.mode == "grounded":
            shown = candidates[:TOP_K_SHOWN]
            text = self.grounded.reply(dialogue, shown)
        else:
            text, shown = self.llm_led.reply(dialogue, read_history(dialogue, state.mentioned), candidates)
        fallback = NO_TITLE_FALLBACK.format(kind=self.item_kind.split(",")[0].rstrip("s"))
        return enforce_shown_titles(text, shown, self.catalog, fallback), [i.to_recommended() for i in shown]

    def candidates(self, dialogue: Dialogue, state: Optional[DialogueState] = None) -> list[CatalogItem]:
        """The recommender's items for this turn, best first (none before a preference is known).
        The one place the reply writers get their candidates from."""
        state = state or self.analyse(dialogue)
        return [item for item, _ in self.rank(dialogue, state)] if state.recommend else []

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
        """The LLM-led prompt for this dialogue with `candidates` offered as suggestions."""
        history = read_history(dialogue, self.analyse(dialogue).mentioned)
        return self.llm_led.build_messages(dialogue, history, candidates)


def _clause(text: str, position: int) -> str:
    """The clause around `position`: "I hated Cats, but loved Up" splits at the "but"."""
    bounds = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(text)] + [len(text) + 1]
    start = max(b for b in bounds if b <= position)
    end = min(b for b in bounds if b > position)
    return text[start:end]


# -- registration -----------------------------------------------------------------------
def _check(name: str, dataset: str) -> Optional[CRSUnavailable]:
    if not (CATALOG_DIR / dataset / "id2info.json").exists():
        return CRSUnavailable(
            name,
            f"the {dataset} catalog is missing from {CATALOG_DIR / dataset}",
            "restore it with: git checkout -- assets/catalogs",
        )
    for path in PROMPT_PATHS.values():
        if not path.exists():
            return CRSUnavailable(name, f"the prompt file {path} is missing", "git checkout -- assets/prompts")
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
    llm = llm_client_factory()
    return ChatCRS(name, catalog, retriever, llm, mode=mode_for(llm))


def mode_for(llm: LLMClient) -> str:
    """The bundled small model only connects catalog facts; any other model leads."""
    return "grounded" if llm.provider_name == "local" else "llm_led"


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
                    f"ChatCRS on {label}: with an LLM endpoint the LLM recommends and its titles are "
                    f"linked to the {label} catalog; with the bundled model the reply is built from "
                    f"the catalog entries of retrieved items."
                ),
                load=partial(_load, name, dataset, llm_client_factory, Path(cache_dir), catalog_loader),
                check=partial(_check, name, dataset),
            )
        )
    return specs
