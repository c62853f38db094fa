"""Turning a dialogue's utterances into classifier inputs.

An utterance is described by the embedding of its own text (titles replaced by
a placeholder, so "I loved MOVIE" looks the same whatever the movie) and a few
hand features: title counts, the cues from `rules`, what the utterance just
before it did (whether the system has just made a recommendation decides
between "accept" and "seen"), and whether the user repeats a title the system
just named. Layout v1 also embedded the previous utterance; cross-validation on
IARD showed it added nothing (and cost Accept/Reject precision), so v2 drops it.
The layout is fixed per role; `FEATURE_LAYOUT` is stored
in the artifact and checked on load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from arena.dialogue import Dialogue, Role, Utterance
from evaluators.acts import rules
from evaluators.acts.embedding import DIM
from evaluators.acts.offers import cut_short, echoed_mentions, offer_mentions
from arena.title_mentions import Mention, TitleLinker, find_mentions, list_mentions, mask_titles
from arena.titles import clean_title, title_key

FEATURE_LAYOUT = "v2"
N_COMMON = 6
N_HAND = {Role.USER: N_COMMON + rules.N_USER_CUES + 3 + rules.N_AGENT_CUES + 1,
          Role.AGENT: N_COMMON + rules.N_AGENT_CUES + 2 + rules.N_USER_CUES}


def n_features(role: Role) -> int:
    return DIM + N_HAND[role]


@dataclass
class UtteranceView:
    """What the featuriser and the rules need to know about one utterance."""

    utterance: Utterance
    mentions: list[Mention]
    masked: str
    user_cues: Optional[rules.UserCues] = None
    agent_cues: Optional[rules.AgentCues] = None
    user_named: bool = False  # agent only: every title it names was named by the user at some point

    @property
    def short(self) -> bool:
        """Arena-style: one short message, not several joined with "..." as in IARD."""
        return len(self.utterance.text.split()) <= 25 and "..." not in self.utterance.text

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
    for utt in dialogue.utterances:
        mentions = find_mentions(utt, linker)
        if utt.role == Role.AGENT:
            mentions = [m for m in mentions if not cut_short(utt.text, m)]
            mentions = sorted([*mentions, *offer_mentions(utt.text, linker, mentions)], key=lambda m: m.start)
        else:
            recent = [m for v in views[-4:] if v.role == Role.AGENT for m in v.mentions]
            mentions = sorted([*mentions, *echoed_mentions(utt.text, recent, mentions)], key=lambda m: m.start)
        view = UtteranceView(utterance=utt, mentions=mentions, masked=mask_titles(utt.text, mentions))
        # Cues read the masked text: "I'll watch MOVIE" and "I'll watch it" look alike.
        offered = {k for v in views[-4:] if v.role == Role.AGENT for k in v.title_keys}
        masked_for_cues = [m for m in mentions if title_key(m.title) in offered or not _everyday_word(utt.text, m)
                           or title_key(utt.text[m.start:m.end]) in offered]
        cue_text = mask_titles(utt.text, masked_for_cues, placeholder=rules.TITLE)
        if utt.role == Role.USER:
            view.user_cues = rules.user_cues(cue_text)
        else:
            view.agent_cues = rules.agent_cues(cue_text)
            user_texts = [v.utterance.text for v in views if v.role == Role.USER]
            user_keys = {k for v in views if v.role == Role.USER for k in v.title_keys}
            view.user_named = bool(mentions) and all(
                title_key(m.title) in user_keys or any(_said_in(m.title, t) for t in user_texts) for m in mentions)
        views.append(view)
    return views


def _everyday_word(text: str, mention: Mention) -> bool:
    """A single lower-case word the catalog linked ("creep", "up"): unless the system has just
    named that title, the cues read it as the word."""
    written = text[mention.start:mention.end] if mention.start >= 0 else ""
    return mention.source == "catalog" and written.isalpha() and written.islower()


def _said_in(title: str, text: str) -> bool:
    """Whether a title (year dropped) occurs as whole words in `text`; short titles never do.
    A one-word title in lower case counts only after a word that points at a title ("i liked
    parasite", "is hereditary good?"), not in "something scary for halloween"."""
    bare = clean_title(title)
    if len(bare) < 4:
        return False
    pattern = r"(?<!\w)" + re.escape(bare) + r"(?!\w)"
    if " " in bare or re.search(pattern, text):
        return re.search(pattern, text, flags=re.IGNORECASE) is not None
    return re.search(_TITLE_POINTER + pattern, text, flags=re.IGNORECASE) is not None


_TITLE_POINTER = r"\b(?:liked|loved|love|like|enjoyed|enjoy|watched|watch|saw|seen|see|hated|finished|is|was|about)\s+"


def _common(view: UtteranceView, index: int) -> list[float]:
    words = len(view.utterance.text.split())
    return [
        min(len(view.mentions), 3) / 3.0,
        float(bool(view.mentions)),
        float(index == 0),
        float("?" in view.utterance.text),
        min(words, 40) / 40.0,
        min(view.utterance.text.count("..."), 3) / 3.0,
    ]


def hand_features(views: Sequence[UtteranceView], index: int) -> list[float]:
    view = views[index]
    prev = views[index - 1] if index > 0 else None
    feats = _common(view, index)
    if view.role == Role.USER:
        assert view.user_cues is not None
        feats += view.user_cues.as_vector()
        if prev is not None and prev.role == Role.AGENT and prev.agent_cues is not None:
            overlap = bool(view.title_keys & prev.title_keys)
            feats += [float(bool(prev.mentions)), float(bool(prev.utterance.items)), float(overlap)]
            feats += prev.agent_cues.as_vector()
            feats += [float(prev.is_list)]
        else:
            feats += [0.0] * (3 + rules.N_AGENT_CUES + 1)
    else:
        assert view.agent_cues is not None
        feats += view.agent_cues.as_vector()
        feats += [float(view.is_list), float(bool(view.utterance.items))]
        if prev is not None and prev.user_cues is not None:
            feats += prev.user_cues.as_vector()
        else:
            feats += [0.0] * rules.N_USER_CUES
    return feats


def feature_rows(views: Sequence[UtteranceView], encoder) -> dict[Role, tuple[list[int], np.ndarray]]:
    """Per role: the utterance positions and their feature matrix."""
    texts = [v.masked for v in views]
    emb = encoder.encode(texts) if texts else np.zeros((0, DIM), dtype=np.float32)
    out: dict[Role, tuple[list[int], np.ndarray]] = {}
    for role in (Role.USER, Role.AGENT):
        idx = [i for i, v in enumerate(views) if v.role == role]
        if not idx:
            out[role] = ([], np.zeros((0, n_features(role))))
            continue
        hand = np.array([hand_features(views, i) for i in idx], dtype=np.float64)
        X = np.hstack([emb[idx], hand])
        out[role] = (idx, X)
    return out
