"""Work done in the background: simulated evaluation runs and the scoring of finished dialogues.

- `evaluation`: simulated runs with chosen systems and simulators (Evaluate tab, `crs-arena simulate`)
- `scorer`: scores finished dialogues off the request path
- `cli`: the `crs-arena simulate` command line
"""
