"""The app layer: the Gradio pages and what they stand on, by feature.

- `services`: everything a session needs, built once per process (`Services`, typed)
- `sessions`: participant sessions without the page (Chat, Battle, Study; one shared turn step)
- `protection`: session identity, vote and label limits, logins, uploads, moderation
- `leaderboard`: ratings, style control, categories, snapshots and the board itself
- `runs`: simulated evaluation runs and the background scorer
- `ui`: the pages (each tab's `build(services)`), which only build and render
- `serve`, `one_port`, `warm_start`: starting the app; `cli`: the `crs-arena` command line

It sits on top of the core (`arena`) and the feature packages (`crs`, `simulators`,
`evaluators`); nothing below imports it.
"""
