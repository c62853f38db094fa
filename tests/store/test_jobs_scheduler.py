"""The process's one scheduler (`arena.store.jobs_scheduler`): steps, their waits, wake, cancel."""

import threading
import time

from arena.store.jobs_scheduler import Periodic


def _until(condition, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_steps_back_to_back_all_run_and_the_work_ends_when_a_step_says_so():
    runs = []

    def step():
        runs.append(time.monotonic())
        return None if len(runs) == 200 else 0.0  # each step schedules the next at once

    job = Periodic("back-to-back", step).start()
    assert _until(lambda: not job.active)
    time.sleep(0.2)
    assert len(runs) == 200  # none refused by the scheduler, none after the last


def test_wake_brings_a_long_wait_forward_and_cancel_waits_for_the_step_in_progress():
    runs, inside, release = [], threading.Event(), threading.Event()

    def step():
        runs.append(time.monotonic())
        if len(runs) == 2:
            inside.set()
            assert release.wait(20)
        return 3600.0

    job = Periodic("woken", step).start()
    assert _until(lambda: len(runs) == 1)
    job.wake()  # the next run would be in an hour
    assert inside.wait(20)
    cancelled = threading.Thread(target=job.cancel)
    cancelled.start()
    cancelled.join(0.3)
    assert cancelled.is_alive()  # it waits for the step in progress ...
    release.set()
    cancelled.join(20)
    assert not cancelled.is_alive() and not job.active  # ... then returns; nothing runs after it
    job.wake()
    time.sleep(0.2)
    assert len(runs) == 2


def test_a_step_that_raises_runs_again_and_a_blocked_job_delays_no_other():
    failures, other, blocked = [], [], threading.Event()

    def failing():
        failures.append(1)
        raise RuntimeError("a bug in the step")

    def blocking():
        blocked.wait(20)
        return None

    stuck = Periodic("blocking", blocking).start()
    flaky = Periodic("flaky", failing, retry_s=0.05).start()
    ticking = Periodic("ticking", lambda: other.append(1) or 0.01).start()
    try:
        assert _until(lambda: len(failures) >= 3 and len(other) >= 20)
    finally:
        blocked.set()
        for job in (stuck, flaky, ticking):
            job.cancel()
