"""Blackboard: versions, CAS, atomic update, snapshot, watchers and request/reply."""

from __future__ import annotations

import math
import threading
from concurrent.futures import CancelledError

import pytest

from edgevox.errors import LifecycleError
from edgevox.runtime.blackboard import Blackboard, Request
from edgevox.runtime.limits import MAX_DURATION_S


@pytest.fixture
def bb():
    board = Blackboard(name="t")
    yield board
    assert board.close() == []


def test_get_set_delete_and_versions_strictly_increase_without_reuse(bb):
    assert bb.get("a") is None and bb.get("a", 5) == 5 and bb.version("a") == 0
    v1 = bb.set("a", 1)
    v2 = bb.set("a", 2)
    assert v2 > v1 and bb.get_versioned("a") == (2, v2)
    assert bb.delete("a") and not bb.delete("a")
    assert bb.version("a") == 0 and "a" not in bb
    assert bb.set("a", 3) > v2  # a re-created key never reuses an old version (no ABA)


def test_compare_and_set_only_writes_at_the_expected_version(bb):
    assert bb.compare_and_set("k", "first", expected_version=0)  # 0 = must be absent
    assert not bb.compare_and_set("k", "again", expected_version=0)
    v = bb.version("k")
    assert bb.compare_and_set("k", "second", expected_version=v)
    assert not bb.compare_and_set("k", "stale", expected_version=v)
    assert bb.get("k") == "second"


def test_compare_and_set_counter_is_exact_under_contention(bb):
    bb.set("n", 0)

    def bump():
        for _ in range(300):
            while True:
                value, version = bb.get_versioned("n")
                if bb.compare_and_set("n", value + 1, expected_version=version):
                    break

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bb.get("n") == 1200


