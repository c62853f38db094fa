"""Each page's builder makes matplotlib ready (its backend chosen, pyplot imported whole) before the server
takes an event: otherwise pyplot's first import happens in one event's thread while Gradio's per-event
backend guard in another finds the half-made module and fails (a page reloaded on the Leaderboard tab lost
its chat box in a browser test)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# run in a fresh interpreter: this one may have chosen a backend already
SCRIPT = textwrap.dedent("""
    import json, sys, tempfile, threading
    from pathlib import Path
    sys.path.insert(0, "tests/battle")
    import matplotlib
    from battle_support import FakeCatalogCRS, make_services
    from webapp.serve import build_admin_demo, build_demo
    from webapp.ui.study_page import build_study_demo
    from gradio.utils import MatplotlibBackendMananger

    builder = {"public": build_demo, "admin": build_admin_demo, "study": build_study_demo}[sys.argv[1]]
    before = matplotlib.get_backend(auto_select=False)
    services = make_services(Path(tempfile.mkdtemp()), [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")])
    builder(services)
    after = matplotlib.get_backend(auto_select=False)
    errors = []
    def event():  # what Gradio does around every event
        try:
            with MatplotlibBackendMananger():
                pass
        except Exception as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=event) for _ in range(16)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(json.dumps({"before": before, "after": after, "pyplot": "matplotlib.pyplot" in sys.modules,
                      "errors": errors}))
""")


@pytest.mark.parametrize("page", ["public", "admin", "study"])
def test_a_built_page_has_chosen_the_plot_backend_so_first_events_do_not_race(page):
    env = {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin:/usr/local/bin",
           "MPLBACKEND": ""}
    done = subprocess.run([sys.executable, "-c", SCRIPT, page], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] is None  # nothing chose it before the builder ran
    assert seen["after"] is not None and seen["after"].lower() == "agg"
    assert seen["pyplot"]  # whole, imported here, not first inside some event's thread
    assert seen["errors"] == []
