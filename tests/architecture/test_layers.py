"""The layering contracts of pyproject.toml `[tool.importlinter]`, checked by import-linter itself, so
that the README's test command covers them: webapp above crs, simulators and evaluators, all three above
the arena core; simulators never import evaluators; the app's rules never import the pages; run-time code
never imports the act model's training code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    # the one beside this interpreter first (a virtual environment), else the one on PATH
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    command = command or shutil.which("lint-imports")
    assert command, "import-linter is not installed (requirements-dev.txt)"
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([command, "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def test_every_layering_contract_is_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "BROKEN" not in result.stdout and "4 kept, 0 broken" in result.stdout
