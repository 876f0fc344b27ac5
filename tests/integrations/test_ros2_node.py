"""``edgevox ros2`` the ROS way, with real rclpy in two processes: the node (parameters, the
managed lifecycle, the Trigger stop service, /diagnostics) in one, a plain rclpy client
(tests/integrations/ros2_node_client.py) in another.

Discovery is limited to this machine and each test uses its own ROS_DOMAIN_ID.
"""

from __future__ import annotations

import json
import os

import pytest

from .conftest import HERE, PYTHON

pytestmark = pytest.mark.ros2

try:
    import rclpy  # noqa: F401
except ImportError as exc:  # the wheels are a CI install; without them there is no ROS 2 here
    pytest.skip(
        f"ros-rclpy is not installed ({exc}): pip install ros-rclpy ros-std-msgs ros-rmw-fastrtps-cpp",
        allow_module_level=True,
    )

CONFIG = """\
name: ros-node-app
llm:
  engine: ros2_app_parts:temperature_llm
  temperature: 0.2
agents:
  robot:
    instructions: You drive the robot.
    skills: ["ros2_app_parts:hold_position"]
bridges:
  ros2:
    diagnostics_period_s: 0.2
"""


@pytest.fixture
def ros_env(monkeypatch, tmp_path):
    domain = 1 + (os.getpid() * 7 + 3) % 99  # apart from test_ros2_bridge.py's 100..199
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_LOG_DIR", str(tmp_path / "ros_log"))
    monkeypatch.setenv("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    return domain


def start_node(child_process, tmp_path, ros_env, ns: str, *extra: str):
    config = tmp_path / "robot.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    argv = [PYTHON, "-m", "edgevox", "ros2", str(config), "--headless", "--namespace", ns]
    argv += ["--domain-id", str(ros_env), *extra]
    return child_process(argv, env={"PYTHONPATH": os.pathsep.join([str(HERE.parent.parent), str(HERE)])})


def ask(client, command: str, word: str, timeout_s: float = 60.0):
    client.send(command)
    line = client.expect(f"{word} ", timeout_s=timeout_s)
    return json.loads(line[len(word) + 1 :])


def test_a_managed_node_is_configured_activated_stopped_deactivated_and_cleaned_up_from_another_process(
    ros_env, tmp_path, child_process
):
    ns = "/test/edgevox_managed"
    host = start_node(child_process, tmp_path, ros_env, ns, "--lifecycle", "--ros-args", "-p", "llm.temperature:=0.5")
    client = child_process([PYTHON, str(HERE / "ros2_node_client.py"), "--namespace", ns])
    ask(client, "ready lifecycle", "READY")
    assert ask(client, "state", "STATE") == "unconfigured"

    # Parameters: the --ros-args override is read at start; while unconfigured any key may be
    # set (it is used at configure); a bad value is refused with the config's own reason.
    assert ask(client, "get llm.temperature llm.max_tokens", "PARAMS") == {
        "llm.temperature": 0.5,
        "llm.max_tokens": 256,
    }
    assert ask(client, 'set safety.confirmation "Halted."', "SET") == {"successful": True, "reason": ""}
    refused = ask(client, "set llm.temperature 7.5", "SET")  # ROS itself refuses it: the descriptor's range
    assert (
        not refused["successful"]
        and "llm.temperature out of range" in refused["reason"]
        and "Max: 5.0" in refused["reason"]
    )

    assert ask(client, "change configure", "CHANGED") is True
    assert ask(client, "state", "STATE") == "inactive"
    read_only = ask(client, 'set safety.confirmation "Stop."', "SET")
    assert not read_only["successful"] and "read-only: restart to change" in read_only["reason"]

    assert ask(client, "change activate", "CHANGED") is True
    assert ask(client, "state", "STATE") == "active"
    assert ask(client, "text hello robot", "REPLY")["reply_text"] == "temperature 0.5"
    assert ask(client, "set llm.temperature 0.9", "SET")["successful"]  # live: the next turn uses it
    assert ask(client, "text hello again", "REPLY")["reply_text"] == "temperature 0.9"

    # The Trigger stop service cancels a skill that runs until cancelled, and says so.
    running = ask(client, 'goal {"goal_id": "g1", "skill": "hold_position"}', "RUNNING")
    assert running["skill"] == "hold_position"
    stopped = ask(client, "trigger", "TRIGGER")
    assert stopped["success"] and "goal g1 (skill hold_position)" in stopped["message"], stopped
    result = ask(client, "result g1", "RESULT")
    assert result["status"] == "cancelled" and "stop" in result["error"]

    # Diagnostics on /diagnostics: the state, the last turn's latencies, supervision, counters.
    statuses = {s["name"]: s for s in ask(client, "diagnostics 2", "DIAG")}
    voice = statuses["edgevox: voice"]
    assert voice["hardware_id"] == "ros-node-app" and voice["level"] == 0
    assert voice["values"]["state"] in ("listening", "stopped") and int(voice["values"]["turns"]) >= 2
    assert float(voice["values"]["transcript->first_token"]) >= 0.0
    assert {"edgevox: supervision", "edgevox: bridge"} <= set(statuses)

    # deactivate pauses (issue 26): the models, the topics and the stop service stay (the same
    # publishers, still matched); the stop service says nothing runs; activating again answers at
    # once on the same topics. Then cleanup releases all.
    reply_publishers = ask(client, "publishers reply", "PUBLISHERS")
    assert len(reply_publishers) == 1
    assert ask(client, "change deactivate", "CHANGED") is True
    assert ask(client, "state", "STATE") == "inactive"
    assert ask(client, "publishers reply", "PUBLISHERS") == reply_publishers
    inactive = ask(client, "trigger", "TRIGGER")
    assert inactive == {"success": True, "message": "stopped: nothing was running (the node is inactive)"}
    assert ask(client, "change activate", "CHANGED") is True
    assert ask(client, "text are you back", "REPLY")["reply_text"] == "temperature 0.9"
    assert ask(client, "publishers reply", "PUBLISHERS") == reply_publishers
    assert ask(client, "change deactivate", "CHANGED") is True
    assert ask(client, "change cleanup", "CHANGED") is True
    assert ask(client, "state", "STATE") == "unconfigured"
    assert ask(client, 'set safety.confirmation "Stop."', "SET")["successful"]  # unlocked again

    assert ask(client, "change shutdown", "CHANGED") is True
    client.send("quit")
    assert client.wait() == 0
    assert host.wait(20) == 0, host.stderr()  # the shutdown transition ends `edgevox ros2`


def test_a_plain_node_reads_a_parameter_file_refuses_read_only_keys_and_answers_the_stop_service(
    ros_env, tmp_path, child_process
):
    ns = "/test/edgevox_plain"
    params = tmp_path / "params.yaml"  # a ROS parameter file: nested keys are the dotted names
    params.write_text("/**:\n  ros__parameters:\n    llm:\n      max_tokens: 64\n", encoding="utf-8")
    start_node(child_process, tmp_path, ros_env, ns, "--ros-args", "--params-file", str(params))
    client = child_process([PYTHON, str(HERE / "ros2_node_client.py"), "--namespace", ns])
    ask(client, "ready", "READY")
    params = ask(client, "get llm.max_tokens safety.stop_phrases bridges.ros2.diagnostics_period_s", "PARAMS")
    assert params["llm.max_tokens"] == 64 and "stop" in params["safety.stop_phrases"]
    assert params["bridges.ros2.diagnostics_period_s"] == 0.2
    refused = ask(client, 'set safety.stop_phrases ["halt"]', "SET")
    assert refused == {"successful": False, "reason": refused["reason"]}
    assert refused["reason"] == "Trying to set a read-only parameter: safety.stop_phrases."  # the descriptor's flag
    assert ask(client, 'set logging.level "LOUD"', "SET")["successful"] is False
    assert ask(client, "set bridges.ros2.diagnostics_period_s 0.5", "SET")["successful"]
    assert ask(client, "trigger", "TRIGGER") == {"success": True, "message": "stopped: nothing was running"}
    client.send("quit")
    assert client.wait() == 0


def test_a_bad_parameter_override_stops_the_node_at_start_with_the_config_error(ros_env, tmp_path, child_process):
    host = start_node(child_process, tmp_path, ros_env, "/test/edgevox_bad", "--ros-args", "-p", "llm.temperature:=7.5")
    assert host.wait(30) == 2
    err = host.stderr()
    assert "llm.temperature" in err and "Traceback" not in err, err


def test_a_transition_that_fails_returns_failure_with_a_log_line_and_the_node_stays_inactive(ros_env, tmp_path, caplog):
    """activate with a microphone that does not open: FAILURE (not a crash), one log line saying
    why, the node still inactive (cleanup, valid only from there, succeeds)."""
    from rclpy.lifecycle import TransitionCallbackReturn

    from edgevox.config.build import Engines
    from edgevox.errors import AudioDeviceError
    from edgevox.integrations.ros2_lifecycle import Ros2LifecycleAppNode
    from edgevox.integrations.ros2_params import ConfigSource
    from edgevox.testing import FakeAudioIn, FakeSTT, FakeTTS, FakeVAD, MemoryAudioOut, ScriptedLLM

    class UnpluggedMic(FakeAudioIn):
        def start(self) -> None:
            raise AudioDeviceError("no microphone 'usb-mic': plug it in or set audio.input.device")

    config = tmp_path / "robot.yaml"
    config.write_text("name: unplugged\n", encoding="utf-8")
    source = ConfigSource(
        str(config),
        {"bridges.ros2.enabled": True, "bridges.ros2.namespace": "/test/unplugged", "bridges.ros2.domain_id": ros_env},
    )
    vad_frame_ms = source.load().vad.frame_ms
    engines = Engines(
        stt=FakeSTT(),
        llm=ScriptedLLM(default="ok"),
        tts=FakeTTS(),
        vad=FakeVAD(frame_ms=vad_frame_ms),
        audio_in=UnpluggedMic(),
        audio_out=MemoryAudioOut(),
    )
    host = Ros2LifecycleAppNode(source, engines=engines).start()
    try:
        node = host.node
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        with caplog.at_level("ERROR", logger="edgevox.integrations.ros2_lifecycle"):
            assert node.trigger_activate() == TransitionCallbackReturn.FAILURE
        assert "activate (open the devices, start listening) failed: no microphone 'usb-mic'" in caplog.text
        assert host.app is None and host.loaded is not None  # models kept, nothing running
        assert node.trigger_cleanup() == TransitionCallbackReturn.SUCCESS  # only valid from inactive
        assert host.loaded is None
        assert node.trigger_shutdown() == TransitionCallbackReturn.SUCCESS
        assert host.finished.is_set()
    finally:
        assert host.stop(5.0)
