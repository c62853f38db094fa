"""CRS Arena: chat with conversational recommender systems, rate them, compare them.

`python app.py [options]` is the same as `crs-arena serve [options]`; the app
itself is built in `webapp/serve.py`: the public pages at `/` and the researcher
pages at `/admin` of one server (`webapp/one_port.py`), as a Hugging Face Space
runs it. `python app.py --admin` serves the researcher app alone on its own port.
Run as a program, it first starts again on the C allocator
(`webapp.memory_allocator`), before the app's imports.
"""

import sys

if __name__ == "__main__":
    from webapp.memory_allocator import restart_on_system_allocator

    restart_on_system_allocator()

from webapp.serve import build_admin_demo, build_demo, main, parse_args  # noqa: E402

__all__ = ["build_admin_demo", "build_demo", "main", "parse_args"]

if __name__ == "__main__":
    sys.exit(main())
