"""The leaderboard: one row per system from what counts (see `arena.counting`).

- `table`: the board itself (satisfaction, battle results, ratings, automatic scores)
- `battle_ratings`: Elo and Bradley-Terry ratings of systems from battles, with bootstrap intervals
  (`evaluators.bootstrap`)
- `style_control`: Bradley-Terry with reply style as covariates
- `categories`: boards of one slice of the data (dataset, dialogue length)
- `snapshot`: the data a public board is computed from, live or published at intervals
- `study_results`: a study's participants, quota fill, payment sheet, board and export
"""
