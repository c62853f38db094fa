"""Turning a dialogue's utterances into the act model's inputs.

An utterance is read in its context: the model sees the sentence embedding of
the utterance, of the utterance just before it, and their element-wise product
(so a linear model can weigh "sounds good" differently after a recommendation
than after a question), titles replaced by a placeholder so that "I loved MOVIE"
looks the same whatever the movie. Beside them come a few exact facts from
deterministic extraction: how many titles it names and how they were found
(items a CRS attached, a numbered list, "Title (Year)", a catalog link), whether
those titles are new to the dialogue or the user's own, and whether a
recommendation is pending (one of the two system turns before it named a title
new to the dialogue or attached items). No hand-written intent cue is involved:
the intent is the model's.

`FEATURE_LAYOUT` names this layout; it is stored in the artifact and a mismatch
refuses to load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from arena.dialogue import Dialogue, Role, Utterance
from evaluators.acts.embedding import DIM
from evaluators.acts.offers import cut_short, echoed_mentions
from arena.title_mentions import Mention, TitleLinker, find_mentions, list_mentions, mask_titles
from arena.titles import title_key

FEATURE_LAYOUT = "v3"
HAND_FEATURES = (
    "n_titles", "has_title", "has_items", "is_list", "has_title_year", "has_catalog_link", "is_first",
    "has_question", "n_words", "n_joined", "n_new_titles", "titles_named_by_user", "overlaps_previous",
    "recommendation_pending", "prev_has_items", "prev_is_list", "prev_new_titles", "prev_has_question",
)
N_FEATURES = 3 * DIM + len(HAND_FEATURES)
# Embeddings are rounded before use so that the features (and so the trained artifact) do not
# depend on float noise from how the encoder happened to batch the texts.
EMBEDDING_DECIMALS = 4


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


def view_dialogue(dialogue: Dialogue, linker: Optional[TitleLinker] = None) -> list[UtteranceView]:
    views: list[UtteranceView] = []
    named: set[str] = set()
    named_by_user: set[str] = set()
    for utt in dialogue.utterances:
        mentions = find_mentions(utt, linker)
        if utt.role == Role.AGENT:
            mentions = [m for m in mentions if not cut_short(utt.text, m)]
        else:
            recent = [m for v in views[-4:] if v.role == Role.AGENT for m in v.mentions]
            mentions = sorted([*mentions, *echoed_mentions(utt.text, recent, mentions)], key=lambda m: m.start)
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


def hand_features(views: Sequence[UtteranceView], index: int) -> list[float]:
    view = views[index]
    prev = views[index - 1] if index > 0 else None
    text = view.utterance.text
    sources = {m.source for m in view.mentions}
    feats = [
        min(len(view.mentions), 3) / 3.0,
        float(bool(view.mentions)),
        float(bool(view.utterance.items)),
        float(view.is_list),
        float("year" in sources),
        float("catalog" in sources),
        float(index == 0),
        float("?" in text),
        min(len(text.split()), 40) / 40.0,
        min(text.count("..."), 3) / 3.0,
        min(view.new_titles, 3) / 3.0,
        float(view.user_named),
        float(prev is not None and bool(view.title_keys & prev.title_keys)),
        float(recommendation_pending(views, index)),
    ]
    if prev is None:
        return feats + [0.0] * 4
    return feats + [
        float(bool(prev.utterance.items)),
        float(prev.is_list),
        min(prev.new_titles, 3) / 3.0,
        float("?" in prev.utterance.text),
    ]


def embed_views(views: Sequence[UtteranceView], encoder) -> np.ndarray:
    texts = [v.masked for v in views]
    emb = encoder.encode(texts) if texts else np.zeros((0, DIM), dtype=np.float32)
    return np.round(np.asarray(emb, dtype=np.float64), EMBEDDING_DECIMALS)


def feature_matrix(views: Sequence[UtteranceView], emb: np.ndarray, idx: Sequence[int]) -> np.ndarray:
    """Rows for the utterances at positions `idx`: [own, previous, own * previous, hand features]."""
    rows = []
    for i in idx:
        own = emb[i]
        prev = emb[i - 1] if i > 0 else np.zeros(DIM)
        rows.append(np.concatenate([own, prev, own * prev, hand_features(views, i)]))
    return np.array(rows, dtype=np.float64).reshape(len(rows), N_FEATURES)


def feature_rows(views: Sequence[UtteranceView], encoder) -> dict[Role, tuple[list[int], np.ndarray]]:
    """Per role: the utterance positions and their feature matrix."""
    emb = embed_views(views, encoder)
    out: dict[Role, tuple[list[int], np.ndarray]] = {}
    for role in (Role.USER, Role.AGENT):
        idx = [i for i, v in enumerate(views) if v.role == role]
        out[role] = (idx, feature_matrix(views, emb, idx))
    return out
