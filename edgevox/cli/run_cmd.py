"""``edgevox run``, ``edgevox check`` and ``edgevox devices``.

Over 400 lines because ``run`` is one flow (load, build with progress, signal handling, drive
the text REPL, a WAV or ``--say``, report the outcome) with ``check`` and ``devices`` as thin
neighbours, kept in the one module that may print and read stdin.

``run CONFIG`` builds the application described by CONFIG (a path or a builtin name such
as ``default``) and runs it until Ctrl-C (then shuts down within
``runtime.shutdown_timeout_s``), until a WAV input has been answered, or after one
``--say`` turn; a headless run (``--say``, ``--input``, piped ``--text``) then waits up to
``--wait-s`` for the skills and background replies its turns started (:meth:`App.wait_settled`),
and names what its exit had to cancel (exit status 3). ``check CONFIG`` validates, resolves models and references, opens the
audio devices and reports what would run. ``devices`` lists audio devices.

This module is the only place (with ``cli/main.py``) that prints, installs a signal
handler or reads stdin; everything it runs is library code from :mod:`edgevox.app` and :mod:`edgevox.check`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from edgevox.cli.args import SECONDS, number
from edgevox.errors import AudioDeviceError, ConfigError, EdgeVoxError

if TYPE_CHECKING:
    from rich.progress import TaskID

    from edgevox.app import App
    from edgevox.cli.status import StatusView
    from edgevox.config.schema import AppConfig
    from edgevox.engines.portaudio_log import AudioLibraryLog

WAIT_S = 60.0
"""``--wait-s``' default: how long a headless run waits for the skills and background work it started."""

STILL_RUNNING = 3
"""Exit status of a headless run that had to cancel work still running after ``--wait-s``."""

EXIT_STATUS_HELP = (
    "exit status: 0 when every turn was answered and everything it started ended well; 1 when a turn or "
    "a skill failed, a WAV held no speech, or --timeout ran out; 2 for bad input (a config, an option, a "
    f"file); {STILL_RUNNING} when a headless run (--say, --input, piped --text) exited with a skill or "
    "background work still running after --wait-s, which cancelled it; 130 after Ctrl-C."
)

_NO_DEVICE_HELP = (
    "This machine has no usable audio device. Run headless instead:\n"
    "  edgevox run {config} --input question.wav --output reply.wav   (a WAV in, the spoken reply out)\n"
    "  edgevox run {config} --text                                   (type, and read the replies)\n"
    '  edgevox run {config} --say "hello" --output reply.wav         (one typed turn, spoken to a WAV)\n'
    "or give the machine a virtual sound card (a PulseAudio null sink, see docs/quickstart.md)."
)


