"""The leaderboard: one row per system from what counts (see `arena.crowd.counting`).

- `table`: the board itself (satisfaction, battle results, ratings, automatic scores)
- `bt_model`: the one Bradley-Terry model (FastChat's logistic regression, ties half a win, virtual ties
  as its one regularisation) and its vectorised bootstrap, for the plain and style-controlled ratings
- `battle_ratings`: Elo and Bradley-Terry ratings of systems from battles, with bootstrap intervals
  (`evaluators.bootstrap`)
- `style_control`: Bradley-Terry with reply style as covariates
- `board_data`, `board_select`, `ranking`: a board's compact rows, their selection from the store's rows
  (`arena.store.board_rows`) by `arena.crowd.counting`'s rules, and the board ranked from them
- `categories`: boards of one slice of the data (dataset, dialogue length)
- `snapshot`: the background job that computes every board and the result pages serve
- `study_results`: a study's participants, quota fill, payment sheet, board and export
"""
