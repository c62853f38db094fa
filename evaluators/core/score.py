"""`score_core`: the 12 factor scores and the debated overall score of one dialogue."""

from __future__ import annotations

import time
from typing import Any, Optional

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Score
from arena.llm import LLMClient
from arena.llm.call_guard import guarded_pool
from evaluators.core import transcript
from evaluators.core.calls import CallLedger
from evaluators.core.config import CoreConfig
from evaluators.core.debate import run_debate
from evaluators.core.factors import FACTOR_KEYS, OVERALL_METRIC, ROLES, metric_name
from evaluators.core.judge import SCORER, JudgeResult, factor_score, run_judge
from evaluators.core.rubric import CoreAssets, load_assets


# Re-asks of unreadable answers per dialogue when no settings are given (ARENA_JUDGE_RETRIES).
DEFAULT_JUDGE_RETRIES = 2


def _unscored(assets: CoreAssets, client: LLMClient, config: CoreConfig, reason: str,
              details: dict[str, Any]) -> dict[str, Score]:
    """Every metric unscored (value None), still naming the models that would have scored it."""
    out = {}
    for key in FACTOR_KEYS:
        labels = dict.fromkeys(client.describe(m) for m in config.judges_for(key, client.model))
        out[metric_name(key)] = Score(value=None, scorer=SCORER, version=assets.version,
                                      model=", ".join(labels), error=reason,
                                      details={"factor": assets.factors[key].name})
    roles = dict.fromkeys(client.describe(config.model_for_role(r.key, client.model)) for r in ROLES)
    out[OVERALL_METRIC] = Score(value=None, scorer=SCORER, version=assets.version, model=", ".join(roles),
                                error=reason, details=details)
    return out


def score_core(
    dialogue: Dialogue,
    client: LLMClient,
    settings: Optional[Settings] = None,
    config: Optional[CoreConfig] = None,
) -> dict[str, Score]:
    """Rate the 12 CoRE factors (0-4) and debate an overall score (0-100).

    Returns "core.<factor>" for each factor and "core.overall". A factor no
    judge could rate, or an overall no debater could give, has value None.
    `settings` (arena.runtime.config.Settings) only supplies the default number of
    worker threads (`llm_concurrency`); `config` defaults to
    the `core_config` setting (ARENA_CORE_CONFIG).
    """
    if config is None:
        config = CoreConfig.from_setting(settings.core_config if settings is not None else None)
    assets = load_assets(config.assets_version)
    if not transcript.has_system_turn(dialogue):
        return _unscored(assets, client, config, "no system turn to evaluate",
                         {"calls": 0, "provider_calls": 0, "tokens": 0, "wall_s": 0.0})

    started = time.monotonic()
    ledger = CallLedger(
        retries_left=settings.judge_retries if settings is not None else DEFAULT_JUDGE_RETRIES
    )
    tasks = [(factor, model) for factor in FACTOR_KEYS for model in config.judges_for(factor, client.model)]
    workers = config.max_workers or getattr(settings, "llm_concurrency", None) or client.concurrency
    with guarded_pool(max_workers=max(1, min(workers, len(tasks))),
                      thread_name_prefix="core") as pool:
        futures = [
            pool.submit(run_judge, client, assets, factor, dialogue, model, config, ledger)
            for factor, model in tasks
        ]
        by_factor: dict[str, list[JudgeResult]] = {key: [] for key in FACTOR_KEYS}
        for future in futures:  # submission order keeps each factor's judges in config order
            result = future.result()
            by_factor[result.factor].append(result)
        scores = {key: factor_score(key, by_factor[key], assets, dialogue) for key in FACTOR_KEYS}
        judged = time.monotonic()
        debate = run_debate(client, assets, dialogue, scores, config, ledger, pool)
    finished = time.monotonic()

    overall = debate.overall
    details: dict[str, Any] = {
        "scale": [0, 100],
        "rounds": len(debate.rounds),
        "stopped": debate.stopped,
        "final_scores": debate.final_scores,
        "transcript": debate.rounds,
        "roles": {
            role.key: {"name": role.name, "factors": list(role.factors), "model": debate.models[role.key]}
            for role in ROLES
        },
        "factor_values": {key: scores[key].value for key in FACTOR_KEYS},
        **ledger.as_dict(),
        "wall_s": round(finished - started, 4),
        "judge_wall_s": round(judged - started, 4),
        "debate_wall_s": round(finished - judged, 4),
        "config": config.model_dump(),
        "assets_sha": assets.sha,
    }
    out = {metric_name(key): scores[key] for key in FACTOR_KEYS}
    out[OVERALL_METRIC] = Score(
        value=overall,
        scorer=SCORER,
        version=assets.version,
        model=", ".join(dict.fromkeys(debate.models.values())),
        details=details,
        error=None if overall is not None else "no debater gave a readable score",
    )
    return out