def test_modify_is_an_atomic_read_modify_write(bb):
    threads = [
        threading.Thread(target=lambda: [bb.modify("n", lambda v: v + 1, 0) for _ in range(500)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bb.get("n") == 2000


def test_update_is_atomic_for_readers_and_snapshots(bb):
    bb.update({"x": 0, "y": 0})
    stop = threading.Event()
    torn = []

    def writer():
        for i in range(1, 2000):
            bb.update({"x": i, "y": i})
        stop.set()

    def reader():
        while not stop.is_set():
            snap = bb.snapshot()
            if snap["x"] != snap["y"]:
                torn.append(snap)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torn == []
    bb.update({"z": 1}, delete=["x"])
    assert bb.snapshot() == {"y": 1999, "z": 1}


def test_snapshot_is_a_copy(bb):
    bb.set("a", 1)
    snap = bb.snapshot()
    snap["a"] = 2
    assert bb.get("a") == 1


def test_watchers_on_key_prefix_and_star_get_key_old_new(bb):
    key, prefix, star = [], [], []
    bb.watch("robot.pose", lambda *a: key.append(a))
    bb.watch("robot.*", lambda *a: prefix.append(a))
    bb.watch("*", lambda *a: star.append(a))
    bb.set("robot.pose", 1)
    bb.set("robot.pose", 2)
    bb.set("robot.battery", 90)
    bb.set("other", "x")
    bb.delete("robot.pose")
    assert key == [("robot.pose", None, 1), ("robot.pose", 1, 2), ("robot.pose", 2, None)]
    assert [a[0] for a in prefix] == ["robot.pose", "robot.pose", "robot.battery", "robot.pose"]
    assert [a[0] for a in star] == ["robot.pose", "robot.pose", "robot.battery", "other", "robot.pose"]


def test_watchers_run_after_the_lock_is_released(bb):
    seen = []
    # a watcher that reads and writes the board would deadlock if called under the lock
    bb.watch("a", lambda k, old, new: seen.append((bb.get("a"), bb.set("b", new))))
    bb.set("a", 1)
    assert seen and seen[0][0] == 1 and bb.get("b") == 1


def test_sync_watchers_see_commits_in_commit_order_under_concurrent_writers(bb):
    seen = []
    bb.watch("*", lambda k, old, new: seen.append(new))

    def write(base):
        for i in range(300):
            bb.set("k", (base, i))

    threads = [threading.Thread(target=write, args=(b,)) for b in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 1200
    # each commit's "old" is the previous commit's "new": order == commit order
    olds = []
    bb2 = Blackboard(name="t2")
    bb2.watch("k", lambda k, old, new: olds.append((old, new)))
    ts = [threading.Thread(target=lambda b=b: [bb2.set("k", (b, i)) for i in range(300)]) for b in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(olds[i][1] == olds[i + 1][0] for i in range(len(olds) - 1))
    for b in range(4):
        assert [n[1] for n in seen if n[0] == b] == list(range(300))
    bb2.close()


def test_a_write_inside_a_watcher_is_delivered_after_the_current_one(bb):
    order = []

    def first(k, old, new):
        order.append(("first", k))
        if k == "a":
            bb.set("b", 1)

    bb.watch("*", first)
    bb.watch("*", lambda k, old, new: order.append(("second", k)))
    bb.set("a", 1)
    assert order == [("first", "a"), ("second", "a"), ("first", "b"), ("second", "b")]


def test_a_raising_watcher_is_counted_reported_and_does_not_stop_others():
    errors = []
    board = Blackboard(name="e", on_error=lambda where, exc: errors.append((where, exc)))
    after = []
    board.watch("a", lambda *a: 1 / 0)
    board.watch("a", lambda *a: after.append(a))
    board.set("a", 1)
    assert after and board.watcher_errors == 1 and isinstance(errors[0][1], ZeroDivisionError)
    board.close()


def test_closing_a_watch_stops_notifications(bb):
    seen = []
    with bb.watch("a", lambda *a: seen.append(a)):
        bb.set("a", 1)
    bb.set("a", 2)
    assert len(seen) == 1 and bb.watcher_count() == 0


def test_async_watchers_run_on_a_private_thread_in_commit_order_and_set_returns_at_once():
    board = Blackboard(async_watchers=True, name="async")
    gate, seen, done = threading.Event(), [], threading.Event()

    def watcher(k, old, new):
        gate.wait(5)
        seen.append((new, threading.current_thread().name))
        if new == 99:
            done.set()

    board.watch("k", watcher)
    for i in range(100):
        board.set("k", i)  # would block on the gate if watchers ran inline
    gate.set()
    assert done.wait(5)
    assert [n for n, _ in seen] == list(range(100))
    assert {name for _, name in seen} == {"edgevox-bb-async"}
    assert board.close() == []
    assert not [t for t in threading.enumerate() if t.name == "edgevox-bb-async"]


def test_close_delivers_pending_async_notifications_and_rejects_writes():
    board = Blackboard(async_watchers=True, name="async2")
    seen = []
    board.watch("k", lambda k, o, n: seen.append(n))
    for i in range(50):
        board.set("k", i)
    board.close()
    assert seen == list(range(50))
    with pytest.raises(LifecycleError):
        board.set("k", 1)


# -- request / reply ----------------------------------------------------------------------------


def test_post_request_resolves_with_the_reply_and_cleans_up(bb):
    def volunteer(key, old, new):
        if isinstance(new, Request):
            bb.reply_to(new, new.task * 2)

    bb.watch("plan", volunteer)
    future = bb.post_request("plan", 21, timeout=5)
    assert future.result(5) == 42
    assert bb.snapshot() == {} and bb.pending_requests() == 0
    assert bb.watcher_count() == 1  # only the volunteer is left


def test_concurrent_requests_on_one_key_get_unique_reply_keys_and_their_own_answers(bb):
    requests: list[Request] = []
    cond = threading.Condition()

    def collect(key, old, new):
        if isinstance(new, Request):
            with cond:
                requests.append(new)
                cond.notify_all()

    bb.watch("ask", collect)
    futures = []
    posters = [
        threading.Thread(target=lambda i=i: futures.append((i, bb.post_request("ask", i, timeout=5))))
        for i in range(20)
    ]
    for t in posters:
        t.start()
    for t in posters:
        t.join()
    with cond:
        assert cond.wait_for(lambda: len(requests) == 20, 5)
    assert len({r.reply_key for r in requests}) == 20
    for r in reversed(requests):  # answer out of order
        assert bb.reply_to(r, ("answer", r.task))
    for i, f in futures:
        assert f.result(5) == ("answer", i)
    assert bb.snapshot() == {} and bb.pending_requests() == 0 and bb.watcher_count() == 1


def test_request_timeout_raises_timeout_error_and_removes_keys_and_watcher(bb):
    future = bb.post_request("nobody", "task", timeout=0.05)
    assert "nobody" in bb and bb.watcher_count() == 1
    with pytest.raises(TimeoutError, match="no reply to request 'nobody'"):
        future.result(5)
    assert bb.snapshot() == {} and bb.watcher_count() == 0 and bb.pending_requests() == 0


def test_a_late_reply_is_dropped_and_counted_and_leaves_no_key(bb):
    captured = []
    bb.watch("q", lambda k, o, n: isinstance(n, Request) and captured.append(n))
    future = bb.post_request("q", 1, timeout=0.02)
    with pytest.raises(TimeoutError):
        future.result(5)
    assert bb.reply_to(captured[0], "too late") is False
    assert bb.late_replies == 1 and bb.snapshot() == {}


def test_only_the_first_of_two_replies_wins(bb):
    captured = []
    bb.watch("q", lambda k, o, n: isinstance(n, Request) and captured.append(n))
    future = bb.post_request("q", 1)
    assert bb.reply_to(captured[0], "first") is True
    assert bb.reply_to(captured[0], "second") is False
    assert future.result(1) == "first" and bb.late_replies == 1 and bb.snapshot() == {}


def test_cancelling_the_future_removes_keys_and_watcher(bb):
    future = bb.post_request("q", 1, timeout=30)
    assert future.cancel()
    with pytest.raises(CancelledError):
        future.result(0)
    assert bb.snapshot() == {} and bb.watcher_count() == 0 and bb.pending_requests() == 0


def test_timeouts_share_one_timer_thread_not_one_per_request(bb):
    before = {t.name for t in threading.enumerate()}
    futures = [bb.post_request(f"q{i}", i, timeout=30) for i in range(50)]
    new = {t.name for t in threading.enumerate()} - before
    assert new == {"edgevox-timer-t"}
    for f in futures:
        f.cancel()
    assert bb.snapshot() == {}


def test_close_cancels_pending_requests():
    board = Blackboard(name="c")
    future = board.post_request("q", 1, timeout=30)
    assert board.close() == []
    assert future.cancelled()


# --- inputs that once killed the timer thread, and watchers that raise anything ---------------


@pytest.mark.parametrize("timeout", [1e300, math.inf, math.nan, -1.0, MAX_DURATION_S + 1])
def test_post_request_rejects_a_timeout_it_cannot_honour_and_later_timeouts_still_fire(bb, timeout):
    with pytest.raises(ValueError, match=r"post_request: timeout = .*: must be a finite number of seconds in \[0, "):
        bb.post_request("huge", "task", timeout=timeout)
    assert bb.snapshot() == {} and bb.pending_requests() == 0 and bb.watcher_count() == 0  # nothing posted
    for _ in range(2):  # the timer thread serves every later timeout
        future = bb.post_request("small", "task", timeout=0.02)
        with pytest.raises(TimeoutError):
            future.result(5)
    assert bb.snapshot() == {} and bb.pending_requests() == 0


def test_a_long_but_valid_timeout_does_not_block_shorter_ones(bb):
    slow = bb.post_request("slow", 1, timeout=MAX_DURATION_S)
    fast = bb.post_request("fast", 2, timeout=0.02)
    with pytest.raises(TimeoutError):
        fast.result(5)
    assert not slow.done() and bb.keys() == ["slow"]
    slow.cancel()


def test_a_watcher_raising_system_exit_on_the_delivery_thread_is_counted_and_delivery_goes_on():
    errors = []
    board = Blackboard(name="async", async_watchers=True, on_error=lambda where, exc: errors.append(exc))
    seen, done = [], threading.Event()

    def watcher(key, old, new):
        if new == 1:
            raise SystemExit("watcher wants out")
        seen.append(new)
        done.set()

    board.watch("k", watcher)
    board.set("k", 1)
    board.set("k", 2)
    assert done.wait(5) and seen == [2]
    assert board.watcher_errors == 1 and isinstance(errors[0], SystemExit)
    assert board.close(2.0) == []


def test_a_sync_watchers_system_exit_is_counted_and_reaches_the_writer_whose_thread_it_is(bb):
    bb.watch("k", lambda *a: (_ for _ in ()).throw(SystemExit(2)))
    with pytest.raises(SystemExit):
        bb.set("k", 1)
    assert bb.watcher_errors == 1 and bb.get("k") == 1


def test_close_from_many_threads_each_waits_for_the_delivery_thread():
    entered, release = threading.Event(), threading.Event()
    board = Blackboard(name="slow", async_watchers=True)
    board.watch("k", lambda *a: (entered.set(), release.wait(10)))
    board.set("k", 1)
    assert entered.wait(5)
    assert board.close(0.05) == board.close(0.05) == ["edgevox-bb-slow"]  # the second close is no "clean" lie
    release.set()
    assert board.close(5.0) == []


def test_a_request_posted_if_absent_never_overwrites_and_ids_are_unguessable():
    from edgevox.errors import ArgumentError

    board = Blackboard(name="b")
    try:
        board.set("robot/pose", {"x": 1.0})
        with pytest.raises(ArgumentError, match="'robot/pose' already holds a value"):
            board.post_request("robot/pose", "replace me", timeout=1.0, if_absent=True)
        assert board.get("robot/pose") == {"x": 1.0} and board.pending_requests() == 0
        first = board.post_request("task/a", "one", timeout=5.0, if_absent=True)
        with pytest.raises(ArgumentError, match="already holds a value or a request"):
            board.post_request("task/a", "two", timeout=5.0, if_absent=True)
        ids = {board.get("task/a").id}
        for i in range(20):
            board.post_request(f"task/{i}", i, timeout=5.0)
            ids.add(board.get(f"task/{i}").id)
        # random, not a counter (one random hex id is all digits 1 time in ~1850: test them together)
        assert len(ids) == 21 and all(len(i) == 16 for i in ids) and not all(i.isdigit() for i in ids)
        first.cancel()
    finally:
        board.close()
