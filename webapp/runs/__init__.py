"""Work done in the background: simulated evaluation runs and the scoring of finished dialogues.

- `evaluation`: simulated runs with chosen systems and simulators (Evaluate tab, `crs-arena simulate`)
- `scorer`: scores finished dialogues off the request path
- `workers`: how a Ray worker of a run builds its own run manager
- `cli`: the `crs-arena simulate` command line
"""
