"""Audio device latency through a real PortAudio -> PulseAudio path (a private null sink).

For PortAudio's ``latency="low"`` (edgevox's default) and ``"high"`` (PortAudio's own
default), in one run, it measures with the real sounddevice adapters:

* loopback: ``write()`` of a tone -> first loud block read back from the sink's monitor
  (output plus input latency: what the robot adds before its voice is heard);
* stop: ``clear()`` while a tone plays -> the monitor goes quiet (how fast barge-in and
  the safety stop silence the speaker, device buffers included).

Needs PulseAudio (``bash scripts/setup.sh``); touches no real sound card.
    python scripts/bench_audio_device.py [--trials 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

RATE = 16000
BLOCK_MS = 10


def loud(block: np.ndarray) -> bool:
    return float(np.sqrt(np.mean(block**2))) > 0.05


def read_until(mic, predicate, timeout_s: float) -> float | None:
    """perf_counter time of the first block read that satisfies ``predicate``."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        block = mic.read(0.5)
        if block is not None and predicate(block):
            return time.perf_counter()
    return None


def trial(latency: str) -> tuple[float, float]:
    from edgevox.engines.audio_sounddevice import SoundDeviceIn, SoundDeviceOut

    mic = SoundDeviceIn(device="pulse", device_rate_hz=RATE, block_ms=BLOCK_MS, latency=latency)
    spk = SoundDeviceOut(device="pulse", sample_rate_hz=RATE, device_rate_hz=RATE, block_ms=BLOCK_MS, latency=latency)
    mic.start()
    spk.start()
    try:
        read_until(mic, lambda b: False, 0.3)  # let both streams settle; drop startup blocks
        tone = (0.5 * np.sin(2 * np.pi * 440 * np.arange(2 * RATE) / RATE)).astype(np.float32)
        written = time.perf_counter()
        spk.write(tone)
        heard = read_until(mic, loud, 3.0)
        if heard is None:
            raise RuntimeError("the tone written to the null sink never reached its monitor")
        time.sleep(0.3)  # let the tone play a while before cutting it
        cleared = time.perf_counter()
        spk.clear()
        quiet = read_until(mic, lambda b: not loud(b), 3.0)
        if quiet is None:
            raise RuntimeError("the monitor did not go quiet after clear()")
        return (heard - written) * 1000, (quiet - cleared) * 1000
    finally:
        mic.stop()
        spk.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    from edgevox.testing.pulse import private_pulseaudio, pulseaudio_installed, reinitialize_portaudio

    if not pulseaudio_installed():
        print("PulseAudio is not installed: run bash scripts/setup.sh")
        return 2
    results: dict[str, list[tuple[float, float]]] = {}
    with private_pulseaudio(rate_hz=RATE):
        reinitialize_portaudio()
        trial("high")  # warm-up, not counted: the sink's first stream starts slowly
        for _ in range(args.trials):  # interleaved, so machine noise hits both settings alike
            for latency in ("low", "high"):
                results.setdefault(latency, []).append(trial(latency))
    reinitialize_portaudio()
    print(f"PortAudio -> PulseAudio null sink, {RATE} Hz, {BLOCK_MS} ms blocks, {args.trials} trials each")
    print(f"{'latency':8} {'loopback p50 ms':>16} {'max':>6} {'stop p50 ms':>12} {'max':>6}")
    for latency, rows in results.items():
        loop = [r[0] for r in rows]
        stop = [r[1] for r in rows]
        print(
            f"{latency:8} {statistics.median(loop):16.0f} {max(loop):6.0f} "
            f"{statistics.median(stop):12.0f} {max(stop):6.0f}   loopback each: {' '.join(f'{x:.0f}' for x in loop)}"
        )
    low = statistics.median(r[1] for r in results["low"])
    high = statistics.median(r[1] for r in results["high"])
    print(f"stop time high/low: {high / max(low, 1e-6):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
