"""Find (and with --fix, put right) catalog entries whose title, year, people or plot conflict.

    python scripts/check_catalogs.py          # list the conflicts in assets/catalogs
    python scripts/check_catalogs.py --fix    # rewrite the id2info.json files and the report

The checks and fixes are `arena.catalog_conflicts`; the report of what changed and why is
assets/catalogs/CLEANING.md. Exit status 1 when conflicts remain (without --fix).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.catalog import CATALOG_DIR, DATASETS, read_catalog  # noqa: E402
from arena.catalog_conflicts import cleaned, conflicts  # noqa: E402

REPORT = CATALOG_DIR / "CLEANING.md"


def read() -> dict[str, dict]:
    return {d: json.loads((CATALOG_DIR / d / "id2info.json").read_text(encoding="utf-8")) for d in DATASETS}


def write_report(found) -> None:
    counts = Counter((c.dataset, c.check) for c in found)
    lines = ["# Catalog cleaning", "",
             "Entries of the iEvaLM catalogs whose title, year, people or plot conflicted, found and fixed by",
             "`python scripts/check_catalogs.py --fix` (checks: `arena/catalog_conflicts.py`). An entry whose",
             "record is not its own (a person as a title, a record borrowed from another entry, a year after its",
             "record) is dropped, so nothing is recommended or stated from it; the other item ids are unchanged.", "",
             "| dataset | check | entries |", "|---|---|---:|"]
    lines += [f"| {d} | {c} | {n} |" for (d, c), n in sorted(counts.items())]
    lines += ["", "| dataset | id | entry | what conflicted | fix |", "|---|---|---|---|---|"]
    for c in sorted(found, key=lambda c: (c.dataset, c.check, c.name)):
        lines.append(f"| {c.dataset} | {c.item_id} | {c.name} | {c.detail} | {c.fix} |")
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")


def reembed(old, new) -> None:
    """The shipped item embeddings for the fixed catalog: the old rows where an item reads the same,
    the changed items encoded anew (a few, not the whole catalog)."""
    import numpy as np

    from arena.retrieval import SHIPPED_DIR, ItemRetriever, encode

    old_path = SHIPPED_DIR / ItemRetriever(old, ROOT / "unused").cache_path.name
    new_path = SHIPPED_DIR / ItemRetriever(new, ROOT / "unused").cache_path.name
    stale = [p for p in SHIPPED_DIR.glob(f"{new.name}-*.npy") if p != new_path]
    if new_path.exists() and not stale:
        return
    if not old_path.exists():  # the shipped file was made from other texts: every item anew
        matrix = np.zeros((0, 384), np.float32)
        old = new.subset([])
    else:
        matrix = np.load(old_path).astype(np.float32)
    rows = {item.item_id: (item.describe(), matrix[i]) for i, item in enumerate(old.items)}
    changed = [i for i, item in enumerate(new.items) if rows.get(item.item_id, ("",))[0] != item.describe()]
    out = np.stack([rows[item.item_id][1] if i not in set(changed) else np.zeros(matrix.shape[1], np.float32)
                    for i, item in enumerate(new.items)])
    if changed:
        retriever = ItemRetriever(new, None)
        out[changed] = encode([new.items[i].describe() for i in changed], retriever.model, threads=1)
    np.save(new_path, out.astype("float16"))
    for path in stale:
        path.unlink()
    print(f"{new.name}: {len(changed)} items embedded anew -> {new_path.name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fix", action="store_true", help="rewrite the catalogs and assets/catalogs/CLEANING.md")
    args = parser.parse_args()
    catalogs = read()
    if not args.fix:
        found = conflicts(catalogs)
        for c in found:
            print(f"{c.dataset}\t{c.item_id}\t{c.check}\t{c.name}\t{c.detail}")
        print(f"{len(found)} conflicts", file=sys.stderr)
        return 1 if found else 0
    fixed, found = cleaned(catalogs)
    before = {d: read_catalog(CATALOG_DIR / d, d) for d in DATASETS}
    for dataset, records in fixed.items():
        path = CATALOG_DIR / dataset / "id2info.json"
        path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    write_report(found)
    for dataset in DATASETS:
        reembed(before[dataset], read_catalog(CATALOG_DIR / dataset, dataset))
    left = conflicts(fixed)
    print(f"fixed {len(found)} entries; {len(left)} conflicts left; report: {REPORT.relative_to(ROOT)}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
