"""A replica that pushes, writes more, and waits to be killed (`kill -9` between two pushes).

    python -m tests.space.mirror_worker DB HUB_URL PUSHED_COUNT UNPUSHED_COUNT
"""

from __future__ import annotations

import sys
import time

from arena.corpus.hub_mirror import HubMirror
from arena.store import Store
from tests.space.mirror_support import SALT, person_dialogue

REPO = "researchers/arena-corpus"


def main(db: str, hub_url: str, pushed: int, unpushed: int) -> None:
    mirror = HubMirror(Store(db), REPO, salt=SALT, endpoint=hub_url, replica="worker", every_s=3600)
    mirror.prepare()
    for i in range(pushed):
        mirror.store.save_dialogue(person_dialogue(f"pushed-{i}", f"raw-person-{i:04d}"))
    mirror.push()
    print("pushed", flush=True)
    for i in range(unpushed):
        mirror.store.save_dialogue(person_dialogue(f"unpushed-{i}", f"raw-person-{i:04d}"))
    print("written", flush=True)
    time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