def register(subparsers: Any) -> None:
    run = subparsers.add_parser(
        "run",
        help="run a voice agent application from a config",
        description="Run the application described by CONFIG until Ctrl-C.",
        epilog=EXIT_STATUS_HELP,
    )
    add_run_options(run)
    run.set_defaults(func=cmd_run)

    check = subparsers.add_parser(
        "check",
        help="validate a config, resolve its models and devices, report what would run",
        description="Validate CONFIG, resolve its models and code references, open its audio devices, and report.",
    )
    check.add_argument("config", metavar="CONFIG", help="config file, or a builtin name")
    check.add_argument("--input", metavar="FILE.wav", help="as for run")
    check.add_argument("--output", metavar="FILE.wav", help="as for run")
    check.add_argument("--text", action="store_true", help="as for run")
    _add_device_options(check)
    _add_set_option(check)
    check.add_argument("--load", action="store_true", help="also load every model (slower; proves they work)")
    check.set_defaults(func=cmd_check)

    devices = subparsers.add_parser("devices", help="list audio input and output devices")
    devices.set_defaults(func=cmd_devices)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``run`` (``console`` takes the same ones): one place, so both stay alike."""
    parser.add_argument("config", metavar="CONFIG", help="config file, or a builtin name: default, home_robot, text")
    parser.add_argument(
        "--text",
        action="store_true",
        help="type instead of speaking; replies are printed, and spoken too when there is a speaker",
    )
    parser.add_argument("--input", metavar="FILE.wav", help="read speech from a WAV file (headless)")
    parser.add_argument("--output", metavar="FILE.wav", help="write the spoken reply to a WAV file (headless)")
    parser.add_argument("--say", metavar="TEXT", help="send one utterance as text, wait for the reply, then exit")
    parser.add_argument("--json", action="store_true", help="write every event as a JSON line to stdout")
    parser.add_argument("--dashboard", action="store_true", help="serve the live web dashboard (its URL is printed)")
    parser.add_argument(
        "--dashboard-port",
        type=int,
        metavar="PORT",
        help="the dashboard's port (0 = any free port); implies --dashboard",
    )
    parser.add_argument("--log-level", dest="run_log_level", metavar="LEVEL", help="DEBUG, INFO, WARNING or ERROR")
    parser.add_argument(
        "--realtime",
        choices=("yes", "no"),
        help="pace --input in real time like a microphone (default: the config's audio.input.realtime)",
    )
    parser.add_argument(
        "--timeout", type=SECONDS, default=None, metavar="S", help="give up after S seconds (headless runs)"
    )
    parser.add_argument(
        "--wait-s",
        type=number(high=7 * 86400.0, inclusive_low=True),
        default=WAIT_S,
        metavar="S",
        help=f"headless runs (--say, --input, piped --text): after the last reply, wait up to S seconds for the "
        f"skills and background work it started (default {WAIT_S:g}); what still runs then is cancelled, named, "
        f"and the exit status is {STILL_RUNNING}",
    )
    _add_device_options(parser)
    parser.add_argument(
        "--list-devices", action=_ListDevices, help="list the audio devices (as `edgevox devices` does) and exit"
    )
    _add_set_option(parser)


def _add_device_options(parser: argparse.ArgumentParser) -> None:
    for kind in ("input", "output"):
        parser.add_argument(
            f"--{kind}-device",
            metavar="DEVICE",
            help=f"{'microphone' if kind == 'input' else 'speaker'}: an index or part of a name from --list-devices "
            f"(sets audio.{kind}.device)",
        )


def _add_set_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set any config key, e.g. --set llm.temperature=0.3 (VALUE is YAML; repeatable, the last wins; "
        "validated like the file)",
    )


class _ListDevices(argparse.Action):
    """``--list-devices``: print the devices and exit at once, like ``--version`` (CONFIG not needed)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None) -> None:
        try:
            code = _print_devices(Console(highlight=False, soft_wrap=True))
        except EdgeVoxError as exc:
            parser.exit(2, f"edgevox: error: {exc}\n")
        parser.exit(code)


