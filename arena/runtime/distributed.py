"""Fan work out over Ray: one task per item, results as they finish, bounded in flight.

Used by simulated runs (`webapp.runs.evaluation`) and bulk scoring
(`evaluators.bulk_scoring`) when they run with `--engine ray`; threads stay the
default engine and need no Ray. A task whose worker process dies is retried
by Ray (`max_retries`); a task that still fails is reported to the caller with
its error rather than dropped, so every item gets exactly one outcome. Tasks
must write their results idempotently (keyed by dialogue id), because a
retried task may run again after its first attempt already stored something.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterable, Iterator, Optional

from arena.runtime.config import worker_environment
from arena.runtime.imports import heavy_imports

ENGINES = ("threads", "ray")
MAX_RETRIES = 2


def connect(address: Optional[str] = None, *, num_cpus: Optional[int] = None) -> None:
    """Join the Ray cluster at `address` (e.g. ray://head:10001 or auto), or start a local one."""
    with heavy_imports():
        import ray

    if ray.is_initialized():
        return
    # Workers import this project's modules (and, in tests, their helpers) from the same paths.
    paths = [p for p in sys.path if p and os.path.isdir(p) and not p.startswith(sys.prefix)]
    env = worker_environment(paths)
    if address:
        ray.init(address=address, runtime_env={"env_vars": env}, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": env})


def map_unordered(
    fn: Callable[..., Any],
    items: Iterable[tuple],
    *,
    max_in_flight: int = 8,
    max_retries: int = MAX_RETRIES,
    task_cpus: float = 1.0,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[tuple, Any, Optional[BaseException]]]:
    """Run `fn(*item)` as a Ray task per item; yield (item, result, None) or (item, None, error) as each ends.

    At most `max_in_flight` tasks are submitted at once; once `stop()` is true
    no further item is submitted (tasks already submitted run to their end).
    """
    with heavy_imports():
        import ray

    remote = ray.remote(num_cpus=task_cpus, max_retries=max_retries)(fn)
    queue = list(items)
    queue.reverse()
    running: dict[Any, tuple] = {}
    while queue or running:
        while queue and len(running) < max_in_flight and not stop():
            item = queue.pop()
            running[remote.remote(*item)] = item
        if stop():
            queue.clear()
        if not running:
            break
        done, _ = ray.wait(list(running), num_returns=1)
        for ref in done:
            item = running.pop(ref)
            try:
                yield item, ray.get(ref), None
            except ray.exceptions.RayError as exc:
                yield item, None, exc
