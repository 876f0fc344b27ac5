"""EventBus: delivery modes, ordering, overflow policies, control priority, failures, close."""

from __future__ import annotations

import threading

import pytest

from edgevox.errors import BusClosedError
from edgevox.runtime.bus import EventBus
from edgevox.runtime.events import ErrorEvent, Event, InterruptEvent, StopEvent
from edgevox.runtime.mailbox import Mailbox

from .conftest import Ping, Pong


def test_sync_handler_runs_on_the_publishers_thread_with_seq_and_timestamp_stamped(bus):
    seen = []
    bus.subscribe(Ping, lambda e: seen.append((e, threading.current_thread())))
    a = bus.publish(Ping(n=1))
    b = bus.publish(Ping(n=2))
    assert [e.n for e, _ in seen] == [1, 2]
    assert all(t is threading.current_thread() for _, t in seen)
    assert 0 < a.seq < b.seq and a.timestamp > 0


def test_subscribe_by_class_matches_subclasses_and_by_pattern_with_wildcards(bus):
    by_class, by_pattern, by_star = [], [], []
    bus.subscribe(Event, by_class.append)
    bus.subscribe("test.p?ng", by_pattern.append)
    bus.subscribe("*", by_star.append)
    bus.publish(Ping())
    bus.publish(Pong())
    bus.publish(InterruptEvent())
    assert len(by_class) == 3 and len(by_star) == 3
    assert [e.kind for e in by_pattern] == ["test.ping", "test.pong"]


def test_closing_a_subscription_or_leaving_its_with_block_unsubscribes(bus):
    seen = []
    with bus.subscribe(Ping, seen.append):
        bus.publish(Ping(n=1))
    sub = bus.subscribe(Ping, seen.append)
    sub.close()
    bus.publish(Ping(n=2))
    assert [e.n for e in seen] == [1]


def test_a_raising_handler_is_counted_and_reported_and_does_not_stop_other_handlers(bus):
    errors, after = [], []

    def boom(event):
        raise RuntimeError("handler broke")

    bad = bus.subscribe(Ping, boom, name="bad")
    bus.subscribe(Ping, after.append)
    bus.subscribe(ErrorEvent, errors.append)
    bus.publish(Ping())  # must not raise
    assert len(after) == 1
    assert bad.errors == 1 and bus.handler_errors == 1
    assert errors[0].where == "bad" and "handler broke" in errors[0].traceback and errors[0].event_kind == "test.ping"


def test_a_raising_error_handler_does_not_loop(bus):
    def boom(event):
        raise RuntimeError("error handler broke")

    bus.subscribe(ErrorEvent, boom)
    bus.subscribe(Ping, lambda e: 1 / 0)
    bus.publish(Ping())
    assert bus.handler_errors == 2


def test_observers_see_every_event_before_subscribers(bus):
    order = []
    bus.add_observer(lambda e: order.append(("obs", e.kind)))
    bus.subscribe(Ping, lambda e: order.append(("sub", e.kind)))
    bus.publish(Ping())
    bus.publish(Pong())
    assert order == [("obs", "test.ping"), ("sub", "test.ping"), ("obs", "test.pong")]


def test_queued_subscriber_runs_on_its_own_named_thread_in_fifo_order(bus):
    got, threads, done = [], set(), threading.Event()

    def handler(e):
        got.append(e.n)
        threads.add(threading.current_thread().name)
        if e.n == 99:
            done.set()

    bus.subscribe(Ping, handler, queued=True, max_queue=1000, name="fifo")
    for n in range(100):
        bus.publish(Ping(n=n))
    assert done.wait(5)
    assert got == list(range(100))
    assert threads == {"edgevox-sub-fifo"}


