"""Simulated users fill the aspect rating form that people fill, so the two can be compared.

At the end of a dialogue the simulator is asked, through the one LLM client,
for one `name: number` line per dialogue-level aspect of the form (the prompt
is the versioned file `assets/ratings/simulator_prompt_v1.yaml`). Each aspect
whose line is missing, not a whole number or off the scale stays unrated;
a failed call leaves every aspect unrated, with the reason in `Rating.error`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional, Union

import yaml

from arena.crowd.aspects import AspectForm
from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Dialogue, Rating, UserKind

DEFAULT_PROMPT_PATH = ASSETS_DIR / "ratings" / "simulator_prompt_v1.yaml"
_LINE = re.compile(r"^[\s*`\-]*([A-Za-z_ ]+?)[\s*`]*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.M)


@dataclass(frozen=True)
class RatingPrompt:
    version: str
    system: str
    user: str


@lru_cache(maxsize=4)
def _load(path: Path) -> RatingPrompt:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(data.get(k) for k in ("version", "system", "user")):
        raise ValueError(f"{path}: a rating prompt needs version, system and user")
    return RatingPrompt(str(data["version"]), str(data["system"]), str(data["user"]))


def load_rating_prompt(path: Union[str, Path, None] = None) -> RatingPrompt:
    return _load(Path(path or DEFAULT_PROMPT_PATH).resolve())


def build_messages(prompt: RatingPrompt, form: AspectForm, persona: str, transcript: str) -> tuple[str, str]:
    aspects = "\n".join(f"{a.name} ({a.scale_text()}): {a.definition}" for a in form.dialogue)
    names = ", ".join(form.names("dialogue"))
    return (prompt.system.format(persona=persona),
            prompt.user.format(transcript=transcript, aspects=aspects, names=names))


def parse_answer(text: str, form: AspectForm) -> tuple[dict[str, float], list[str]]:
    """The aspects read from the answer and the problems with the rest (each then unrated)."""
    found: dict[str, float] = {}
    problems: list[str] = []
    for match in _LINE.finditer(text or ""):
        name = match.group(1).strip().lower().replace(" ", "_")
        aspect = form.get(name)
        if aspect is None or aspect.level != "dialogue" or name in found:
            continue
        number = float(match.group(2))
        if number != int(number):
            problems.append(f"{name}: {match.group(2)} is not a whole number")
            continue
        try:
            found[name] = aspect.check(int(number))
        except ValueError as exc:
            problems.append(f"{name}: {exc}")
    missing = [n for n in form.names("dialogue")
               if n not in found and not any(p.startswith(f"{n}:") for p in problems)]
    if missing:
        problems.append("no answer for " + ", ".join(missing))
    return found, problems


def rate_dialogue(
    dialogue: Dialogue,
    ask: Callable[[str, str], str],
    *,
    form: AspectForm,
    persona: str,
    transcript: str,
    rater_id: str,
    model: Optional[str],
    prompt: Optional[RatingPrompt] = None,
) -> Rating:
    """One simulator rating of the dialogue (never raises for a bad or failed answer)."""
    prompt = prompt or load_rating_prompt()
    system, user = build_messages(prompt, form, persona, transcript)
    common = dict(rater_id=rater_id, rater_kind=UserKind.SIMULATOR, form_version=form.version,
                  prompt_version=prompt.version, model=model, source="simulator")
    try:
        answer = ask(system, user)
    except Exception as exc:  # the dialogue is finished; a failed rating must not lose it
        return Rating(values={}, error=f"rating call failed: {type(exc).__name__}: {exc}"[:500], **common)
    values, problems = parse_answer(answer, form)
    return Rating(values=values, error="; ".join(problems)[:500] or None, **common)
