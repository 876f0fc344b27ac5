"""The runtime benchmark runs end to end (small sizes; the figures are checked by hand)."""

from __future__ import annotations

from edgevox.cli.main import main
from edgevox.runtime.bench import control_latency, throughput


def test_throughput_delivers_every_event_and_reports_both_rates():
    result = throughput(n_events=5_000, repeats=1)
    assert result["dropped"] == 0
    assert result["bus_events_per_s"] > 0 and result["queue_events_per_s"] > 0
    assert result["ratio_vs_queue"] == result["bus_events_per_s"] / result["queue_events_per_s"]


def test_control_latency_measures_every_control_event_under_a_flood():
    result = control_latency(flood_events_per_s=5_000, duration_s=0.2, control_interval_s=0.005)
    assert result["control_events"] > 5 and 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert result["flood_actual_per_s"] > 1_000 and result["data_dropped"] == 0


def test_cli_bench_runtime_prints_the_figures(capsys):
    assert main(["bench", "runtime", "--events", "2000", "--repeats", "1", "--duration-s", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "events/s" in out and "ratio bus / queue.Queue" in out and "p99" in out
