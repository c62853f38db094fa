"""`python -m simulators ...`: an alias of `crs-arena simulate ...` (webapp/runs/cli.py).

A simulated run stores its dialogues and queues their scoring, which is the app
layer's work, so the command lives in `webapp`. This entry script only hands
the command line over to it; the `simulators` package itself never imports it.
"""

import runpy

if __name__ == "__main__":
    runpy.run_module("webapp.runs.cli", run_name="__main__", alter_sys=True)
