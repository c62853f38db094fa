"""The aspect rating form: which aspects raters are asked about, and on what scale.

The form is a versioned YAML file in `assets/ratings/` (default
`aspects_v1.yaml`), so a study can change aspects, definitions and scales
without touching code. The same form drives the rating widgets in the Chat
and Battle tabs, the simulators' rating prompt, the validation of imported
rating files and the meta-evaluation's list of human aspects.

A mapping file (`AspectMapping`, default `aliases_v1.yaml`) says how another
study's rating files name things: aliases onto the form's aspects
(CRSArena-Eval's `dialogue_overall` is the form's `overall_impression`) and
the scales of aspects the form does not ask, which imports keep as extra
aspects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

import yaml

from arena.runtime.config import ASSETS_DIR

DEFAULT_FORM_PATH = ASSETS_DIR / "ratings" / "aspects_v1.yaml"
DEFAULT_MAPPING_PATH = ASSETS_DIR / "ratings" / "aliases_v1.yaml"
LEVELS = ("dialogue", "utterance")


class FormError(ValueError):
    """The form file itself is unusable."""


@dataclass(frozen=True)
class Aspect:
    name: str
    label: str
    definition: str
    low: int
    high: int
    level: str  # "dialogue" or "utterance"
    points: Mapping[int, str] = field(default_factory=dict)

    def scale(self) -> list[int]:
        return list(range(self.low, self.high + 1))

    def scale_text(self) -> str:
        return f"{self.low}-{self.high}"

    def check(self, value: Any) -> float:
        """The value as a number on this aspect's scale, or ValueError saying why not."""
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a number")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not a number") from None
        if math.isnan(number) or not self.low <= number <= self.high:
            raise ValueError(f"{value!r} is outside the scale {self.scale_text()} of {self.name!r}")
        return number


@dataclass(frozen=True)
class AspectForm:
    version: str
    dialogue: tuple[Aspect, ...]
    utterance: tuple[Aspect, ...]
    path: Optional[Path] = None

    @property
    def aspects(self) -> tuple[Aspect, ...]:
        return self.dialogue + self.utterance

    def get(self, name: str) -> Optional[Aspect]:
        return next((a for a in self.aspects if a.name == name), None)

    def names(self, level: Optional[str] = None) -> list[str]:
        return [a.name for a in self.aspects if level is None or a.level == level]

    def clean(self, values: Mapping[str, Any], level: str) -> dict[str, float]:
        """Validated values of one level; None/"" entries are skipped (unrated).

        Raises ValueError naming the first unknown aspect or bad value.
        """
        allowed = {a.name: a for a in (self.dialogue if level == "dialogue" else self.utterance)}
        out: dict[str, float] = {}
        for name, value in values.items():
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            aspect = allowed.get(name)
            if aspect is None:
                raise ValueError(f"unknown {level} aspect {name!r} (form {self.version} has "
                                 f"{', '.join(allowed) or 'none'})")
            out[name] = aspect.check(value)
        return out


def _aspect(raw: Any, level: str, where: str) -> Aspect:
    if not isinstance(raw, dict):
        raise FormError(f"{where}: expected a mapping")
    try:
        name, low, high = str(raw["name"]), int(raw["min"]), int(raw["max"])
    except (KeyError, TypeError, ValueError) as exc:
        raise FormError(f"{where}: needs name, min and max ({exc})") from None
    if low >= high:
        raise FormError(f"{where}: min {low} must be below max {high}")
    points = {int(k): str(v) for k, v in (raw.get("points") or {}).items()}
    return Aspect(name=name, label=str(raw.get("label") or name), definition=str(raw.get("definition") or ""),
                  low=low, high=high, level=level, points=points)


def parse_form(data: Any, path: Optional[Path] = None) -> AspectForm:
    if not isinstance(data, dict) or not data.get("version"):
        raise FormError(f"{path or 'form'}: expected a mapping with a version")
    parts: dict[str, tuple[Aspect, ...]] = {}
    for level in LEVELS:
        raw = data.get(level) or []
        if not isinstance(raw, list):
            raise FormError(f"{path or 'form'}: {level} must be a list of aspects")
        parts[level] = tuple(_aspect(a, level, f"{path or 'form'}: {level}[{i}]") for i, a in enumerate(raw))
    names = [a.name for a in parts["dialogue"] + parts["utterance"]]
    if len(set(names)) != len(names):
        raise FormError(f"{path or 'form'}: aspect names must be unique, got {names}")
    return AspectForm(version=str(data["version"]), dialogue=parts["dialogue"], utterance=parts["utterance"],
                      path=path)