# --- overrides from options -------------------------------------------------------------------


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Dotted config keys set by the command-line options."""
    out: dict[str, Any] = {}
    if getattr(args, "text", False) or (getattr(args, "say", None) and not getattr(args, "input", None)):
        out["audio.input.source"] = "text"
        out["audio.input.file"] = None  # typed replies are spoken when there is a speaker (see _load)
    if getattr(args, "input", None):
        if getattr(args, "text", False):
            raise ConfigError("--text and --input both choose the input; use one of them")
        path = Path(args.input)
        if path.is_dir():
            raise ConfigError(f"--input {args.input}: is a folder; give a WAV file")
        if not path.is_file():
            raise ConfigError(f"--input {args.input}: no such file")
        out["audio.input.source"] = "file"
        out["audio.input.file"] = str(path)
    if getattr(args, "output", None):
        out["audio.output.sink"] = "file"
        out["audio.output.file"] = args.output
    realtime = getattr(args, "realtime", None)
    if realtime:
        out["audio.input.realtime"] = realtime == "yes"
    level = getattr(args, "run_log_level", None)
    if level:
        out["logging.level"] = level.upper()
    if getattr(args, "dashboard", False) or getattr(args, "dashboard_port", None) is not None:
        out["dashboard.enabled"] = True
    if getattr(args, "dashboard_port", None) is not None:
        out["dashboard.port"] = args.dashboard_port
    for kind in ("input", "output"):
        spec = getattr(args, f"{kind}_device", None)
        if spec is not None:
            out[f"audio.{kind}.device"] = int(spec) if spec.strip().isdigit() else spec
    return out


def _load(args: argparse.Namespace) -> AppConfig:
    """The config with the options applied: the file, then each ``--set`` in order, then the
    command's own options (a ``--set`` of a key those set to something else is an error, not
    a silent loser). Device options are checked against the devices present, and typed input
    (``--text``, ``--say``) falls back to printed replies, with a note, when there is no speaker."""
    from edgevox.config import load_config
    from edgevox.config.loader import parse_set

    own = config_overrides(args)
    sets = list(getattr(args, "sets", None) or [])
    for text in sets:
        key, value = parse_set(text)
        if key in own and own[key] != value:
            raise ConfigError(f"--set {text}: the command's own options set {key} to {own[key]!r}; drop one of the two")
    config = load_config(args.config, overrides=own, sets=sets)
    _check_device_options(config, args)
    typed = getattr(args, "text", False) or (
        getattr(args, "say", None) is not None and not getattr(args, "input", None)
    )
    default_speaker = config.audio.output.device in (None, "", "default")
    if typed and config.audio.output.sink == "device" and default_speaker and not _has_speaker():
        config.audio.output.sink = "none"
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            "edgevox: no audio output device here, so replies are printed, not spoken "
            "(--output reply.wav writes them to a file)"
        )
    return config


def _check_device_options(config: AppConfig, args: argparse.Namespace) -> None:
    """``--input-device``/``--output-device`` name a device that exists (one line listing those
    present if not), before any model loads; and they choose a device the run uses."""
    from edgevox.check import _sounddevice_or_explain
    from edgevox.engines.audio_sounddevice import find_device

    for kind, used in (
        ("input", config.audio.input.source == "device"),
        ("output", config.audio.output.sink == "device"),
    ):
        spec = getattr(args, f"{kind}_device", None)
        if spec is None:
            continue
        if not used:
            what = config.audio.input.source if kind == "input" else config.audio.output.sink
            raise ConfigError(
                f"--{kind}-device {spec}: the {kind} is not a device here (audio.{kind}.{'source' if kind == 'input' else 'sink'}"
                f" = {what}); drop --{kind}-device or the option that chose {what}"
            )
        try:
            with _quiet_audio_probe():
                find_device(_sounddevice_or_explain(), getattr(config.audio, kind).device, kind)
        except AudioDeviceError as exc:
            raise AudioDeviceError(f"--{kind}-device {spec}: {exc}") from None


def _has_speaker() -> bool:
    from edgevox.check import list_audio_devices

    try:
        with _quiet_audio_probe():
            return any(dev["outputs"] > 0 for dev in list_audio_devices())
    except AudioDeviceError:
        return False


def _quiet_audio_probe() -> contextlib.AbstractContextManager[None]:
    """PortAudio's and ALSA's prints while devices are probed go to the log, not the terminal."""
    from edgevox.engines.portaudio_log import AudioLibraryLog

    return AudioLibraryLog().capture_stderr()


def _configure_logging(config: AppConfig, args: argparse.Namespace) -> logging.Handler | None:
    """Set the log level; add ``logging.file``'s handler (returned, so the run removes it)."""
    root = logging.getLogger()
    global_level = str(getattr(args, "log_level", "WARNING")).upper()
    explicit = getattr(args, "run_log_level", None) or config.logging.level != "WARNING"
    # `edgevox --log-level DEBUG run X` (the global option) wins over the config's default level.
    root.setLevel(getattr(logging, config.logging.level if explicit or global_level == "WARNING" else global_level))
    if config.logging.file:
        handler = logging.StreamHandler(_open_for_append("logging.file", config.logging.file))
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        return handler
    return None


def _open_for_append(key: str, path: str) -> IO[str]:
    """A text file opened for appending, or one line naming the key, the path and why not."""
    try:
        return open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by the caller at exit
    except OSError as exc:
        raise ConfigError(
            f"{key} = {path}: cannot write there ({exc.strerror or exc}); choose a file in a folder that exists"
        ) from None


