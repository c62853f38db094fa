"""Matplotlib made ready once, in the thread that builds the app, before the server takes its first event.

Gradio wraps every event in a guard that reads matplotlib's backend and sets it, calling
`pyplot.switch_backend` whenever `matplotlib.pyplot` is in `sys.modules`; and a `gr.Plot` imports pyplot
when it sends a figure. The first import of pyplot therefore happens inside some event's worker thread,
and an event in another thread that starts meanwhile finds the half-made module ("partially initialized
module 'matplotlib.pyplot' has no attribute 'switch_backend'") and fails: a page reloaded on the
Leaderboard tab lost its chat box this way in a browser test. Left to the first event, the import also
made the first page's load wait seconds. With "Agg" chosen and pyplot imported whole here (about 0.2 s at
start), no event ever makes the first import.
"""

from __future__ import annotations


def choose_plot_backend() -> None:
    """Choose "Agg" unless a backend is already chosen (by `MPLBACKEND` or a caller), and import pyplot
    whole; without matplotlib, nothing to do."""
    try:
        import matplotlib
    except ImportError:
        return
    if matplotlib.get_backend(auto_select=False) is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (imported for its side effect: whole before any event thread)