@lru_cache(maxsize=8)
def _load(path: Path) -> AspectForm:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise FormError(f"cannot read rating form {path}: {exc}") from None
    return parse_form(data, path)


def load_form(path: Union[str, Path, None] = None) -> AspectForm:
    """The form at `path` (default: the shipped aspects_v1.yaml), read once per process."""
    return _load(Path(path or DEFAULT_FORM_PATH).resolve())


@dataclass(frozen=True)
class AspectMapping:
    """How a study's rating files name aspects, relative to one form version.

    `aliases` maps a file's name onto the form's aspect; `extra` declares the
    level and scale of aspects the form does not ask (kept under their own
    names when imported).
    """

    version: str
    form_version: str
    aliases: Mapping[str, str]
    extra: tuple[Aspect, ...]
    path: Optional[Path] = None

    def extra_aspect(self, name: str) -> Optional[Aspect]:
        return next((a for a in self.extra if a.name == name), None)

    def names(self) -> list[str]:
        return [*self.aliases, *(a.name for a in self.extra)]


def parse_mapping(data: Any, form: AspectForm, path: Optional[Path] = None) -> AspectMapping:
    """A mapping checked against `form`: aliases must name its aspects, extra aspects must not."""
    where = str(path or "mapping")
    if not isinstance(data, dict) or not data.get("version") or not data.get("form"):
        raise FormError(f"{where}: expected a mapping with a version and the form version it maps onto")
    if str(data["form"]) != form.version:
        raise FormError(f"{where}: maps onto form {data['form']}, but the form in use is {form.version}")
    aliases = _mapping_aliases(data.get("aliases") or {}, form, where)
    extra = _mapping_extra(data.get("extra") or {}, form, aliases, where)
    return AspectMapping(version=str(data["version"]), form_version=form.version, aliases=aliases,
                         extra=tuple(extra), path=path)


def _mapping_aliases(raw: Any, form: AspectForm, where: str) -> dict[str, str]:
    """A mapping's aliases: each a name the form does not have, pointing at an aspect it has."""
    if not isinstance(raw, dict):
        raise FormError(f"{where}: aliases must map a file's name to an aspect of the form")
    aliases = {str(k): str(v) for k, v in raw.items()}
    for name, target in aliases.items():
        if form.get(target) is None:
            raise FormError(
                f"{where}: alias {name!r} points at {target!r}, which form {form.version} does not have"
            )
        if form.get(name) is not None:
            raise FormError(f"{where}: alias {name!r} is already an aspect of form {form.version}")
    return aliases


def _mapping_extra(raw_extra: Any, form: AspectForm, aliases: dict[str, str], where: str) -> list[Aspect]:
    """A mapping's extra aspects, per level: unique names that are neither the form's nor an alias."""
    if not isinstance(raw_extra, dict):
        raise FormError(f"{where}: extra must have dialogue and utterance lists of aspects")
    extra: list[Aspect] = []
    for level in LEVELS:
        raw = raw_extra.get(level) or []
        if not isinstance(raw, list):
            raise FormError(f"{where}: extra.{level} must be a list of aspects")
        extra += [_aspect(a, level, f"{where}: extra.{level}[{i}]") for i, a in enumerate(raw)]
    for aspect in extra:
        if form.get(aspect.name) is not None or aspect.name in aliases:
            raise FormError(
                f"{where}: extra aspect {aspect.name!r} is already a name of the form or an alias"
            )
    if len({a.name for a in extra}) != len(extra):
        raise FormError(f"{where}: extra aspect names must be unique")
    return extra


def load_mapping(form: AspectForm, path: Union[str, Path, None] = None) -> Optional[AspectMapping]:
    """The mapping at `path` for `form`; without a path the shipped one, or None when it maps onto
    another form version (a study with its own form brings its own mapping)."""
    chosen = Path(path or DEFAULT_MAPPING_PATH).resolve()
    try:
        data = yaml.safe_load(chosen.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise FormError(f"cannot read aspect mapping {chosen}: {exc}") from None
    if path is None and isinstance(data, dict) and str(data.get("form")) != form.version:
        return None
    return parse_mapping(data, form, chosen)


def mean_values(ratings: Iterable[Any], rater_kind: Optional[str] = None) -> dict[str, float]:
    """Per aspect, the mean over the given ratings (of one rater kind when asked) that answered it."""
    sums: dict[str, list[float]] = {}
    for r in ratings:
        kind = r.rater_kind.value if hasattr(r.rater_kind, "value") else str(r.rater_kind)
        if rater_kind is not None and kind != rater_kind:
            continue
        for name, value in r.values.items():
            sums.setdefault(name, []).append(value)
    return {name: sum(vs) / len(vs) for name, vs in sums.items()}
