"""The twelve CoRE factors and the four debate roles (names only, no I/O).

Kept free of heavy imports so that the UI can order and label a score card
without loading the evaluator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Factor:
    key: str  # snake_case, used in metric names: core.<key>
    name: str  # display name, as in the paper
    dimension: str


FACTORS: tuple[Factor, ...] = (
    Factor("coherence", "Coherence", "Dialogue Actions"),
    Factor("recoverability", "Recoverability", "Dialogue Actions"),
    Factor("proactiveness", "Proactiveness", "Dialogue Actions"),
    Factor("grammatical_correctness", "Grammatical Correctness", "Language Expression"),
    Factor("naturalness", "Naturalness", "Language Expression"),
    Factor("appropriateness", "Appropriateness", "Language Expression"),
    Factor("effectiveness", "Effectiveness", "Recommended Items"),
    Factor("novelty", "Novelty", "Recommended Items"),
    Factor("diversity", "Diversity", "Recommended Items"),
    Factor("semantic_relevance", "Semantic Relevance", "Response Content"),
    Factor("explainability", "Explainability", "Response Content"),
    Factor("groundness", "Groundness", "Response Content"),
)
FACTOR_KEYS: tuple[str, ...] = tuple(f.key for f in FACTORS)
FACTOR_BY_KEY: dict[str, Factor] = {f.key: f for f in FACTORS}


@dataclass(frozen=True)
class Role:
    key: str
    name: str
    factors: tuple[str, ...]  # factor keys this role is responsible for


ROLES: tuple[Role, ...] = (
    Role("common_user", "Common User", ("effectiveness", "recoverability", "coherence")),
    Role("domain_expert", "Domain Expert", ("diversity", "novelty", "groundness")),
    Role("linguist", "Linguist", ("naturalness", "grammatical_correctness", "appropriateness")),
    Role("hci_expert", "HCI Expert", ("explainability", "proactiveness", "semantic_relevance")),
)
ROLE_KEYS: tuple[str, ...] = tuple(r.key for r in ROLES)
ROLE_BY_KEY: dict[str, Role] = {r.key: r for r in ROLES}

METRIC_PREFIX = "core."
OVERALL_METRIC = "core.overall"


def metric_name(factor_key: str) -> str:
    return METRIC_PREFIX + factor_key


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.strip().lower()).strip("_")


_FACTOR_ALIASES = {
    "grammar": "grammatical_correctness",
    "groundedness": "groundness",
    "relevance": "semantic_relevance",
    "explainabiliy": "explainability",  # the paper's own spelling in Table 1
    "proactivity": "proactiveness",
}
_ROLE_ALIASES = {
    "general_user": "common_user",
    "user": "common_user",
    "movie_expert": "domain_expert",
    "expert": "domain_expert",
    "hci": "hci_expert",
}


def factor_key(name: str) -> str:
    """'Grammatical Correctness', 'grammatical_correctness', 'grammar' -> 'grammatical_correctness'."""
    slug = _slug(name)
    slug = _FACTOR_ALIASES.get(slug, slug)
    if slug not in FACTOR_BY_KEY:
        raise ValueError(f"unknown CoRE factor {name!r}; expected one of {', '.join(FACTOR_KEYS)}")
    return slug


def role_key(name: str) -> str:
    slug = _slug(name)
    slug = _ROLE_ALIASES.get(slug, slug)
    if slug not in ROLE_BY_KEY:
        raise ValueError(f"unknown CoRE debate role {name!r}; expected one of {', '.join(ROLE_KEYS)}")
    return slug