def _explain_audio(exc: AudioDeviceError, config_name: str) -> ConfigError | AudioDeviceError:
    text = str(exc)
    if "devices: none" in text or "no audio" in text.lower() or "no default" in text.lower() or "PortAudio" in text:
        return AudioDeviceError(f"{text}\n" + _NO_DEVICE_HELP.format(config=config_name))
    return exc


# --- run ------------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    config = _load(args)
    log_handler = _configure_logging(config, args)
    try:
        return _run(config, args)
    finally:
        if log_handler is not None:
            logging.getLogger().removeHandler(log_handler)
            log_handler.close()


def _run(config: AppConfig, args: argparse.Namespace) -> int:
    from edgevox.engines.portaudio_log import AudioLibraryLog

    audio_log = AudioLibraryLog()
    if config.audio.input.source == "device" or config.audio.output.sink == "device":
        audio_log.route_alsa()  # ALSA's prints ("underrun occurred") go to the log, not over the console
    try:
        return _run_app(config, args, audio_log)
    finally:
        audio_log.stop()


def _run_app(config: AppConfig, args: argparse.Namespace, audio_log: AudioLibraryLog) -> int:
    from edgevox.app import App
    from edgevox.cli.console_view import view_for
    from edgevox.cli.status import JsonEvents

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False, soft_wrap=True)

    # Everything that can be checked without the models is checked before they load.
    if args.say is not None:
        _require_utf8("--say", args.say)
    if config.audio.input.source == "file":
        from edgevox.engines.audio_wav import wav_info

        wav_info(config.audio.input.file or "")
    if config.audio.input.source == "device" or config.audio.output.sink == "device":
        with audio_log.capture_stderr():  # PortAudio's probing prints
            _require_audio_devices(args.config)  # before loading models: fail fast, with the fix
    events_file = (
        _open_for_append("logging.events_file", config.logging.events_file) if config.logging.events_file else None
    )
    try:
        app = _build_with_progress(App, config, err, quiet=args.json)
    except BaseException:
        if events_file is not None:
            events_file.close()
        raise
    tally = TurnTally()
    app.add_observer(tally.on_event)
    writers: list[JsonEvents] = []
    if events_file is not None:
        writers.append(JsonEvents(events_file))
    status: StatusView | None = None
    if args.json:
        writers.append(JsonEvents(sys.stdout))
    for writer in writers:
        app.add_observer(writer.on_event)
    if not args.json:
        status = view_for(config, args, out)  # the console's view (`console`, or `run` on a terminal)
        app.add_observer(status.on_event)

    stop_requested = threading.Event()
    interrupted: list[int] = []  # the signal that ended the run, if one did

    def on_sigint(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        stop_requested.set()

    deaf: list[str] = []  # the voice loop's capture thread died: nothing can be heard, so the run ends

    def on_capture_failed(event: Any) -> None:
        if getattr(event, "kind", "") == "voice.capture_failed":
            deaf.append(event.error)
            stop_requested.set()

    app.add_observer(on_capture_failed)

    previous = signal.signal(signal.SIGINT, on_sigint)
    previous_term = signal.signal(signal.SIGTERM, on_sigint)
    clean = True
    code = 0
    try:
        try:
            with audio_log.capture_stderr():  # devices open here
                app.start()
        except AudioDeviceError as exc:
            raise _explain_audio(exc, args.config) from None
        if app.dashboard is not None:
            err.print(f"dashboard: {app.dashboard.url}")
        if status is not None:
            status.start()
        code = _drive(app, config, args, stop_requested, out, tally, status)
    finally:
        if status is not None:
            status.stop()
        clean = app.stop(timeout_s=config.runtime.shutdown_timeout_s).clean
        for writer in writers:
            writer.flush()
        if events_file is not None:
            events_file.close()
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)
    if deaf:
        err.print(f"edgevox: {escape(deaf[0])}; the run stopped (the safety stop ran)")
        return 1
    if not clean:
        err.print(
            f"[yellow]edgevox: shutdown was not clean within {config.runtime.shutdown_timeout_s} s:[/] {app.stop_report}"
        )
        return code or 1
    if signal.SIGINT in interrupted:
        # Ctrl-C: the shell's convention (128 + SIGINT), after the clean shutdown above. SIGTERM
        # (systemd's stop, `kill`) stays a normal end of the run: exit 0 unless something failed.
        return 130
    if code == 0:
        code = _headless_outcome(config, args, tally, err, asleep=(app.loop.utterances_asleep, app.loop.wake_phrase))
        if code:
            return code
    if config.audio.output.sink == "file" and not args.json:
        err.print(f"reply audio written to {escape(config.audio.output.file or '')}")
    return code


