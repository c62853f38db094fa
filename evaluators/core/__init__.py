"""CoRE: LLM-as-evaluator for 12 factors plus a four-role debate (see README, "CoRE").

    from evaluators.core import score_core
    scores = score_core(dialogue, client)          # {"core.coherence": Score, ..., "core.overall": Score}
"""

from evaluators.core.config import CoreConfig
from evaluators.core.factors import FACTOR_KEYS, FACTORS, OVERALL_METRIC, ROLES, metric_name
from evaluators.core.parsing import parse_debate_answer, parse_rating
from evaluators.core.rubric import load_assets
from evaluators.core.score import score_core

__all__ = [
    "CoreConfig",
    "FACTORS",
    "FACTOR_KEYS",
    "OVERALL_METRIC",
    "ROLES",
    "load_assets",
    "metric_name",
    "parse_debate_answer",
    "parse_rating",
    "score_core",
]
