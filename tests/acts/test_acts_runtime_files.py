"""The annotators that run in the app read only run-time files and never load training or measuring code."""

import subprocess
import sys
from pathlib import Path

from evaluators.acts.artifacts import ACTS_ASSETS
from evaluators.acts.data import (
    ACT_SETS, ARENA_SETS, CRSARENA_PARTS, SECOND_ANNOTATION, TRAIN_SECOND_ANNOTATION,
)
from evaluators.acts.llm import DEFAULT_PROMPT
from evaluators.acts.offline import DEFAULT_ARTIFACT

ROOT = Path(__file__).resolve().parents[2]
TRAINING_MODULES = ("evaluators.acts.data", "evaluators.acts.training", "evaluators.acts.fine_tuning",
                    "evaluators.acts.redial_weak", "evaluators.acts.metric_calibration")


def test_annotators_do_not_import_training_code():
    probe = ("import sys, evaluators.acts.offline, evaluators.acts.llm; "
             f"print(sorted(m for m in {TRAINING_MODULES!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_run_time_files_are_in_assets_and_labelled_sets_are_not():
    assert DEFAULT_ARTIFACT.parent == ACTS_ASSETS and DEFAULT_ARTIFACT.exists()
    assert DEFAULT_PROMPT.parent == ACTS_ASSETS and DEFAULT_PROMPT.exists()
    labelled = [*ARENA_SETS, *CRSARENA_PARTS.values(), SECOND_ANNOTATION, TRAIN_SECOND_ANNOTATION]
    assert all(p.parent == ACT_SETS and p.exists() for p in labelled)
    assert not list(ACTS_ASSETS.glob("*.jsonl"))
    manifest = (ACT_SETS.parent / "MANIFEST.md").read_text(encoding="utf-8")
    assert all(f"`{p.name}`" in manifest for p in labelled)  # each set's origin, licence and reader
