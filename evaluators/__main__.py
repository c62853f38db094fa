"""`python -m evaluators`: see evaluators/cli.py."""

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from evaluators.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
