"""A finished conversation's automatic scores in plain words, for the participant who had it.

Researchers read metric names, scorer versions and models in the exports; a
participant reads what the numbers mean ("you accepted 1 of 2 rounds of
recommendations"), without version strings, and nothing at all for a metric
that has no value yet. The app shows this only when ARENA_SHOW_SCORES is on.
"""

from __future__ import annotations

from typing import Optional

from arena.dialogue import Dialogue, Score
from webapp.ui.parts.render import plural

PENDING = "_Your conversation is being scored; refresh in a moment._"
NOT_FINISHED = "_Scores appear here once you have rated the conversation (Satisfied or Frustrated)._"
CAVEAT = ("_These are automatic estimates: software reads the conversation and may misread it. "
          "They do not change anything you said._")


def _value(scores: dict[str, Score], name: str) -> Optional[Score]:
    score = scores.get(name)
    return score if score is not None and score.value is not None else None


def plain_scores(dialogue: Optional[Dialogue]) -> str:
    """Markdown: one plain sentence per automatic score the conversation has."""
    if dialogue is None or dialogue.feedback is None:
        return NOT_FINISHED
    scores = dialogue.scores
    lines = []
    srrr, sr = _value(scores, "srrr"), _value(scores, "sr")
    if srrr is not None and srrr.details.get("rounds"):
        rounds, accepted = int(srrr.details["rounds"]), int(srrr.details.get("successful_rounds", 0))
        lines.append(f"- **Recommendations you took up:** {accepted} of "
                     f"{plural(rounds, 'round')} of recommendations.")
    elif sr is not None:
        lines.append("- **Recommendations you took up:** "
                     + ("at least one." if sr.value >= 1 else "none that we could tell."))
    rdl = _value(scores, "rdl")
    if rdl is not None and rdl.details.get("length"):
        accepted, length = int(rdl.details.get("accepted", 0)), int(rdl.details["length"])
        lines.append(f"- **Pace:** {plural(accepted, 'accepted recommendation')} in "
                     f"{plural(length, 'message')} (yours and the system's).")
    core = _value(scores, "core.overall")
    if core is not None:
        lines.append(f"- **Overall quality, as judged by an AI panel:** {core.value:.0f} out of 100.")
    if not lines:
        return PENDING
    return "\n".join([*lines, "", CAVEAT])
