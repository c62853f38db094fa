"""The aspect names a rating file uses: the form's, the mapping's aliases and extras, and new ones.

`AspectNames.take(column, value, level)` resolves one cell of a rating file:

* an aspect of the form, or an alias of one in the mapping (CRSArena-Eval's
  `dialogue_overall` is the form's `overall_impression`): checked on its scale;
* an extra aspect the mapping declares (`preference_elicitation`, 0-2): kept
  under its own name, checked on its declared scale;
* any other name: kept as an extra aspect too, with its scale inferred from the
  file (whole numbers around the values seen), unless it is reserved or so
  close to a known name that it looks like a typo (`understandnig`).

An aspect keeps one level (dialogue or reply) within a file. `summary()` names
the extra aspects kept, for the command's report; `scale(name)` is stored with
each rating (`Rating.extra_scales`).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any, Optional

from arena.crowd.aspects import Aspect, AspectForm, AspectMapping

RESERVED_NAMES = ("satisfaction",)  # the meta-evaluation's name for the users' own satisfied/frustrated
TYPO_SIMILARITY = 0.85  # a new name at least this close to a known one is refused as a likely typo


@dataclass
class _Extra:
    """An extra aspect met in the file: its level, and the values seen (for an inferred scale)."""

    level: str
    first: str  # where it was first met
    declared: Optional[Aspect] = None
    low: float = math.inf
    high: float = -math.inf


@dataclass
class AspectNames:
    """Resolves a file's column names: the form's aspects, the mapping's aliases and extras, new names."""

    form: AspectForm
    mapping: Optional[AspectMapping] = None
    extras: dict[str, _Extra] = field(default_factory=dict)

    def known(self) -> list[str]:
        return self.form.names() + (self.mapping.names() if self.mapping else [])

    def take(self, column: str, raw: Any, level: str, where: str) -> tuple[str, float]:
        """(the aspect's name, the checked value); ValueError with the message for `column`."""
        target = self.mapping.aliases.get(column) if self.mapping else None
        aspect = self.form.get(target or column)
        if aspect is not None:
            self._check_level(aspect.level, level)
            return aspect.name, aspect.check(raw)
        declared = self.mapping.extra_aspect(column) if self.mapping else None
        if declared is None:
            self._check_new_name(column)
        extra = self.extras.get(column)
        if extra is None:
            extra = self.extras[column] = _Extra(declared.level if declared else level, where, declared)
        self._check_level(extra.level, level, first=None if declared else extra.first)
        value = declared.check(raw) if declared else _number(raw)
        extra.low, extra.high = min(extra.low, value), max(extra.high, value)
        return column, value

    def _check_new_name(self, column: str) -> None:
        if column in RESERVED_NAMES:
            raise ValueError(f"{column!r} is reserved for the users' own satisfied/frustrated feedback")
        close = difflib.get_close_matches(column, self.known(), n=1, cutoff=TYPO_SIMILARITY)
        if close:
            raise ValueError(f"unknown aspect (form {self.form.version} has {', '.join(self.form.names())}); "
                             f"too close to {close[0]!r} to be kept as a new aspect (a typo?)")

    @staticmethod
    def _check_level(aspect_level: str, level: str, first: Optional[str] = None) -> None:
        if aspect_level == level:
            return
        if first is not None:
            raise ValueError(f"an extra aspect first met at {aspect_level} level ({first}) cannot be "
                             f"{level}-level here")
        need = (
            "with an utterance_id or turn_ind" if aspect_level == "utterance" else "without an utterance_id"
        )
        raise ValueError(f"a {aspect_level}-level aspect belongs on a row {need}")

    def scale(self, name: str) -> Optional[tuple[float, float]]:
        """An extra aspect's scale: declared, else inferred (whole numbers around the values seen)."""
        extra = self.extras.get(name)
        return None if extra is None else _extra_scale(extra)

    def summary(self) -> list[str]:
        """One phrase per extra aspect kept, e.g. "explanation (dialogue, 0-2, declared)"."""
        out = []
        for name, extra in sorted(self.extras.items()):
            low, high = _extra_scale(extra)
            how = "declared" if extra.declared else "inferred"
            out.append(f"{name} ({extra.level}, {low:g}-{high:g}, {how})")
        return out


def _number(raw: Any) -> float:
    if isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not a number")
    try:
        value = float(raw.strip() if isinstance(raw, str) else raw)
    except (TypeError, ValueError):
        raise ValueError(f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number")
    return value


def _extra_scale(extra: _Extra) -> tuple[float, float]:
    """An extra aspect's scale: declared, else inferred (whole numbers around the values seen)."""
    if extra.declared is not None:
        return float(extra.declared.low), float(extra.declared.high)
    return float(math.floor(extra.low)), float(math.ceil(extra.high))
