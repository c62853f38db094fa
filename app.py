"""CRS Arena: chat with conversational recommender systems, rate them, compare them.

`python app.py [options]` is the same as `crs-arena serve [options]`; the app
itself is built in `webapp/serve.py`.
"""

from webapp.serve import build_demo, main, parse_args

__all__ = ["build_demo", "main", "parse_args"]

if __name__ == "__main__":
    main()
