"""Multi-agent debate: four roles turn the factor scores into one 0-100 score.

Round 1: every role sees the dialogue and the scores and reasons of its own
three factors, and answers independently. Later rounds add the discussion so
far; each role may keep or revise its score. The debate stops as soon as all
four roles give the same score in a round, or after `max_rounds`. The overall
score is the mean of each role's last readable score.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from arena.dialogue import Dialogue, Score
from arena.llm import LLMClient, Message
from evaluators.core import transcript
from evaluators.core.calls import CallLedger, ask_with_retry
from evaluators.core.config import CoreConfig
from evaluators.core.factors import FACTOR_BY_KEY, ROLES, Role
from evaluators.core.parsing import parse_debate_answer
from evaluators.core.rubric import CoreAssets

MAX_REASON_CHARS = 1200


@dataclass
class DebateResult:
    rounds: list[list[dict[str, Any]]] = field(default_factory=list)
    stopped: str = "max_rounds"  # "consensus" | "max_rounds"
    final_scores: dict[str, Optional[float]] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)  # role -> provider:model

    @property
    def overall(self) -> Optional[float]:
        values = [v for v in self.final_scores.values() if v is not None]
        return sum(values) / len(values) if values else None


def factor_results_text(role: Role, factor_scores: Mapping[str, Score]) -> str:
    parts = []
    for key in role.factors:
        name = FACTOR_BY_KEY[key].name
        score = factor_scores.get(key)
        if score is None or score.value is None:
            parts.append(f"{name}: unscored (no readable rating)")
            continue
        reason = str(score.details.get("reason") or "").strip() or "(no reason given)"
        reason = transcript.neutralise(reason, MAX_REASON_CHARS)
        parts.append(f"{name}: {score.value:g} / 4\nReason: {reason}")
    return "\n\n".join(parts)


def discussion_text(rounds: list[list[dict[str, Any]]]) -> str:
    lines = []
    for number, entries in enumerate(rounds, 1):
        lines.append(f"Round {number}:")
        for entry in entries:
            score = "no readable answer" if entry["score"] is None else f"score {entry['score']:g}"
            statement = transcript.neutralise(entry.get("statement") or "", MAX_REASON_CHARS)
            lines.append(f"- {entry['evaluator']} ({score}): {statement}")
    return "\n".join(lines)


def debate_messages(assets: CoreAssets, role: Role, dialogue: Dialogue, factor_scores: Mapping[str, Score],
                    rounds: list[list[dict[str, Any]]], max_rounds: int) -> list[Message]:
    sections = [
        ("conversation", transcript.conversation_text(dialogue)),
        ("recommendation_list", transcript.recommendation_list(dialogue)),
    ]
    targets = transcript.targets(dialogue)
    if targets:
        sections.append(("target_items", transcript.numbered(targets, "")))
    sections.append(("evaluation_result", factor_results_text(role, factor_scores)))
    if rounds:
        sections.append(("discussion", discussion_text(rounds)))
    block = transcript.data_block(sections)
    text = assets.roles[role.key]
    system = assets.render(
        "debate_system", role_description=text.description, role_name=text.name,
        open_marker=block.open_marker, close_marker=block.close_marker,
    )
    template = "debate_user_later" if rounds else "debate_user_first"
    user = assets.render(template, round=len(rounds) + 1, max_rounds=max_rounds,
                         data_block=block.text, role_name=text.name)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _turn(client: LLMClient, assets: CoreAssets, role: Role, model: str, dialogue: Dialogue,
          factor_scores: Mapping[str, Score], rounds: list[list[dict[str, Any]]],
          config: CoreConfig, ledger: CallLedger) -> dict[str, Any]:
    name = assets.roles[role.key].name
    outcome = ask_with_retry(
        client,
        debate_messages(assets, role, dialogue, factor_scores, rounds, config.max_rounds),
        parse_debate_answer,
        assets.render("debate_repair", role_name=name),
        ledger,
        model=model,
        temperature=config.temperature,
        max_tokens=config.debate_max_tokens,
        seed=config.seed,
    )
    answer = outcome.parsed
    entry: dict[str, Any] = {
        "role": role.key,
        "evaluator": name,
        "model": client.describe(model),
        "score": answer.score if answer else None,
        "statement": answer.statement if answer else "",
        "attempts": outcome.attempts,
    }
    if outcome.error:
        entry["error"] = outcome.error
        if outcome.attempts:
            entry["raw"] = outcome.text[:2000]
    return entry


def run_debate(client: LLMClient, assets: CoreAssets, dialogue: Dialogue, factor_scores: Mapping[str, Score],
               config: CoreConfig, ledger: CallLedger, pool: Executor) -> DebateResult:
    result = DebateResult()
    models = {role.key: config.model_for_role(role.key, client.model) for role in ROLES}
    result.models = {key: client.describe(model) for key, model in models.items()}
    last: dict[str, Optional[float]] = {role.key: None for role in ROLES}
    for _ in range(config.max_rounds):
        history = [list(r) for r in result.rounds]
        futures = [
            pool.submit(_turn, client, assets, role, models[role.key], dialogue, factor_scores,
                        history, config, ledger)
            for role in ROLES
        ]
        entries = [f.result() for f in futures]
        result.rounds.append(entries)
        for entry in entries:
            if entry["score"] is not None:
                last[entry["role"]] = entry["score"]
        scores = [e["score"] for e in entries]
        if None not in scores and len(set(scores)) == 1:
            result.stopped = "consensus"
            break
    result.final_scores = last
    return result
