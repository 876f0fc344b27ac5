"""Config -> objects for the ``wake`` section: the detector and the gate's settings."""

from __future__ import annotations

from edgevox.config.build_engines import LoadedEngines
from edgevox.config.schema import AppConfig
from edgevox.voice.wake import Wake, WakeSettings, load_cue


def make_wake(app: AppConfig, engines: LoadedEngines) -> Wake:
    """The wake word stage of ``app.wake`` (a model is set): the detector listening at the
    pipeline's rate (the VAD's), the cue at the output's rate."""
    from edgevox.engines.wake_micro import MicroWakeWordDetector

    cfg = app.wake
    if cfg.model is None:
        raise ValueError("make_wake: wake.model is null (no wake word); check it before calling")
    detector = MicroWakeWordDetector(
        cfg.model, threshold=cfg.threshold, sliding_window=cfg.sliding_window, sample_rate_hz=engines.vad.sample_rate_hz
    )
    settings = WakeSettings(
        window_s=cfg.window_s,
        pre_roll_ms=cfg.pre_roll_ms,
        stop_check=cfg.stop_check,
        cue=load_cue(cfg.cue, engines.audio_out.sample_rate_hz),
    )
    return Wake(detector, settings)
