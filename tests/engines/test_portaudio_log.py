"""ALSA's and PortAudio's prints go to the log, never over the console (``edgevox.engines.portaudio_log``).

libasound is asked for a PCM that does not exist: it reports "Unknown PCM ..." through its
error handler, exactly as it reports "underrun occurred" from inside the audio callback."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

import pytest

from edgevox.engines.portaudio_log import AudioLibraryLog, format_alsa


def _libasound() -> ctypes.CDLL:
    name = ctypes.util.find_library("asound")
    if name is None:
        pytest.skip("libasound is absent (apt-get install libasound2; CI has it through libportaudio2)")
    return ctypes.CDLL(name)


def _unknown_pcm(lib: ctypes.CDLL, name: bytes) -> int:
    pcm = ctypes.c_void_p()
    return lib.snd_pcm_open(ctypes.byref(pcm), name, 0, 0)


def test_libasound_messages_reach_the_log_not_stderr_and_stop_restores_stderr(caplog, capfd):
    lib = _libasound()
    routed = AudioLibraryLog()
    caplog.set_level(logging.INFO, logger="edgevox.audio")
    assert routed.route_alsa() and routed.routing_alsa
    try:
        assert _unknown_pcm(lib, b"edgevox_no_such_pcm") < 0
    finally:
        routed.stop()  # logs what was queued, restores libasound's own handler
    assert routed.alsa_messages == 1
    records = [r for r in caplog.records if r.name == "edgevox.audio.alsa"]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert "Unknown PCM edgevox_no_such_pcm" in records[0].getMessage()
    assert records[0].getMessage().startswith("ALSA lib pcm.c:")
    assert "ALSA lib" not in capfd.readouterr().err
    # After stop libasound prints as it always did (the default handler is back).
    _unknown_pcm(lib, b"edgevox_after_stop")
    assert "Unknown PCM edgevox_after_stop" in capfd.readouterr().err
    assert not routed.routing_alsa


def test_prints_while_devices_open_are_logged_after_stderr_is_restored(caplog, capfd):
    routed = AudioLibraryLog()
    caplog.set_level(logging.INFO, logger="edgevox.audio")
    with routed.capture_stderr():
        os.write(2, b"Expression 'alsa_snd_pcm_hw_params' failed in 'src/hostapi/alsa/pa_linux_alsa.c'\n")
        os.write(2, b"something else went wrong\n")
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "edgevox.audio.stderr"]
    assert records == [
        ("INFO", "Expression 'alsa_snd_pcm_hw_params' failed in 'src/hostapi/alsa/pa_linux_alsa.c'"),
        ("WARNING", "something else went wrong"),  # not ALSA chatter: never hidden
    ]
    assert routed.captured_lines == 2


@pytest.mark.parametrize(
    ("fmt", "args", "expected"),
    [
        ("%s occurred", ["underrun"], "underrun occurred"),
        ("card %d: %s", [-3 & 0xFFFFFFFF, "hw"], "card -3: hw"),
        ("100%% at %u", [7], "100% at 7"),
        ("rate %ld, %c", [44100, ord("x")], "rate 44100, x"),
        ("value %f and %s", [1, "kept"], "value %f and %s"),  # a double is not in an integer slot
        ("missing %s", [], "missing %s"),
    ],
)
def test_format_alsa_expands_integer_and_string_conversions_only(fmt, args, expected):
    keep = [ctypes.create_string_buffer(a.encode()) if isinstance(a, str) else a for a in args]
    raw = [ctypes.addressof(k) if isinstance(k, ctypes.Array) else k for k in keep]
    assert format_alsa(fmt, raw) == expected
