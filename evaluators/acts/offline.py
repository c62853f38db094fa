"""The offline act annotator: a fine-tuned network reads each utterance in its context.

Needs no LLM. all-MiniLM-L6-v2, fine-tuned as a cross-encoder over the
(context, utterance) pair `features` makes (exact extraction facts and the
previous utterance, then the utterance), gives one probability per IARD intent.
It is trained by scripts/train_act_classifier.py on IARD, on ReDial dialogues
labelled from the seekers' answers and on the arena-style sets (model card:
assets/acts/MODEL_CARD.md). Every intent, Recommend, Accept and Reject included,
is the model's decision at thresholds chosen on validation data; titles found by
extraction become TITLE slot values. On CPU the network is served by ONNX Runtime
(`onnx_serving`), with the same outputs as PyTorch and in about half the time.
From version 14 on, Accept is decided over the whole dialogue (`context_decision`), and
the Accept and Reject thresholds are chosen for the metrics RDL and SR (`metric_calibration`).
An artifact may also decide Reject over the dialogue (`reject_decision`, see `context_decision`), and
let Accept and Reject stand together on an utterance that addresses different items (`mixed_decisions`,
see `MixedDecisions`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Optional, Sequence

import numpy as np

from arena.dialogue import Dialogue, Role
from arena.reading.acts import decisions_apart, names_different_items
from arena.reading.intents import coherent
from arena.titles.linking import TitleLinker, shared_linker
from evaluators.acts.base import ActAnnotator
from evaluators.acts.context_decision import REJ, ContextDecision, utterance_facts
from evaluators.acts.artifacts import ACTS_ASSETS
from evaluators.acts.features import INPUT_LAYOUT, dialogue_pairs
from evaluators.acts.network import (
    LABELS,
    REC,
    base_state,
    bert_config,
    build_network,
    encode_pairs,
    predict,
    role_labels,
    state_digest,
    tokenizer,
)
from evaluators.acts.schema import make_acts

ARTIFACT_STEM = "act_model"
DEFAULT_ARTIFACT = ACTS_ASSETS / f"{ARTIFACT_STEM}.safetensors"
_DECIDED = frozenset({REC, "REC-S", "REC-E", "ACC", "REJ"})
_FIRST = 1e3  # added to Accept's and Reject's margins with `decided_first`: above any other intent's
REBUILD = "rebuild it with: python scripts/train_act_classifier.py"
Runtime = Literal["onnxruntime", "torch"]


class ArtifactError(RuntimeError):
    """The act model artifact is missing or does not fit this code."""


@dataclass(frozen=True)
class MixedDecisions:
    """When Accept and Reject stand together on one user utterance (artifact key `mixed_decisions`).

    Without it the coherence rule keeps the surer of the two. With it, both stand where the utterance
    addresses different items (`arena.reading.acts`): its parts carry decisions of their own, or,
    with `by_items`, it names two distinct items. `second_at` > 0: where the parts carry both decisions
    and only one of the two passed its threshold, the other is kept too when its probability reaches
    `second_at` times its threshold (the parts' reading, with a lower bar from the network)."""

    by_items: bool = False
    second_at: float = 0.0

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> "MixedDecisions":
        return cls(by_items=bool(meta.get("by_items", False)), second_at=float(meta.get("second_at", 0.0)))

    def to_meta(self) -> dict[str, Any]:
        return {"by_items": self.by_items, "second_at": self.second_at}


def weights_bytes(trained: dict[str, np.ndarray]) -> bytes:
    """The artifact's bytes for `trained` (half precision); the same weights give the same bytes."""
    from safetensors.numpy import save

    return save({k: np.ascontiguousarray(trained[k], dtype=np.float16) for k in sorted(trained)})


def write_artifact(path: Path, trained: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """`path` (.safetensors) and its .json, whose checksum and layout the loader checks."""
    path = Path(path)
    data = weights_bytes(trained)
    meta = {**meta, "input_layout": INPUT_LAYOUT, "labels": list(LABELS),
            "weights_sha256": hashlib.sha256(data).hexdigest()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")


class ActModel:
    """The network, its tokenizer, the per-label thresholds and the metadata stored beside them."""

    def __init__(self, network, tok, meta: dict[str, Any], runtime: Runtime = "onnxruntime",
                 threads: Optional[int] = 1):
        """`runtime`: what runs the network ("torch": PyTorch as in training); `threads`: of ONNX
        Runtime (None or 0: one per core; PyTorch keeps the process's own setting)."""
        if runtime not in ("onnxruntime", "torch"):
            raise ValueError(f"unknown act model runtime {runtime!r}; use 'onnxruntime' or 'torch'")
        self.network = network
        self.tokenizer = tok
        self.meta = meta
        self.runtime = runtime
        self.threshold = np.array([float(meta["thresholds"][name]) for name in LABELS])
        # Artifacts from version 14 on decide Accept in the dialogue's context (context_decision.py).
        self.context = (
            ContextDecision.from_meta(meta["context_decision"]) if "context_decision" in meta else None
        )
        self.reject_context = (ContextDecision.from_meta(meta["reject_decision"], REJ)
                               if "reject_decision" in meta else None)
        self.decided_first = bool(meta.get("decided_first", False))  # see `decide`
        self.mixed = MixedDecisions.from_meta(meta["mixed_decisions"]) if "mixed_decisions" in meta else None
        # rows of token ids (and optionally a batch size) -> probabilities, by PyTorch or ONNX Runtime
        self._run: Callable[..., np.ndarray] = partial(predict, network)
        if runtime == "onnxruntime":
            from evaluators.acts.onnx_serving import OnnxNetwork

            self._run = OnnxNetwork.from_network(network, threads).predict

    @property
    def version(self) -> str:
        return str(self.meta["version"])

    @classmethod
    def load(cls, path: Path = DEFAULT_ARTIFACT, base: Optional[dict[str, np.ndarray]] = None,
             runtime: Runtime = "onnxruntime", threads: Optional[int] = 1) -> "ActModel":
        """`base`: the base weights (default: the bundled MiniLM package, rounded as in training)."""
        from safetensors.numpy import load

        path = Path(path)
        meta_path = path.with_suffix(".json")
        if not path.exists() or not meta_path.exists():
            raise ArtifactError(f"act model artifact not found at {path} (+ .json); {REBUILD}")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("input_layout") != INPUT_LAYOUT:
            raise ArtifactError(
                f"{path} was built for input layout {meta.get('input_layout')!r}, this code makes "
                f"{INPUT_LAYOUT!r}; {REBUILD}"
            )
        if meta.get("labels") != list(LABELS):
            raise ArtifactError(f"{path} has other outputs than this code's intents; {REBUILD}")
        data = path.read_bytes()
        if meta.get("weights_sha256") != hashlib.sha256(data).hexdigest():
            raise ArtifactError(f"{path} does not match the checksum in {meta_path.name}; {REBUILD}")
        base = base_state() if base is None else base
        if state_digest(base) != meta.get("base_digest"):
            raise ArtifactError(f"{path} was trained over other base weights than the installed "
                                f"{meta.get('base_model', 'base model')} ({meta.get('base_digest')} vs "
                                f"{state_digest(base)}); install the pinned package or {REBUILD}")
        network = build_network(bert_config(layers=meta.get("layers")), base, trained=dict(load(data)))
        network.eval()
        return cls(network, tokenizer(), meta, runtime=runtime, threads=threads)

    def probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return self.probabilities_of(encode_pairs(self.tokenizer, pairs))

    @property
    def needs_facts(self) -> bool:
        """Whether a context decision reads `context_decision.utterance_facts` (Reject's; Accept's with
        the words)."""
        return any(d is not None and d.needs_facts for d in (self.context, self.reject_context))

    def probabilities_of(self, rows: list[tuple[list[int], list[int]]]) -> np.ndarray:
        """The outputs for already tokenised pairs (`network.encode_pairs`)."""
        return self._run(rows)

    def in_context(
        self, roles: list[Role], probs: np.ndarray, facts: Optional[np.ndarray] = None
    ) -> np.ndarray:
        """`probs` (every utterance of one dialogue, in order) with Accept, and Reject where the artifact
        decides it so, replaced by the context decisions' probabilities; both read the network's own
        outputs. `facts`: `context_decision.utterance_facts` of the dialogue (needed where `needs_facts`)."""
        out = np.array(probs, dtype=np.float64, copy=True)
        if self.context is not None:
            self.context.decided(roles, probs, facts, into=out)
        if self.reject_context is not None:
            self.reject_context.decided(roles, probs, facts, into=out)
        return out

    def intents(self, roles: list[Role], probs: np.ndarray, whole_dialogue: bool = True,
                facts: Optional[np.ndarray] = None, texts: Optional[Sequence[str]] = None,
                titles: Optional[Sequence[int]] = None) -> list[list[str]]:
        """The intents of each utterance from the network's outputs `probs`. `whole_dialogue`: the
        rows are every utterance of one dialogue, in order, so Accept (and Reject, where the artifact
        says so; it needs `facts`) can be decided in context; otherwise (a lone utterance) every intent
        is the network's own decision. `texts`, `titles`: each utterance's text and how many distinct
        titles it names, for an artifact whose Accept and Reject may stand together (`MixedDecisions`)."""
        if whole_dialogue:
            probs = self.in_context(roles, probs, facts)
        return decide(roles, probs, self.threshold, decided_first=self.decided_first, mixed=self.mixed,
                      texts=texts, titles=titles)


def _margin(p: float, threshold: float) -> float:
    """How far a probability passed its threshold, in logits."""
    p, threshold = (min(max(float(v), 1e-6), 1 - 1e-6) for v in (p, threshold))
    return float(np.log(p / (1 - p)) - np.log(threshold / (1 - threshold)))


def decide(roles: list[Role], probs: np.ndarray, threshold: np.ndarray, coherent_sets: bool = True,
           decided_first: bool = False, mixed: Optional[MixedDecisions] = None,
           texts: Optional[Sequence[str]] = None, titles: Optional[Sequence[int]] = None) -> list[list[str]]:
    """The intents of each utterance: every label of its role whose probability reaches its threshold.

    For a system turn the REC output decides whether it recommends, and REC-S or REC-E,
    whichever is likelier, says how. An utterance with no label above threshold gets its
    likeliest other intent (never one of the decided ones, which the model ruled out). A user
    utterance keeps a coherent set (`arena.reading.intents`): never Accept with Reject, at most
    three intents, the surest first. `decided_first` (artifacts from version 15 on may ask for it):
    Accept or Reject, once past its threshold, is kept before the other intents under the limit of
    three. Their thresholds are chosen on their own and the metrics read them, while the other
    intents' margins are on scales of their own; ranked by margin alone, a true Accept or Reject
    lost its place to surer small talk (on IARD val, Accept F1 0.73 -> 0.68, Reject 0.75 -> 0.68).
    `mixed` (with every utterance's `texts`, and `titles`: distinct titles each names): Accept and
    Reject may stand together where the utterance addresses different items (`MixedDecisions`).
    """
    result: list[list[str]] = []
    for i, (role, p) in enumerate(zip(roles, probs)):
        idx = role_labels(role)
        names = {LABELS[j].split(":", 1)[1]: j for j in idx}
        chosen = [name for name, j in names.items()
                  if name not in (REC, "REC-S", "REC-E") and p[j] >= threshold[j]]
        if role == Role.USER and coherent_sets:
            together = False
            # The parts are read only where they can change the label set: both decisions passed, or
            # a second one may be kept at a lower bar.
            if mixed is not None and texts is not None and (
                    {"ACC", "REJ"} <= set(chosen) or (mixed.second_at > 0 and {"ACC", "REJ"} & set(chosen))):
                apart = decisions_apart(texts[i])
                together = apart or (
                    mixed.by_items and names_different_items(texts[i], titles[i] if titles else 0)
                )
                if apart and mixed.second_at > 0:
                    chosen += _second_decision(chosen, p, names, threshold, mixed.second_at)
            chosen = coherent(
                [
                    (
                        name,
                        _margin(p[names[name]], threshold[names[name]])
                        + (_FIRST if decided_first and name in ("ACC", "REJ") else 0.0),
                    )
                    for name in chosen
                ],
                together=together,
            )
        if role == Role.AGENT and p[names[REC]] >= threshold[names[REC]]:
            chosen.insert(0, "REC-E" if p[names["REC-E"]] > p[names["REC-S"]] else "REC-S")
        if not chosen:
            others = [(p[j], name) for name, j in names.items() if name not in _DECIDED]
            chosen = [max(others)[1] if others else "OTH"]
        result.append(chosen)
    return result


def _second_decision(chosen: list[str], p: np.ndarray, names: dict[str, int], threshold: np.ndarray,
                     share: float) -> list[str]:
    """Accept or Reject, whichever of the two did not pass, where the other did and its probability
    reaches `share` times its threshold."""
    missing = [name for name in ("ACC", "REJ") if name not in chosen]
    if len(missing) != 1:
        return []
    j = names[missing[0]]
    return missing if p[j] >= share * threshold[j] else []


_loaded: dict[tuple[Path, str, Optional[int]], ActModel] = {}
_loaded_lock = threading.Lock()


def shared_model(path: Path = DEFAULT_ARTIFACT, runtime: Runtime = "onnxruntime", threads: Optional[int] = 1
                 ) -> ActModel:
    """One loaded model per artifact and runtime per process: scorers, simulators and readers share it."""
    key = (Path(path).resolve(), runtime, threads or None)
    with _loaded_lock:
        if key not in _loaded:
            _loaded[key] = ActModel.load(key[0], runtime=runtime, threads=threads)
        return _loaded[key]


class OfflineActAnnotator(ActAnnotator):
    """`annotate(dialogue)` with no LLM; see the module docstring."""

    name = "offline-acts"

    def __init__(self, artifact: Path = DEFAULT_ARTIFACT, *, linker: Optional[TitleLinker] = None,
                 use_catalog: bool = True, runtime: Optional[Runtime] = None, threads: Optional[int] = None):
        """`linker` defaults to the shipped catalogs (`use_catalog=False`: title patterns only);
        `runtime` and `threads` as in `ActModel`, by default from the settings ARENA_ACTS_RUNTIME
        and ARENA_ACTS_THREADS (0: one thread per core)."""
        self._artifact_path = Path(artifact)
        self._linker = linker if linker is not None else (shared_linker() if use_catalog else None)
        if runtime is None or threads is None:
            from arena.runtime.config import Settings

            settings = Settings.from_env()
            runtime = runtime or settings.acts_runtime
            threads = settings.acts_threads if threads is None else threads
        self._runtime: Runtime = runtime
        self._threads = threads or None

    @property
    def model(self) -> ActModel:
        return shared_model(self._artifact_path, self._runtime, self._threads)

    @property
    def version(self) -> str:
        return f"{self.model.version}+{INPUT_LAYOUT}"

    @property
    def model_label(self) -> Optional[str]:
        return "all-MiniLM-L6-v2 cross-encoder"

    def annotate_intents(self, dialogue: Dialogue, last_only: bool = False) -> list[list[list[Any]]]:
        """[intents, slots] per utterance; `last_only`: of the last utterance alone (one network pass,
        how a simulator reads the system's latest turn)."""
        views, pairs = dialogue_pairs(dialogue, self._linker, last_only=last_only)
        if not views:
            return []
        model = self.model
        # Only an artifact whose context decisions read them (Reject's; Accept's with the words) needs
        # the facts.
        facts = utterance_facts(views) if model.needs_facts and not last_only else None
        intents = model.intents(
            [v.role for v in views],
            model.probabilities(pairs),
            whole_dialogue=not last_only,
            facts=facts,
            texts=[v.utterance.text for v in views],
            titles=[len(v.title_keys) for v in views],
        )
        return [[intent_list, [m.slot() for m in view.mentions]] for intent_list, view in zip(intents, views)]

    def _annotate_in_place(self, dialogue: Dialogue, overwrite: bool) -> None:
        for utt, (intents, slots) in zip(dialogue.utterances, self.annotate_intents(dialogue)):
            if overwrite or utt.dialogue_acts is None:
                utt.dialogue_acts = make_acts(intents, slots)
