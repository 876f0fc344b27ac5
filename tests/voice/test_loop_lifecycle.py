"""VoiceLoop's lifecycle: a component_lifecycle, the runtime's one StopReport, EdgeVox's stop(timeout=)."""

from __future__ import annotations

import pytest

from edgevox.errors import AudioDeviceError, LifecycleError
from edgevox.runtime.lifecycle import StopReport
from edgevox.testing import FakeAudioIn
from edgevox.voice.events import TurnDone

from .test_loop import make_loop


class FlakyMic(FakeAudioIn):
    """Fails to open ``failures`` times, then opens."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def start(self) -> None:
        if self.failures:
            self.failures -= 1
            raise AudioDeviceError("no such device: hw:9")
        super().start()


def test_a_device_that_cannot_open_raises_and_start_may_be_tried_again(bus, recorder, loops):
    loop, _ = make_loop(bus, audio_in=FlakyMic(failures=1))
    with pytest.raises(AudioDeviceError, match="hw:9"):
        loop.start()
    assert not loop.running and loop.audio_out.stopped  # the output it opened is closed again
    loop.start()
    loops.append(loop)
    loop.submit_text("hello")
    assert recorder.wait_for(TurnDone).status == "completed"


def test_stop_returns_the_runtime_stop_report_and_accepts_the_edgevox_spelling(bus, recorder):
    loop, _ = make_loop(bus)
    loop.start()
    report = loop.stop(timeout=5.0)
    assert isinstance(report, StopReport) and report and report.abandoned == []
    assert not loop.running
    with pytest.raises(LifecycleError, match="make a new VoiceLoop"):
        loop.start()
