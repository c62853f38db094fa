"""The offline act annotator: sentence embeddings + logistic regression + cues.

Needs no LLM: all-MiniLM-L6-v2 embeddings (shipped offline) feed two small
multi-label logistic regressions, one per role, trained on IARD by
scripts/train_act_classifier.py and stored in assets/acts/. Their decisions
for Recommend, Accept and Reject are then combined with the cues in `rules`
and the items a CRS attached to its reply; titles become TITLE slot values.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Optional

import numpy as np

from arena.dialogue import Dialogue, Role
from evaluators.acts.base import ActAnnotator
from evaluators.acts.classifier import MultiLabelLogReg
from evaluators.acts.data import ACTS_ASSETS
from evaluators.acts.features import FEATURE_LAYOUT, UtteranceView, feature_rows, n_features, view_dialogue
from evaluators.acts import rules
from evaluators.acts.rules import RULES_VERSION
from evaluators.acts.schema import make_acts
from arena.title_mentions import TitleLinker, shared_linker

ARTIFACT_STEM = "act_classifier"
DEFAULT_ARTIFACT = ACTS_ASSETS / f"{ARTIFACT_STEM}.npz"
REC = "REC"  # the classifiers' extra "any recommendation" output
_DECIDED = frozenset({REC, "REC-S", "REC-E", "ACC", "REJ"})


class ArtifactError(RuntimeError):
    """The classifier artifact is missing or does not fit this code."""


class ActModel:
    """The two per-role classifiers and the decision settings stored beside them."""

    def __init__(self, models: dict[Role, MultiLabelLogReg], meta: dict[str, Any]):
        self.models = models
        self.meta = meta

    @property
    def version(self) -> str:
        return str(self.meta["version"])

    @classmethod
    def load(cls, path: Path = DEFAULT_ARTIFACT) -> "ActModel":
        path = Path(path)
        meta_path = path.with_suffix(".json")
        if not path.exists() or not meta_path.exists():
            raise ArtifactError(
                f"act classifier artifact not found at {path} (+ .json); "
                "rebuild it with: python scripts/train_act_classifier.py"
            )
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("feature_layout") != FEATURE_LAYOUT:
            raise ArtifactError(
                f"{path} was built for feature layout {meta.get('feature_layout')!r}, this code uses "
                f"{FEATURE_LAYOUT!r}; rebuild it with: python scripts/train_act_classifier.py"
            )
        with np.load(path) as arrays:
            models = {
                role: MultiLabelLogReg.from_arrays(arrays, f"{role.value.lower()}.", meta["labels"][role.value])
                for role in (Role.USER, Role.AGENT)
            }
        for role, model in models.items():
            if model.n_features != n_features(role):
                raise ArtifactError(f"{path}: {role.value} model expects {model.n_features} features")
        return cls(models, meta)

    def save(self, path: Path) -> None:
        path = Path(path)
        arrays: dict[str, np.ndarray] = {}
        for role, model in self.models.items():
            arrays.update(model.to_arrays(f"{role.value.lower()}."))
            self.meta.setdefault("labels", {})[role.value] = model.labels
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **arrays)
        self.meta["weights_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        path.with_suffix(".json").write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def probabilities(self, views: list[UtteranceView], encoder) -> list[dict[str, float]]:
        out: list[dict[str, float]] = [{} for _ in views]
        for role, (idx, X) in feature_rows(views, encoder).items():
            if not idx:
                continue
            model = self.models[role]
            P = model.predict_proba(X)
            for row, i in zip(P, idx):
                out[i] = dict(zip(model.labels, (float(p) for p in row)))
        return out

    def thresholds(self, role: Role) -> dict[str, float]:
        m = self.models[role]
        return dict(zip(m.labels, (float(t) for t in m.thresholds)))


def decide(views: list[UtteranceView], probs: list[dict[str, float]], model: ActModel,
           use_rules: bool = True) -> list[list[str]]:
    """The intents of each utterance, from classifier probabilities and cues."""
    result: list[list[str]] = []
    recommended: list[bool] = []
    for i, (view, p) in enumerate(zip(views, probs)):
        thr = model.thresholds(view.role)
        chosen = [lab for lab, v in p.items() if lab != REC and v >= thr[lab]]
        if view.role == Role.AGENT:
            rec = p[REC] >= thr[REC]
            if use_rules:
                if _answers_a_question(views, i):
                    rec = False  # "who directed it?" -> "Denis Villeneuve directed both Dune and Arrival."
                elif _agent_recommends(view):
                    rec = True
                elif view.user_named or view.agent_cues.closing:
                    rec = False  # the user's own titles, a farewell or a taste question offer nothing new
                elif not view.mentions:
                    rec = rec and p[REC] >= model.meta["decision"]["rec_without_title"]
            chosen = [c for c in chosen if c not in ("REC-S", "REC-E")]
            if rec:
                if view.is_list or view.utterance.items:
                    kind = "REC-S"
                else:
                    kind = "REC-E" if p["REC-E"] > p["REC-S"] else "REC-S"
                chosen.insert(0, kind)
            recommended.append(rec)
        else:
            pending = _recommendation_pending(views, recommended, i)
            chosen = _user_decision(view, p, thr, chosen, pending, use_rules)
            if use_rules and i > 0 and views[i - 1].role == Role.AGENT and rules.bare_answer_to_seen_question(
                    views[i - 1].utterance.text, view.utterance.text):
                chosen = [c for c in chosen if c not in ("ACC", "REJ")]
            recommended.append(False)
        if not chosen:
            # The likeliest other intent; never one of the three decided above, which were ruled out.
            others = [(v, lab) for lab, v in p.items() if lab not in _DECIDED]
            chosen = [max(others)[1] if others else "OTH"]
        result.append(chosen)
    return result


def _agent_recommends(view: UtteranceView) -> bool:
    cues = view.agent_cues
    if view.utterance.items:
        return True
    if cues is None or not view.mentions:
        return False
    if cues.closing:
        return False  # "Great, enjoy Dune!" closes a round, it does not open one
    # A title the user has not brought up is, in 96% of IARD's system turns, a recommendation.
    return view.is_list or cues.recommend_strong or not view.user_named


def _answers_a_question(views: list[UtteranceView], i: int) -> bool:
    """A reply to a factual question that offers nothing in the way a recommendation does."""
    view, cues = views[i], views[i].agent_cues
    if i == 0 or views[i - 1].role != Role.USER or cues is None:
        return False
    if view.utterance.items or view.is_list or cues.recommend_strong or cues.recommend_cue:
        return False
    return rules.asks_about_facts(views[i - 1].utterance.text)


def _recommendation_pending(views: list[UtteranceView], recommended: list[bool], i: int) -> bool:
    """Whether the system recommended something in its last two turns before utterance i
    and has not since asked whether the user wants more."""
    seen_agent = 0
    for j in range(i - 1, -1, -1):
        if views[j].role == Role.AGENT:
            if recommended[j]:
                return True
            if seen_agent == 0 and rules.offers_more(views[j].utterance.text):
                return False
            seen_agent += 1
            if seen_agent >= 2:
                break
    return False


def _user_decision(view: UtteranceView, p: dict[str, float], thr: dict[str, float], chosen: list[str],
                   pending: bool, use_rules: bool) -> list[str]:
    if not use_rules:
        return chosen
    cues = view.user_cues
    assert cues is not None
    acc, rej = "ACC" in chosen, "REJ" in chosen
    accept_cue = not cues.accept_block and (cues.accept_strong or (cues.accept_weak and pending and view.short))
    reject_cue = pending and view.short and (cues.reject_strong or (cues.reject_weak and not cues.reject_block))
    acc = (acc or accept_cue) and not cues.accept_block
    if view.short and rej and not (cues.reject_strong or cues.reject_weak) and rules.is_question(view.utterance.text):
        rej = False  # a short question with no sign of refusal keeps the offer open
    rej = rej or reject_cue
    if view.short and not pending:
        # Nothing on the table to decide on: "no thanks, I'm all set", "I really dislike Michael Bay".
        acc = acc and cues.accept_strong
        rej = False
    if cues.reject_block and not cues.reject_strong and view.short:
        rej = False
    if view.short:
        # One short message rarely both accepts and rejects: trust the cue that fired.
        # "no! I'll check it out": a strong acceptance outweighs a bare "no", unless the message
        # contrasts two items ("seen Heat, but I'll try Ronin", "Ronin sounds good, Heat I saw").
        contrast = rules.has_contrast(view.utterance.text) or len(view.title_keys) >= 2
        outweighs = cues.accept_strong and not contrast
        if accept_cue and (not reject_cue or outweighs) and not cues.reject_strong:
            rej = False
        if reject_cue and not accept_cue:
            acc = False
    chosen = [c for c in chosen if c not in ("ACC", "REJ")]
    if rej:
        chosen.insert(0, "REJ")
    if acc:
        chosen.insert(0, "ACC")
    return chosen


class OfflineActAnnotator(ActAnnotator):
    """`annotate(dialogue)` with no LLM; see the module docstring."""

    name = "offline-acts"

    def __init__(self, artifact: Path = DEFAULT_ARTIFACT, *, encoder=None, linker: Optional[TitleLinker] = None,
                 use_catalog: bool = True, use_rules: bool = True):
        """`linker` defaults to the shipped catalogs (`use_catalog=False`: title patterns only)."""
        self._artifact_path = Path(artifact)
        self._model: Optional[ActModel] = None
        self._encoder = encoder
        self._linker = linker if linker is not None else (shared_linker() if use_catalog else None)
        self._use_rules = use_rules
        self._lock = threading.Lock()

    @property
    def model(self) -> ActModel:
        with self._lock:
            if self._model is None:
                self._model = ActModel.load(self._artifact_path)
            return self._model

    @property
    def encoder(self):
        if self._encoder is None:
            from evaluators.acts.embedding import shared_encoder

            self._encoder = shared_encoder()
        return self._encoder

    @property
    def version(self) -> str:
        rules = f"+rules{RULES_VERSION}" if self._use_rules else "+norules"
        return f"{self.model.version}{rules}"

    @property
    def model_label(self) -> Optional[str]:
        return "all-MiniLM-L6-v2+logreg"

    def annotate_intents(self, dialogue: Dialogue) -> list[list[list[Any]]]:
        views = view_dialogue(dialogue, self._linker)
        probs = self.model.probabilities(views, self.encoder)
        intents = decide(views, probs, self.model, use_rules=self._use_rules)
        return [[intent_list, [m.slot() for m in view.mentions]] for intent_list, view in zip(intents, views)]

    def _annotate_in_place(self, dialogue: Dialogue, overwrite: bool) -> None:
        for utt, (intents, slots) in zip(dialogue.utterances, self.annotate_intents(dialogue)):
            if overwrite or utt.dialogue_acts is None:
                utt.dialogue_acts = make_acts(intents, slots)