class TurnTally:
    """Counts how the run's turns and skills ended (bus observer), for the exit code of headless
    runs; ``still_running`` is what a headless run's wait (``--wait-s``) left running."""

    def __init__(self) -> None:
        self.turns = 0
        self.failed: list[str] = []
        self.skills_failed: list[str] = []
        """``skill go_to failed: ...`` for each skill goal that failed."""
        self.still_running: list[str] = []
        self.waited_s = 0.0
        self.waited = False
        """A headless run waited for what its turns started (``--wait-s``)."""
        self._lock = threading.Lock()

    def on_event(self, event: Any) -> None:
        kind = getattr(event, "kind", "")
        if kind == "agent.skill_state" and event.state == "failed":
            error = event.error or "no reason given"
            wrapper = f"ToolExecutionError: tool {event.skill!r} failed: "
            error = error.removeprefix(wrapper)  # the body's own error says it, once
            with self._lock:
                self.skills_failed.append(f"skill {event.skill} failed: {error}")
        if kind != "voice.turn_done":
            return
        with self._lock:
            self.turns += 1
            if event.status == "error":
                self.failed.append(event.error or "the turn failed")


def _headless_outcome(
    config: AppConfig,
    args: argparse.Namespace,
    tally: TurnTally,
    err: Console,
    *,
    asleep: tuple[int, str | None] = (0, None),
) -> int:
    """Exit code of a run that was asked for an answer (``--say`` or a WAV input): 1 when a
    turn failed or the WAV held no speech the loop could hear, with one line saying which.
    ``asleep``: utterances heard while waiting for the wake word, and the wake phrase (None: no
    wake word): speech was heard, only never the wake word."""
    headless = args.say is not None or config.audio.input.source == "file"
    if tally.still_running:
        err.print(
            f"edgevox: {escape(', '.join(tally.still_running))} still running after {tally.waited_s:g} s: "
            "cancelled; raise --wait-s"
        )
        return STILL_RUNNING
    if tally.skills_failed and (headless or tally.waited):  # a robot that runs for days: not its exit
        more = f" (and {len(tally.skills_failed) - 1} more)" if len(tally.skills_failed) > 1 else ""
        err.print(f"edgevox: {escape(tally.skills_failed[0])}{more}")
        return 1
    if not headless:
        return 0
    if tally.failed:
        err.print(f"edgevox: {len(tally.failed)} turn(s) failed: {escape(tally.failed[0])}")
        return 1
    if tally.turns == 0 and config.audio.input.source == "file":
        from edgevox.engines.audio_wav import wav_info

        seconds, rate = wav_info(config.audio.input.file or "")
        heard, phrase = asleep
        if heard and phrase:
            err.print(
                f"edgevox: speech was heard in {escape(config.audio.input.file or '')} ({heard} utterance"
                f"{'s' if heard > 1 else ''}) but never the wake word {escape(repr(phrase))}: "
                "say it first, or set wake.model: null (no wake word)"
            )
            return 1
        err.print(
            f"edgevox: no speech was heard in {escape(config.audio.input.file or '')} ({seconds:.1f} s at {rate} Hz): "
            "check it holds speech loud enough, or lower vad.aggressiveness"
        )
        return 1
    return 0


