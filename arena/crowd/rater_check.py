"""A sequential test per rater: are this person's satisfied/frustrated labels improbable?

LMArena (FastChat) drops voters whose votes a sequential test finds
improbable. Here the null hypothesis for a rater is that each of their labels
is satisfied with the probability other raters give that system (their
Laplace-smoothed satisfaction rate, the rater left out). The test statistic
is a likelihood ratio against a predictable alternative, "this rater keeps
giving the label they gave so far": before each label the alternative's
chance of "satisfied" is (earlier satisfied + 1) / (earlier labels + 2). The
running product is a test martingale under the null, so by Ville's
inequality the chance that an honest rater's product ever reaches 1/alpha is
at most alpha, however long we watch; alpha is split over the raters
(Bonferroni). A session that rates 30 conversations "satisfied" with a
system others find satisfying half the time reaches about 3.5e7.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from arena.dialogue import Dialogue, UserKind
from arena.runtime.imports import heavy_imports

# Family-wise chance of flagging an honest rater, split over the raters tested.
ALPHA = 0.01
# Ids that pool many people (no session known) are not one rater.
POOLED_IDS = frozenset({"", "anonymous"})


def rater_evidence(dialogues: Iterable[Dialogue]) -> dict[str, float]:
    """rater id -> the largest log10 likelihood ratio their labels reached (0 when never above 1), of
    people's labelled dialogues (`label_evidence` on their columns)."""
    labelled = [(d, fb) for d in dialogues
                if (fb := d.feedback) is not None and d.user.kind == UserKind.HUMAN]
    return label_evidence([d.user.id for d, _ in labelled], [d.crs_id for d, _ in labelled],
                          [fb.sentiment == "satisfied" for _, fb in labelled],
                          [fb.timestamp for _, fb in labelled])


def flagged_raters(dialogues: Iterable[Dialogue], alpha: float = ALPHA) -> set[str]:
    """Raters whose labels reached 1 / (alpha / raters): improbable under honest labelling."""
    return flagged_by_evidence(rater_evidence(dialogues), alpha)


def flagged_by_evidence(evidence: dict[str, float], alpha: float = ALPHA) -> set[str]:
    """The raters of `evidence` (from `rater_evidence` or `label_evidence`) past the Bonferroni threshold."""
    if not evidence:
        return set()
    threshold = math.log10(len(evidence) / alpha)
    return {rater for rater, value in evidence.items() if value >= threshold}


def label_evidence(raters: Any, systems: Any, satisfied: Any, when: Any) -> dict[str, float]:
    """rater id -> the largest log10 likelihood ratio their labels reached (0 when never above 1), of people's
    labels given as columns (rater id, system, satisfied, when: times comparable), by array operations.
    The one implementation of the test: the exports' dialogues (`rater_evidence`) and the board job's
    compact rows (`webapp.leaderboard.board_select`) both come here."""
    import numpy as np
    with heavy_imports():
        import pandas as pd

    frame = pd.DataFrame(
        {
            "rater": np.asarray(raters, dtype=object),
            "system": np.asarray(systems, dtype=object),
            "sat": np.asarray(satisfied, dtype=bool).astype(int),
            "when": np.asarray(when, dtype=object),
        }
    )
    if frame.empty:
        return {}
    totals = frame.groupby("system")["sat"].agg(["sum", "count"])
    own = frame.groupby(["rater", "system"])["sat"].agg(["sum", "count"])
    frame = frame[~frame["rater"].isin(list(POOLED_IDS))]
    if frame.empty:
        return {}
    frame = frame.sort_values(["rater", "when"], kind="stable")
    sat_all = totals["sum"].reindex(frame["system"]).to_numpy()
    n_all = totals["count"].reindex(frame["system"]).to_numpy()
    keys = pd.MultiIndex.from_arrays([frame["rater"], frame["system"]])
    sat_own, n_own = own["sum"].reindex(keys).to_numpy(), own["count"].reindex(keys).to_numpy()
    p_null = (sat_all - sat_own + 1) / (n_all - n_own + 2)
    by_rater = frame.groupby("rater", sort=False)
    step = by_rater.cumcount().to_numpy()
    sat = frame["sat"].to_numpy()
    seen = by_rater["sat"].cumsum().to_numpy() - sat  # satisfied labels before this one
    q_alt = (seen + 1) / (step + 2)
    ratio = np.where(sat == 1, q_alt / p_null, (1 - q_alt) / (1 - p_null))
    frame = frame.assign(log_e=np.log10(ratio))
    frame["log_e"] = frame.groupby("rater", sort=False)["log_e"].cumsum()
    best = frame.groupby("rater", sort=False)["log_e"].max().clip(lower=0.0)
    return {str(rater): float(value) for rater, value in best.items()}
