"""`python -m arena.corpus ...`: see arena/corpus/cli.py."""

import sys

from arena.corpus.cli import main

if __name__ == "__main__":
    sys.exit(main())
