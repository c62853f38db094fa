"""LLM-as-evaluator: one judge rating one factor of one dialogue on 0-4."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from arena.dialogue import Dialogue, Score
from arena.llm import LLMClient, Message
from evaluators.core import transcript
from evaluators.core.calls import CallLedger, ask_with_retry
from evaluators.core.config import CoreConfig
from evaluators.core.parsing import parse_rating, reason_text
from evaluators.core.rubric import CoreAssets

SCORER = "core"


@dataclass(frozen=True)
class JudgeResult:
    factor: str
    model: str  # provider:model label
    value: Optional[float]
    reason: str
    attempts: int
    error: Optional[str] = None
    raw: Optional[str] = None  # kept only when the answer could not be read

    def as_dict(self) -> dict[str, Any]:
        out = {"model": self.model, "value": self.value, "reason": self.reason, "attempts": self.attempts}
        if self.error:
            out["error"] = self.error
        if self.raw is not None:
            out["raw"] = self.raw
        return out


def judge_messages(assets: CoreAssets, factor: str, dialogue: Dialogue) -> list[Message]:
    rubric = assets.factors[factor]
    sections = [
        ("conversation", transcript.conversation_text(dialogue)),
        ("recommendation_list", transcript.recommendation_list(dialogue)),
    ]
    targets = transcript.targets(dialogue) if rubric.uses_targets else []
    if targets:
        sections.append(("target_items", transcript.numbered(targets, "")))
    block = transcript.data_block(sections)
    system = assets.render(
        "judge_system",
        factor_name=rubric.name,
        definition=rubric.definition,
        reference=(f"\n<reference>\n{rubric.reference(bool(targets))}\n</reference>"
                   if rubric.uses_targets else ""),
        standard="\n".join(rubric.standard),
        steps="\n".join(f"{i}. {step}" for i, step in enumerate(rubric.steps, 1)),
        open_marker=block.open_marker,
        close_marker=block.close_marker,
    )
    user = assets.render("judge_user", factor_name=rubric.name, data_block=block.text)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def run_judge(
    client: LLMClient,
    assets: CoreAssets,
    factor: str,
    dialogue: Dialogue,
    model: str,
    config: CoreConfig,
    ledger: CallLedger,
) -> JudgeResult:
    outcome = ask_with_retry(
        client,
        judge_messages(assets, factor, dialogue),
        parse_rating,
        assets.render("judge_repair", factor_name=assets.factors[factor].name),
        ledger,
        model=model,
        temperature=config.temperature,
        max_tokens=config.judge_max_tokens,
        seed=config.seed,
    )
    unread = outcome.parsed is None and outcome.attempts > 0
    return JudgeResult(
        factor=factor,
        model=client.describe(model),
        value=None if outcome.parsed is None else float(outcome.parsed),
        reason=reason_text(outcome.text) if outcome.parsed is not None else "",
        attempts=outcome.attempts,
        error=outcome.error,
        raw=outcome.text[:2000] if unread else None,
    )


def factor_score(factor: str, results: list[JudgeResult], assets: CoreAssets,
                 dialogue: Dialogue) -> Score:
    """A factor's Score: the mean of the judges that gave a readable rating."""
    rubric = assets.factors[factor]
    values = [r.value for r in results if r.value is not None]
    labels = list(dict.fromkeys(r.model for r in results))
    details: dict[str, Any] = {
        "factor": rubric.name,
        "dimension": rubric.dimension,
        "scale": [0, 4],
        "reason": "\n\n".join(r.reason for r in results if r.value is not None and r.reason),
        "judges": [r.as_dict() for r in results],
        "assets_sha": assets.sha,
    }
    if rubric.uses_targets:
        details["reference"] = "targets" if transcript.targets(dialogue) else "expressed preferences"
    error = None
    if not values:
        error = "unscored: " + "; ".join(f"{r.model}: {r.error or 'no rating'}" for r in results)
    return Score(
        value=sum(values) / len(values) if values else None,
        scorer=SCORER,
        version=assets.version,
        model=", ".join(labels),
        details=details,
        error=error,
    )