def _require_utf8(option: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(text[exc.start]) & 0xFF  # a byte the terminal could not decode (surrogateescape)
        raise ConfigError(
            f"{option}: the text is not UTF-8 (byte 0x{bad:02x} at position {exc.start}); "
            "set the terminal to UTF-8 (e.g. LANG=C.UTF-8) or retype it"
        ) from None


def _require_audio_devices(config_name: str) -> None:
    from edgevox.check import list_audio_devices

    try:
        devices = list_audio_devices()
    except AudioDeviceError as exc:
        raise AudioDeviceError(f"{exc}\n" + _NO_DEVICE_HELP.format(config=config_name)) from None
    if not devices:
        raise AudioDeviceError(
            "no audio device found (PortAudio sees none).\n" + _NO_DEVICE_HELP.format(config=config_name)
        )


def _build_with_progress(app_cls: type[App], config: AppConfig, err: Console, *, quiet: bool) -> App:
    if quiet or not err.is_terminal:
        return app_cls.build(config)
    columns = (SpinnerColumn(finished_text="[green]✓[/]"), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=False) as progress:
        tasks: dict[str, TaskID] = {}

        def on_progress(step: str, done: bool) -> None:
            if step not in tasks:
                tasks[step] = progress.add_task(step, total=1)
            if done:
                progress.update(tasks[step], completed=1)

        return app_cls.build(config, on_progress=on_progress)


def _drive(
    app: App,
    config: AppConfig,
    args: argparse.Namespace,
    stop_requested: threading.Event,
    out: Console,
    tally: TurnTally,
    view: StatusView | None = None,
) -> int:
    """Feed the application until it is done or Ctrl-C. Returns the exit code.

    A headless run (``--say``, a WAV, piped ``--text``) then waits up to ``--wait-s`` for
    what its turns started (skills, background agents' replies): exiting cancels whatever
    still runs, so that is recorded in ``tally.still_running`` for the exit status."""
    timeout_s = args.timeout
    wait_s = getattr(args, "wait_s", WAIT_S)
    if args.say is not None:
        app.submit_text(args.say)
        return 0 if _wait(app, stop_requested, timeout_s, settle=(wait_s, tally)) else 1
    source = config.audio.input.source
    if source == "file":
        # Headless: run until the WAV is exhausted and every turn it started is answered.
        return 0 if _wait(app, stop_requested, timeout_s, until_input_ended=True, settle=(wait_s, tally)) else 1
    if source == "text":
        return _text_repl(app, stop_requested, timeout_s, out, settle=(wait_s, tally), view=view)
    stop_requested.wait(timeout_s)
    return 0


def _settle(app: App, settle: tuple[float, TurnTally]) -> None:
    """A headless run's last wait: for the skills and background work its turns started."""
    wait_s, tally = settle
    tally.waited_s = wait_s
    tally.waited = True
    tally.still_running = app.wait_settled(wait_s)


def _wait(
    app: App,
    stop_requested: threading.Event,
    timeout_s: float | None,
    *,
    until_input_ended: bool = False,
    settle: tuple[float, TurnTally] | None = None,
) -> bool:
    """Wait for the app to become idle (or Ctrl-C), then (``settle``) for what its turns
    started. False on timeout."""
    done = threading.Event()

    def waiter() -> None:
        try:
            if until_input_ended:
                app.wait_input_ended(timeout_s)
            if app.wait_idle(timeout_s) and settle is not None and not stop_requested.is_set():
                _settle(app, settle)
        finally:
            done.set()
            stop_requested.set()

    thread = threading.Thread(target=waiter, name="edgevox-cli-wait", daemon=True)
    thread.start()
    if not stop_requested.wait(None if timeout_s is None else timeout_s + (settle[0] if settle else 0.0)):
        return False
    return done.is_set() and app.idle


def _text_repl(
    app: App,
    stop_requested: threading.Event,
    timeout_s: float | None,
    out: Console,
    *,
    settle: tuple[float, TurnTally] | None = None,
    view: StatusView | None = None,
) -> int:
    """Read lines from stdin on a helper thread so Ctrl-C (a signal) always wins.

    Each line is submitted at once, without waiting for the previous reply: a typed "stop"
    is matched on this thread and halts the reply being written, the skills it started
    and everything else running (the loop queues ordinary lines as turns, in order).
    At the end of input the REPL waits for the last reply, then returns; piped input (not a
    terminal) also waits for what the turns started (``settle``, ``--wait-s``).
    """
    from edgevox.cli.console_view import ConsoleView

    interactive = sys.stdin.isatty()
    err = Console(stderr=True, highlight=False)
    # Typing on a terminal: the console view owns the prompt line (output is printed above it).
    prompt = view if isinstance(view, ConsoleView) and view.prompt else None

    def reader() -> None:
        number = 0
        try:
            if prompt is not None:
                prompt.show_prompt()
            elif interactive:
                out.print("[bold cyan]you>[/] ", end="")
            for raw in _stdin_lines():
                if stop_requested.is_set():
                    break
                if prompt is not None:
                    prompt.line_entered()
                    prompt.show_prompt()  # at once: the terminal echoes what is typed next after it
                number += 1
                try:
                    text = raw.decode("utf-8").strip()
                except UnicodeDecodeError as exc:
                    err.print(f"edgevox: input line {number} is not UTF-8 ({exc.reason} at byte {exc.start}); ignored")
                    continue
                if text:
                    app.submit_text(text)
            if not stop_requested.is_set():
                idle = app.wait_idle(timeout_s)  # end of input: let the last reply finish
                if idle and settle is not None and not interactive and not stop_requested.is_set():
                    _settle(app, settle)
        finally:
            stop_requested.set()

    threading.Thread(target=reader, name="edgevox-cli-stdin", daemon=True).start()
    stop_requested.wait(timeout_s)
    return 0


def _stdin_lines() -> Iterator[bytes]:
    """Raw lines of standard input, read with ``os.read`` (not through ``sys.stdin``'s buffer,
    whose lock a reader blocked at Ctrl-C would hold while the interpreter shuts down)."""
    fd = sys.stdin.fileno()
    pending = b""
    while True:
        try:
            block = os.read(fd, 65536)
        except OSError:
            block = b""
        if not block:
            if pending:
                yield pending
            return
        pending += block
        *lines, pending = pending.split(b"\n")
        yield from lines


# --- check ------------------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    from edgevox.check import check_config

    config = _load(args)
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"[bold]{escape(args.config)}[/]: config is valid ({escape(config.name)})")
    report = check_config(config, load_models=args.load)
    for item in report.items:
        mark = {"ok": "[green]ok[/]  ", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]", "off": "[dim]off[/] "}[
            item.status
        ]
        console.print(f"  {mark} {escape(item.what):<22} {escape(item.detail)}")
    if report.failed:
        console.print(f"[red]{len(report.failed)} problem(s)[/]: edgevox run would fail; fix the lines marked FAIL")
        return 1
    console.print("[green]ready to run[/]")
    return 0


# --- devices ----------------------------------------------------------------------------------


def cmd_devices(args: argparse.Namespace) -> int:
    return _print_devices(Console(highlight=False, soft_wrap=True))


def _print_devices(console: Console) -> int:
    """The device table (``edgevox devices``, ``run --list-devices``); 1 when there is none."""
    from edgevox.check import list_audio_devices

    with _quiet_audio_probe():
        devices = list_audio_devices()
    if not devices:
        console.print(escape(_NO_DEVICE_HELP.format(config="default")))
        return 1
    console.print("index  in  out  default rate  name")
    for dev in devices:
        marks = ("<" if dev["default_input"] else " ") + (">" if dev["default_output"] else " ")
        console.print(
            f"{dev['index']:>5} {dev['inputs']:>3} {dev['outputs']:>4}  {dev['default_rate_hz']:>10.0f} Hz {marks} {escape(dev['name'])}"
        )
    console.print(
        "(< default input, > default output; give the index or a part of the name to --input-device/--output-device "
        "or audio.input.device/audio.output.device)"
    )
    return 0


__all__ = ["EdgeVoxError", "add_run_options", "cmd_check", "cmd_devices", "cmd_run", "config_overrides", "register"]
