"""The metric registry and `score_dialogue`, used by the app, the CLI and evaluation runs.

Metric groups, by name:

- "acts": annotate dialogue acts (value: share of utterances annotated)
- "rdl", "srrr", "sr": the RDL paper's utility metrics (see evaluators.metrics), the default reading
- "srrr_usersimcrs", "sr_usersimcrs": SRRR and SR as UserSimCRS's metric code computes them (rounds
  counted from the start of the dialogue, the user's last decision settles a round;
  evaluators.metrics_usersimcrs), for putting the two readings side by side
- "recall": Recall@k averaged over system turns (needs metadata["targets"])
- "pc": preference coverage after the last turn and its mean increase per turn
  (needs metadata["targets"]); writes "pc" and "pcir"
- "core": CoRE, the LLM judge (evaluators.core.score_core), imported lazily

Every Score names its scorer and version; act-based scores carry the label of
the annotator that produced the acts in their version ("provided" when the
acts came with the dialogue) and the annotator's model in `model`. The acts a
score was computed from stay on the dialogue (each annotated utterance names
its annotator in `acts_annotator`); callers that keep dialogues store them with
the scores (`Store.save_scores(..., acts_from=dialogue)`). Scoring is
idempotent: a metric already scored with the same version is kept unless
`force`. A metric that fails gets Score(value=None, error=...), never 0.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Score
from arena.llm import LLMClient
from arena.target_metrics import coverage_increase
from evaluators import metrics as M
from evaluators import metrics_usersimcrs as U
from evaluators.acts.base import ActAnnotator

log = logging.getLogger(__name__)

# 2: a recommendation round is successful when it holds an acceptance anywhere, not only when
# its first decision is one (SR and SRRR scored under version 1 are scored again).
METRICS_VERSION = "2"
RECALL_K = 10
PROVIDED_ACTS = "provided"


@dataclass
class Context:
    client: Optional[LLMClient]
    annotator: Optional[ActAnnotator]
    settings: Optional[Settings]
    acts_label: Optional[str] = None  # who produced the acts; None until annotated
    acts_model: Optional[str] = None
    acts_error: Optional[str] = None


@dataclass(frozen=True)
class MetricGroup:
    name: str
    description: str
    compute: Callable[[Dialogue, Context], dict[str, Score]]
    needs_acts: bool = False
    outputs: tuple[str, ...] = ()

    @property
    def score_names(self) -> tuple[str, ...]:
        return self.outputs or (self.name,)


REGISTRY: dict[str, MetricGroup] = {}


def register(group: MetricGroup) -> MetricGroup:
    REGISTRY[group.name] = group
    return group


def parse_metrics(spec: str) -> list[str]:
    names = [m.strip() for m in spec.split(",") if m.strip()]
    unknown = [m for m in names if m not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(REGISTRY)}")
    return names


# -- act-based groups -----------------------------------------------------------


def _act_version(ctx: Context) -> str:
    return f"{METRICS_VERSION}/{ctx.acts_label or PROVIDED_ACTS}"


def _act_score(name: str, ctx: Context, fn: Callable[[], tuple[float, dict[str, Any]]]) -> dict[str, Score]:
    version = _act_version(ctx)
    if ctx.acts_error:
        return {
            name: Score(value=None, scorer=name, version=version, model=ctx.acts_model, error=ctx.acts_error)
        }
    try:
        value, details = fn()
    except Exception as exc:  # one metric's failure must not hide the others
        return {name: Score(value=None, scorer=name, version=version, model=ctx.acts_model,
                            error=f"{type(exc).__name__}: {exc}")}
    return {name: Score(value=value, scorer=name, version=version, model=ctx.acts_model, details=details)}


def _acts(d: Dialogue, ctx: Context) -> dict[str, Score]:
    def compute():
        counts = {"utterances": len(d.utterances), "recommend": 0, "accept": 0, "reject": 0}
        from evaluators.acts.schema import is_acceptance, is_recommendation, is_rejection

        for u in d.utterances:
            counts["recommend"] += is_recommendation(u)
            counts["accept"] += is_acceptance(u)
            counts["reject"] += is_rejection(u)
        annotated = sum(u.dialogue_acts is not None for u in d.utterances)
        return (annotated / len(d.utterances) if d.utterances else 0.0), counts

    return _act_score("acts", ctx, compute)


def _rdl(d: Dialogue, ctx: Context) -> dict[str, Score]:
    return _act_score("rdl", ctx, lambda: (M.rdl(d), {
        "accepted": M.accepted_count(d), "length": M.dialogue_length(d), "length_unit": "utterances"}))


def _srrr(d: Dialogue, ctx: Context) -> dict[str, Score]:
    def compute():
        rounds = M.recommendation_rounds(d)
        return M.srrr(d), {"rounds": len(rounds), "successful_rounds": sum(r.successful for r in rounds),
                           "rejected_rounds": sum(r.decision == "reject" for r in rounds)}

    return _act_score("srrr", ctx, compute)


def _sr(d: Dialogue, ctx: Context) -> dict[str, Score]:
    return _act_score("sr", ctx, lambda: (M.success(d), {"rounds": len(M.recommendation_rounds(d))}))


def _usersimcrs_details(d: Dialogue) -> dict[str, Any]:
    rounds = U.usersimcrs_rounds(d)
    return {"rounds": len(rounds), "successful_rounds": sum(r.accepted for r in rounds),
            "opening_round": any(r.opening for r in rounds)}


def _srrr_usersimcrs(d: Dialogue, ctx: Context) -> dict[str, Score]:
    return _act_score("srrr_usersimcrs", ctx, lambda: (U.srrr_usersimcrs(d), _usersimcrs_details(d)))


def _sr_usersimcrs(d: Dialogue, ctx: Context) -> dict[str, Score]:
    return _act_score("sr_usersimcrs", ctx, lambda: (U.success_usersimcrs(d), _usersimcrs_details(d)))


# -- target-based groups ---------------------------------------------------------


def _target_scores(d: Dialogue, ctx: Context, names: tuple[str, ...],
                   fn: Callable[[list[str]], dict[str, tuple[float, dict[str, Any]]]]) -> dict[str, Score]:
    version = f"{METRICS_VERSION}/k{RECALL_K}/{ctx.acts_label or PROVIDED_ACTS}"
    targets = M.targets_of(d)
    if not targets:
        return {
            n: Score(value=None, scorer=n, version=version, error="no target items in metadata['targets']")
            for n in names
        }
    try:
        results = fn(targets)
    except Exception as exc:
        return {
            n: Score(value=None, scorer=n, version=version, error=f"{type(exc).__name__}: {exc}")
            for n in names
        }
    return {n: Score(value=v, scorer=n, version=version, model=ctx.acts_model, details=det)
            for n, (v, det) in results.items()}


def _recall(d: Dialogue, ctx: Context) -> dict[str, Score]:
    def compute(targets):
        per_turn = M.recall_per_turn(d, targets, RECALL_K)
        return {"recall": (M.recall_at_k(d, targets, RECALL_K),
                           {"k": RECALL_K, "per_turn": per_turn, "targets": len(targets)})}

    return _target_scores(d, ctx, ("recall",), compute)


def _pc(d: Dialogue, ctx: Context) -> dict[str, Score]:
    def compute(targets):
        pc = M.preference_coverage(d, targets, RECALL_K)
        pcir = coverage_increase(pc)
        final = pc[-1] if pc else 0.0
        return {"pc": (final, {"k": RECALL_K, "per_turn": pc, "targets": len(targets)}),
                "pcir": (M.mean(pcir) or 0.0, {"k": RECALL_K, "per_turn": pcir})}

    return _target_scores(d, ctx, ("pc", "pcir"), compute)


# -- CoRE --------------------------------------------------------------------------


def _core(d: Dialogue, ctx: Context) -> dict[str, Score]:
    if ctx.client is None:
        return {
            "core.overall": Score(value=None, scorer="core", version="?", error="no LLM client configured")
        }
    from evaluators.core import score_core

    return score_core(d, ctx.client, settings=ctx.settings)


def _core_current(d: Dialogue, ctx: Context) -> bool:
    """Whether the stored CoRE scores came from this configuration and client."""
    existing = d.scores.get("core.overall")
    if existing is None or not existing.scored or ctx.client is None:
        return False
    try:
        from evaluators.core.config import CoreConfig
        from evaluators.core.rubric import load_assets

        config = CoreConfig.from_setting(ctx.settings.core_config if ctx.settings is not None else None)
        version = load_assets(config.assets_version).version
    except Exception:
        return False
    return existing.version == version and ctx.client.describe() in (existing.model or "")


register(MetricGroup("acts", "dialogue acts annotated (share of utterances)", _acts, needs_acts=True))
register(
    MetricGroup(
        "rdl", "Reward-per-Dialogue-Length: accepted recommendations / utterances", _rdl, needs_acts=True
    )
)
register(MetricGroup("srrr", "Successful Recommendation Round Ratio", _srrr, needs_acts=True))
register(MetricGroup("sr", "success: some recommendation accepted (0/1)", _sr, needs_acts=True))
register(MetricGroup("srrr_usersimcrs", "SRRR as UserSimCRS computes it: rounds counted from the dialogue's "
                     "start, the user's last decision settles a round", _srrr_usersimcrs, needs_acts=True))
register(MetricGroup("sr_usersimcrs", "SR as UserSimCRS computes it (its rounds and last-decision rule)",
                     _sr_usersimcrs, needs_acts=True))
register(MetricGroup("recall", f"Recall@{RECALL_K} per system turn, averaged (needs targets)", _recall,
                     needs_acts=True))
register(MetricGroup("pc", f"preference coverage @{RECALL_K} after the last turn, and its mean increase",
                     _pc, needs_acts=True, outputs=("pc", "pcir")))
register(MetricGroup("core", "CoRE LLM judge: 12 factors and an overall score", _core,
                     outputs=("core.overall",)))


# -- entry points ----------------------------------------------------------------------


def default_annotator(
    settings: Optional[Settings] = None, client: Optional[LLMClient] = None
) -> ActAnnotator:
    """The LLM annotator when an LLM endpoint is configured and a client given, else the offline one.

    The setting `acts_annotator` (ARENA_ACTS_ANNOTATOR=offline|llm) overrides the choice.
    """
    from evaluators.acts.offline import OfflineActAnnotator

    choice = (settings.acts_annotator if settings is not None else None) or ""
    endpoint = settings is not None and getattr(settings, "llm_provider", None) == "openai"
    if client is not None and (choice == "llm" or (choice != "offline" and endpoint)):
        from evaluators.acts.llm import LLMActAnnotator

        return LLMActAnnotator(client)
    if settings is None:
        return OfflineActAnnotator()
    return OfflineActAnnotator(runtime=settings.acts_runtime, threads=settings.acts_threads)


def _annotator_of(ctx: Context) -> ActAnnotator:
    if ctx.annotator is None:  # `score_dialogue` chooses one whenever acts are to be made
        raise RuntimeError("dialogue acts are to be annotated, but no annotator was chosen")
    return ctx.annotator


def _planned_label(dialogue: Dialogue, ctx: Context, force: bool) -> str:
    """The label the acts will have once `_prepare_acts` has run."""
    missing = any(u.dialogue_acts is None for u in dialogue.utterances)
    if force or missing:
        return _annotator_of(ctx).label
    return dialogue.metadata.get("acts_annotator") or PROVIDED_ACTS


def _prepare_acts(dialogue: Dialogue, ctx: Context, force: bool) -> None:
    """Fill missing acts in place and record where the acts came from."""
    missing = any(u.dialogue_acts is None for u in dialogue.utterances)
    if force or missing:
        annotator = _annotator_of(ctx)
        try:
            annotated = annotator.annotate(dialogue, overwrite=force)
        except Exception as exc:
            log.warning("act annotation failed for %s: %s", dialogue.dialogue_id, exc)
            ctx.acts_label, ctx.acts_model = annotator.label, annotator.model_label
            ctx.acts_error = f"annotation failed: {type(exc).__name__}: {exc}"
            return
        for utt, new in zip(dialogue.utterances, annotated.utterances):
            utt.dialogue_acts, utt.acts_annotator = new.dialogue_acts, new.acts_annotator
        dialogue.metadata["acts_annotator"] = annotator.label
        dialogue.metadata["acts_model"] = annotator.model_label
    label = dialogue.metadata.get("acts_annotator")
    ctx.acts_label = label or PROVIDED_ACTS
    ctx.acts_model = dialogue.metadata.get("acts_model") if label else None


def _expected_versions(group: MetricGroup, label: str) -> set[str]:
    return {f"{METRICS_VERSION}/{label}", f"{METRICS_VERSION}/k{RECALL_K}/{label}"}


def _is_current(dialogue: Dialogue, group: MetricGroup, ctx: Context, label: Optional[str] = None) -> bool:
    if group.name == "core":
        return _core_current(dialogue, ctx)
    versions = _expected_versions(group, label or ctx.acts_label or PROVIDED_ACTS)
    for name in group.score_names:
        s = dialogue.scores.get(name)
        if s is None or s.error is not None or s.version not in versions:
            return False
    return True


def score_dialogue(dialogue: Dialogue, metrics: list[str], *, client: Optional[LLMClient] = None,
                   annotator: Optional[ActAnnotator] = None, force: bool = False,
                   settings: Optional[Settings] = None) -> dict[str, Score]:
    """Score `dialogue` with the named metric groups; returns every score of those groups.

    Updates the dialogue in place: missing dialogue acts are filled (all of
    them with `force`) and the scores are set in `dialogue.scores`.
    """
    groups = [REGISTRY[m] for m in dict.fromkeys(metrics)]
    unknown = [m for m in metrics if m not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(REGISTRY)}")
    ctx = Context(client=client, annotator=annotator, settings=settings)
    act_groups = [g for g in groups if g.needs_acts]
    if act_groups:
        complete = all(u.dialogue_acts is not None for u in dialogue.utterances)
        if ctx.annotator is None and (force or not complete):  # built only when acts are to be made
            ctx.annotator = default_annotator(settings, client)
        planned = _planned_label(dialogue, ctx, force)
        if not force and complete and all(_is_current(dialogue, g, ctx, planned) for g in act_groups):
            ctx.acts_label = planned  # everything act-based is up to date: no need to annotate
        else:
            # Current scores whose acts are missing (a dialogue stored before acts were kept) get their
            # acts again from the annotator their version names; the scores themselves stay as they are.
            _prepare_acts(dialogue, ctx, force)
    out: dict[str, Score] = {}
    for group in groups:
        if not force and _is_current(dialogue, group, ctx):
            out.update({n: dialogue.scores[n] for n in group.score_names if n in dialogue.scores})
            continue
        try:
            scores = group.compute(dialogue, ctx)
        except Exception as exc:  # a scorer bug must not take the others down
            log.exception("metric %s failed on %s", group.name, dialogue.dialogue_id)
            scores = {n: Score(value=None, scorer=group.name, version=METRICS_VERSION,
                               error=f"{type(exc).__name__}: {exc}") for n in group.score_names}
        out.update(scores)
    dialogue.scores.update(out)
    return out
