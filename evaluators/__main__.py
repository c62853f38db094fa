"""`python -m evaluators`: see evaluators/cli.py."""

import sys

from arena.runtime.config import offline_model_environment

offline_model_environment()  # before the model libraries are imported

from evaluators.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
