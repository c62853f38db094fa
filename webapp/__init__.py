"""The app layer: the Gradio tabs, the services they share, battles, ratings, the leaderboard,
simulated evaluation runs, background scoring and the `crs-arena` command line.

It sits on top of the core (`arena`) and the feature packages (`crs`, `simulators`,
`evaluators`); nothing below imports it.
"""