def test_fifo_per_publisher_with_concurrent_publishers(bus):
    mb = bus.mailbox(Ping, max_queue=10_000)
    start = threading.Barrier(4)

    def publish(src):
        start.wait()
        for n in range(500):
            bus.publish(Ping(source=src, n=n))

    threads = [threading.Thread(target=publish, args=(f"p{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    per_source: dict[str, list[int]] = {}
    while (e := mb.get(timeout=0)) is not None:
        per_source.setdefault(e.source, []).append(e.n)
    assert per_source == {f"p{i}": list(range(500)) for i in range(4)}


def test_control_events_overtake_queued_data_events(bus):
    mb = bus.mailbox("*", max_queue=100)
    for n in range(5):
        bus.publish(Ping(n=n))
    bus.publish(StopEvent(reason="safety"))
    bus.publish(InterruptEvent())
    kinds = [mb.get(timeout=0).kind for _ in range(7)]
    assert kinds[:2] == ["control.stop", "control.interrupt"]
    assert kinds[2:] == ["test.ping"] * 5


def test_control_event_overtakes_data_for_a_busy_queued_subscriber(bus):
    release, first_started = threading.Event(), threading.Event()
    order, cond = [], threading.Condition()

    def slow(e):
        if isinstance(e, Ping) and e.n == 0:
            first_started.set()
            release.wait(5)
        with cond:
            order.append(e.n if isinstance(e, Ping) else e.kind)
            cond.notify_all()

    bus.subscribe("*", slow, queued=True, max_queue=100)
    bus.publish(Ping(n=0))
    assert first_started.wait(5)
    for n in range(1, 4):
        bus.publish(Ping(n=n))
    bus.publish(InterruptEvent())
    release.set()
    with cond:
        assert cond.wait_for(lambda: len(order) == 5, 5)
    assert order == [0, "control.interrupt", 1, 2, 3]


@pytest.mark.parametrize("policy", ["drop_oldest", "drop_new"])
def test_overflow_policy_counts_every_drop_exactly_under_concurrent_publishers(bus, policy):
    mb = bus.mailbox(Ping, max_queue=50, overflow=policy)
    start = threading.Barrier(4)

    def publish(src):
        start.wait()
        for n in range(1000):
            bus.publish(Ping(source=src, n=n))

    threads = [threading.Thread(target=publish, args=(f"p{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kept = []
    while (e := mb.get(timeout=0)) is not None:
        kept.append(e)
    assert len(kept) == 50
    assert mb.dropped == 4000 - 50
    if policy == "drop_oldest":  # the survivors are each publisher's newest ones
        for src in {e.source for e in kept}:
            ns = [e.n for e in kept if e.source == src]
            assert ns == sorted(ns) and ns[-1] == 999
    else:
        for src in {e.source for e in kept}:
            ns = [e.n for e in kept if e.source == src]
            assert ns == list(range(len(ns)))


def test_block_policy_waits_for_room_then_drops_after_its_timeout():
    mb = Mailbox(max_queue=1, overflow="block", block_timeout_s=0.05)
    assert mb.put(Ping(n=1))
    assert mb.put(Ping(n=2)) is False  # nobody reads: times out and drops
    assert mb.dropped == 1
    got = []
    mb2 = Mailbox(max_queue=1, overflow="block", block_timeout_s=5)
    mb2.put(Ping(n=1))
    reader = threading.Thread(target=lambda: got.append(mb2.get(timeout=5)))
    reader.start()
    assert mb2.put(Ping(n=2))  # unblocked by the reader
    reader.join(5)
    assert got[0].n == 1 and mb2.get(timeout=0).n == 2 and mb2.dropped == 0


def test_control_events_are_never_dropped_by_overflow():
    mb = Mailbox(max_queue=1, overflow="drop_new")
    mb.put(Ping())
    for _ in range(10):
        assert mb.put(InterruptEvent())
    assert len(mb) == 11 and mb.dropped == 0


def test_close_joins_queued_workers_and_later_use_raises():
    bus = EventBus("closing")
    done = threading.Event()
    bus.subscribe(Ping, lambda e: done.set(), queued=True, name="w")
    bus.publish(Ping())
    assert done.wait(5)
    assert bus.close(2.0) == []
    assert not [t for t in threading.enumerate() if t.name == "edgevox-sub-w"]
    with pytest.raises(BusClosedError):
        bus.publish(Ping())
    with pytest.raises(BusClosedError):
        bus.subscribe(Ping, print)


def test_close_reports_a_worker_that_does_not_finish():
    bus = EventBus("stuck")
    release, entered = threading.Event(), threading.Event()

    def stuck(e):
        entered.set()
        release.wait(10)

    bus.subscribe(Ping, stuck, queued=True, name="stuck")
    bus.publish(Ping())
    assert entered.wait(5)
    assert bus.close(0.05) == ["edgevox-sub-stuck"]
    release.set()


# --- handlers that raise anything, closing, and sizes that cannot work ---------------------


class Gate:
    """A handler that records events and blocks on chosen ones until released."""

    def __init__(self, block_on=()) -> None:
        self.block_on = set(block_on)
        self.seen: list[int] = []
        self.cond = threading.Condition()
        self.entered: dict[int, threading.Event] = {n: threading.Event() for n in self.block_on}
        self.release: dict[int, threading.Event] = {n: threading.Event() for n in self.block_on}

    def __call__(self, event) -> None:
        with self.cond:
            self.seen.append(event.n)
            self.cond.notify_all()
        if event.n in self.block_on:
            self.entered[event.n].set()
            self.release[event.n].wait(10)

    def wait_seen(self, count: int, timeout_s: float = 5.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.seen) >= count, timeout_s)


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), RuntimeError("boom")])
def test_anything_a_queued_handler_raises_is_counted_and_delivery_goes_on(bus, exc):
    errors, seen = [], Gate()
    bus.subscribe(ErrorEvent, errors.append)

    def handler(event):
        seen(event)
        if event.n == 0:
            raise exc

    sub = bus.subscribe(Ping, handler, queued=True, name="raiser")
    for n in range(5):
        bus.publish(Ping(n=n))
    assert seen.wait_seen(5)
    assert seen.seen == [0, 1, 2, 3, 4] and sub.errors == 1 and sub.delivered == 4
    assert sub.active and sub.thread.is_alive() and sub.failure is None
    assert errors and errors[0].where == "raiser" and type(exc).__name__ in errors[0].error


def test_a_sync_handlers_system_exit_is_counted_reported_and_reaches_the_publisher(bus):
    errors = []
    bus.subscribe(ErrorEvent, errors.append)
    sub = bus.subscribe(Ping, lambda e: (_ for _ in ()).throw(SystemExit(4)), name="exiter")
    with pytest.raises(SystemExit):
        bus.publish(Ping())
    assert sub.errors == 1 and "SystemExit" in errors[0].error


def test_a_queued_worker_that_ends_anyway_says_so_and_stops_taking_events(bus, monkeypatch):
    errors = []
    bus.subscribe(ErrorEvent, errors.append)

    def broken_loop(sub, mailbox):
        mailbox.get()  # take the first event, then die the way a bug would
        raise SystemExit("worker bug")

    monkeypatch.setattr(bus, "_serve", broken_loop)
    sub = bus.subscribe(Ping, print, queued=True, name="dies")
    bus.publish(Ping(n=0))
    sub.thread.join(5)
    assert not sub.active and isinstance(sub.failure, SystemExit) and sub.errors == 1
    assert errors and "worker ended" in errors[0].where
    bus.publish(Ping(n=1))  # no longer subscribed: nothing piles up
    assert len(sub.mailbox) == 0 and sub not in bus.subscriptions()


def test_close_counts_every_event_it_discards_including_a_batch_in_hand(bus):
    gate = Gate(block_on=(0, 1))
    sub = bus.subscribe(Ping, gate, queued=True, max_queue=1000, name="slow")
    bus.publish(Ping(n=0))
    assert gate.entered[0].wait(5)
    for n in range(1, 301):
        bus.publish(Ping(n=n))  # queued while the handler is busy
    gate.release[0].set()
    assert gate.entered[1].wait(5)  # the worker took 1..256 as one batch and is handling 1
    assert sub.close(0.0) is False  # closed while the handler runs: it finishes that event only
    assert not sub.active
    gate.release[1].set()
    assert sub.close(5.0) is True
    assert gate.seen == [0, 1] and sub.delivered == 2
    assert sub.discarded == 299  # 255 left in the batch in hand + 44 queued: none lost silently


def test_close_from_many_threads_never_reports_a_running_worker_as_finished(bus):
    gate = Gate(block_on=(0,))
    sub = bus.subscribe(Ping, gate, queued=True, name="busy")
    bus.publish(Ping(n=0))
    assert gate.entered[0].wait(5)
    assert sub.close(0.05) is False
    assert sub.close(0.05) is False  # the second caller also waits and tells the truth
    gate.release[0].set()
    assert sub.close(5.0) is True


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_queue": 0}, r"max_queue = 0: must be a whole number in \[1, "),
        ({"max_queue": True}, "max_queue = True"),
        ({"max_queue": 1.5}, "max_queue = 1.5"),
        ({"max_queue": 10**12}, "max_queue = 1000000000000"),
        ({"block_timeout_s": float("nan")}, "block_timeout_s = nan"),
        ({"block_timeout_s": float("inf")}, "block_timeout_s = inf"),
        ({"block_timeout_s": -1}, "block_timeout_s = -1"),
    ],
)
def test_mailbox_sizes_and_timeouts_that_cannot_work_are_rejected_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Mailbox(**kwargs)


def test_mailbox_get_rejects_nan_and_clamps_an_infinite_wait():
    mb = Mailbox()
    with pytest.raises(ValueError, match="get: timeout = nan"):
        mb.get(float("nan"))
    mb.put(Ping(n=7))
    assert mb.get(float("inf")).n == 7 and mb.get(-1.0) is None
