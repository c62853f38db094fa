"""First measurements of the offline act annotator on arena-style sets it had never seen.

    HF_HUB_OFFLINE=1 python benchmarks/acts_fresh_sets.py

Each arena-style test set from test3 on was committed before the annotator of
that moment was run on it; after that one measurement its errors were read and
it became development data for the next version. This script replays those
first measurements from the repository's history: for every (set, commit) pair
below it checks the commit out into a temporary git worktree and scores the
set with the annotator (code and classifier artifact) of that commit. It needs
a clone with history, and prints Markdown: one row per set, then the counts of
all first measurements pooled.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (test set, commit that added it: the annotator of that moment, version as recorded in its artifact)
FIRST_MEASUREMENTS = [
    ("test3", "8a8e573"),
    ("test4", "ce5ffc7"),
    ("test5", "0017059"),
    ("test6", "54e7b65"),
    ("test7", "b8ebc12"),
    ("test8", "992f96b"),
    ("test9", "7ad7955"),
    ("test10", "0437062"),  # the shipped annotator; this set has not been tuned on
]

# Runs inside a worktree; prints the counts as JSON.
_MEASURE = """
import json, sys
from pathlib import Path
sys.path.insert(0, ".")
from evaluators.acts.offline import OfflineActAnnotator
from evaluators.acts.data import load_arena_style
from evaluators.acts.quality import evaluate_rows
annotator = OfflineActAnnotator()
counts, _ = evaluate_rows(annotator, load_arena_style(Path(sys.argv[1])))
print(json.dumps({"version": annotator.version,
                  "counts": {k: [v.tp, v.fp, v.fn] for k, v in counts.items()}}))
"""


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def measure(name: str, commit: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), commit], check=True)
        try:
            # At these commits the sets were still kept beside the model, in assets/acts/.
            out = subprocess.run([sys.executable, "-c", _MEASURE, f"assets/acts/{name}_arena_style.jsonl"],
                                 cwd=tree, capture_output=True, text=True, check=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cell(counts: list[int]) -> str:
    p, r, f = prf(*counts)
    return f"{p:.2f} / {r:.2f} / {f:.2f}"


def main() -> int:
    print("| set | annotator | Recommend P / R / F1 | Accept P / R / F1 | Reject P / R / F1 |")
    print("|---|---|---|---|---|")
    pooled = {k: [0, 0, 0] for k in ("Recommend", "Accept", "Reject")}
    for name, commit in FIRST_MEASUREMENTS:
        result = measure(name, commit)
        counts = result["counts"]
        for k in pooled:
            pooled[k] = [a + b for a, b in zip(pooled[k], counts[k])]
        print(f"| {name} | {result['version']} ({commit}) | {cell(counts['Recommend'])} | {cell(counts['Accept'])} "
              f"| {cell(counts['Reject'])} |")
    print(f"| all {len(FIRST_MEASUREMENTS)} pooled | | {cell(pooled['Recommend'])} | {cell(pooled['Accept'])} | {cell(pooled['Reject'])} |")
    print()
    print("Pooled counts (tp / fp / fn): " + ", ".join(f"{k} {v[0]} / {v[1]} / {v[2]}" for k, v in pooled.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
