"""The offline act annotator: a trained model reads each utterance in its context.

Needs no LLM. all-MiniLM-L6-v2 embeddings of the utterance and the one before it,
with the exact facts deterministic extraction gives (see `features`), feed two
multi-label logistic regressions, one per role, trained by
scripts/train_act_classifier.py on IARD and on ReDial dialogues labelled from the
seekers' answers (model card: assets/acts/MODEL_CARD.md). Every intent, Recommend,
Accept and Reject included, is the model's decision at thresholds chosen on
validation data; titles found by extraction become TITLE slot values.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from pathlib import Path
from typing import Any, Optional

import numpy as np

from arena.dialogue import Dialogue, Role
from evaluators.acts.base import ActAnnotator
from evaluators.acts.classifier import MultiLabelLogReg
from evaluators.acts.data import ACTS_ASSETS
from evaluators.acts.features import FEATURE_LAYOUT, N_FEATURES, UtteranceView, feature_rows, view_dialogue
from evaluators.acts.schema import make_acts
from arena.title_mentions import TitleLinker, shared_linker

ARTIFACT_STEM = "act_classifier"
DEFAULT_ARTIFACT = ACTS_ASSETS / f"{ARTIFACT_STEM}.npz"
REC = "REC"  # the agent model's extra "any recommendation" output
_DECIDED = frozenset({REC, "REC-S", "REC-E", "ACC", "REJ"})
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so the same weights give the same bytes


class ArtifactError(RuntimeError):
    """The classifier artifact is missing or does not fit this code."""


class ActModel:
    """The two per-role classifiers and the metadata stored beside them."""

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
                f"{path} was built for feature layout {meta.get('feature_layout')!r}, this code makes layout "
                f"{FEATURE_LAYOUT!r}; rebuild it with: python scripts/train_act_classifier.py"
            )
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if meta.get("weights_sha256") not in (None, digest):
            raise ArtifactError(f"{path} does not match the checksum in {meta_path.name}; rebuild it")
        with np.load(path) as arrays:
            models = {
                role: MultiLabelLogReg.from_arrays(arrays, f"{role.value.lower()}.", meta["labels"][role.value])
                for role in (Role.USER, Role.AGENT)
            }
        for role, model in models.items():
            if model.n_features != N_FEATURES:
                raise ArtifactError(f"{path}: {role.value} model expects {model.n_features} features, "
                                    f"layout {FEATURE_LAYOUT} makes {N_FEATURES}")
        return cls(models, meta)

    def save(self, path: Path) -> None:
        """Writes `path` (.npz) and its .json; the same model always gives the same bytes."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {}
        for role, model in self.models.items():
            arrays.update(model.to_arrays(f"{role.value.lower()}."))
            self.meta.setdefault("labels", {})[role.value] = model.labels
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(arrays):
                member = io.BytesIO()
                np.save(member, arrays[name], allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, member.getvalue())
        path.write_bytes(buffer.getvalue())
        self.meta["weights_sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
        path.with_suffix(".json").write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def probabilities(self, views: list[UtteranceView], encoder) -> list[dict[str, float]]:
        out: list[dict[str, float]] = [{} for _ in views]
        for role, (idx, X) in feature_rows(views, encoder).items():
            if not idx:
                continue
            model = self.models[role]
            for row, i in zip(model.predict_proba(X), idx):
                out[i] = dict(zip(model.labels, (float(p) for p in row)))
        return out

    def thresholds(self, role: Role) -> dict[str, float]:
        m = self.models[role]
        return dict(zip(m.labels, (float(t) for t in m.thresholds)))


def decide(roles: list[Role], probs: list[dict[str, float]], model: ActModel) -> list[list[str]]:
    """The intents of each utterance: every label whose probability reaches its threshold.

    For a system turn the REC output decides whether it recommends, and REC-S or REC-E,
    whichever is likelier, says how. An utterance with no label above threshold gets its
    likeliest other intent (never one of the decided ones, which the model ruled out).
    """
    result: list[list[str]] = []
    for role, p in zip(roles, probs):
        thr = model.thresholds(role)
        chosen = [lab for lab, v in p.items() if lab not in (REC, "REC-S", "REC-E") and v >= thr[lab]]
        if role == Role.AGENT and p[REC] >= thr[REC]:
            chosen.insert(0, "REC-E" if p["REC-E"] > p["REC-S"] else "REC-S")
        if not chosen:
            others = [(v, lab) for lab, v in p.items() if lab not in _DECIDED]
            chosen = [max(others)[1] if others else "OTH"]
        result.append(chosen)
    return result


class OfflineActAnnotator(ActAnnotator):
    """`annotate(dialogue)` with no LLM; see the module docstring."""

    name = "offline-acts"

    def __init__(self, artifact: Path = DEFAULT_ARTIFACT, *, encoder=None, linker: Optional[TitleLinker] = None,
                 use_catalog: bool = True):
        """`linker` defaults to the shipped catalogs (`use_catalog=False`: title patterns only)."""
        self._artifact_path = Path(artifact)
        self._model: Optional[ActModel] = None
        self._encoder = encoder
        self._linker = linker if linker is not None else (shared_linker() if use_catalog else None)
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
        return f"{self.model.version}+layout{FEATURE_LAYOUT}"

    @property
    def model_label(self) -> Optional[str]:
        return "all-MiniLM-L6-v2+logreg"

    def annotate_intents(self, dialogue: Dialogue) -> list[list[list[Any]]]:
        views = view_dialogue(dialogue, self._linker)
        probs = self.model.probabilities(views, self.encoder)
        intents = decide([v.role for v in views], probs, self.model)
        return [[intent_list, [m.slot() for m in view.mentions]] for intent_list, view in zip(intents, views)]

    def _annotate_in_place(self, dialogue: Dialogue, overwrite: bool) -> None:
        for utt, (intents, slots) in zip(dialogue.utterances, self.annotate_intents(dialogue)):
            if overwrite or utt.dialogue_acts is None:
                utt.dialogue_acts = make_acts(intents, slots)
