"""The ROS 1 bridge against a real Debian ``roscore``, runtime and client in separate processes.

ROS 1 and ROS 2 messages cannot share an interpreter (both ship ``std_msgs``), and this
test process may have loaded rclpy, so the runtime runs in ``ros1_host.py`` (our Python,
rospy from Debian's dist-packages) and the client in ``ros1_client.py`` (Debian's python3).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import HERE, PYTHON, free_port  # noqa: E402
from .ros_attacks import assert_attacks_answered  # noqa: E402

pytestmark = pytest.mark.ros1

ROSCORE = shutil.which("roscore")
DEBIAN_PYTHON = "/usr/bin/python3"
if ROSCORE is None or not Path("/usr/lib/python3/dist-packages/rospy").is_dir():
    pytest.skip(
        "ROS 1 is not installed: apt-get install -y ros-core python3-rospy python3-rosmaster python3-std-msgs",
        allow_module_level=True,
    )


@pytest.fixture
def roscore(tmp_path):
    port = free_port()
    env = dict(
        os.environ, ROS_HOSTNAME="localhost", ROS_HOME=str(tmp_path / "ros_home"), ROS_LOG_DIR=str(tmp_path / "ros_log")
    )
    env.pop("PYTHONPATH", None)
    env["ROS_MASTER_URI"] = f"http://localhost:{port}"
    proc = subprocess.Popen([ROSCORE, "-p", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    yield env
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    if proc.stderr is not None:
        proc.stderr.close()


def test_ros1_client_gets_replies_and_stops_a_running_skill(roscore, child_process):
    host = child_process([PYTHON, str(HERE / "ros1_host.py")], env=roscore)  # waits for the master itself
    host.expect("READY", timeout_s=60)
    client_env = dict(roscore, PYTHONPATH="")  # Debian's python3 with its own rospy; nothing of ours
    client = child_process(
        [DEBIAN_PYTHON, str(HERE / "ros1_client.py"), "--namespace", "/test/edgevox"], env=client_env
    )

    reply = json.loads(client.expect("REPLY ", timeout_s=60)[len("REPLY ") :])
    assert (reply["kind"], reply["text"]) == ("agent.reply", "you said: hello robot")
    feedback = json.loads(client.expect("FEEDBACK ")[len("FEEDBACK ") :])
    assert feedback["skill"] == "patrol" and feedback["feedback"]["lap"] >= 0
    result = json.loads(client.expect("RESULT ")[len("RESULT ") :])
    assert result["status"] == "cancelled" and "e-stop from client" in result["error"]
    assert client.wait() == 0

    host.send("quit")
    assert json.loads(host.expect("STOPS ")[len("STOPS ") :]) == ["e-stop from client"]
    assert host.expect("CANCELLED ") == "CANCELLED True"
    assert host.expect("DONE ") == "DONE clean=True"
    assert host.wait() == 0


def test_edgevox_ros1_runs_a_config_as_a_node_answering_text_and_obeying_stop(roscore, tmp_path, child_process):
    """`edgevox ros1 CONFIG --headless`: the whole App in a rospy node (started off the main
    thread). A Debian-python rospy client is answered and its stop cancels the config's skill."""
    config = tmp_path / "robot.yaml"
    config.write_text(
        """\
name: ros1-app
llm:
  engine: edgevox.testing:ScriptedLLM
  options: {default: "Hello from the ROS 1 node."}
agents:
  robot:
    instructions: You drive the robot.
    skills: ["cfg_sample_tools:patrol"]
""",
        encoding="utf-8",
    )
    ns = "/test/edgevox_app1"
    host_env = dict(roscore, PYTHONPATH=os.pathsep.join([str(HERE.parent.parent), str(HERE.parent / "config")]))
    host = child_process([PYTHON, "-m", "edgevox", "ros1", str(config), "--headless", "--namespace", ns], env=host_env)
    client_env = dict(roscore, PYTHONPATH="")
    client = child_process(
        [DEBIAN_PYTHON, str(HERE / "ros1_client.py"), "--namespace", ns, "--reply-kind", "voice.turn_done"],
        env=client_env,
    )
    reply = json.loads(client.expect("REPLY ", timeout_s=60, skip_other=True)[len("REPLY ") :])
    assert reply["reply_text"] == "Hello from the ROS 1 node." and reply["status"] == "completed"
    feedback = json.loads(client.expect("FEEDBACK ")[len("FEEDBACK ") :])
    assert feedback["skill"] == "patrol"
    result = json.loads(client.expect("RESULT ")[len("RESULT ") :])
    assert result["status"] == "cancelled" and "e-stop from client" in result["error"]
    assert client.wait() == 0
    host.proc.send_signal(2)  # Ctrl-C: the node shuts down cleanly
    assert host.wait(15) == 0, host.stderr()


def test_no_master_is_a_bridge_error_not_a_hang(tmp_path, child_process):
    script = (
        "from edgevox.integrations.config import Ros1BridgeConfig\n"
        "from edgevox.integrations.ros1 import Ros1Bridge\n"
        "from edgevox.runtime.bus import EventBus\n"
        "from edgevox.errors import BridgeError\n"
        f"cfg = Ros1BridgeConfig(enabled=True, master_uri='http://localhost:{free_port()}', init_timeout_s=1.0)\n"
        "try:\n"
        "    Ros1Bridge(EventBus(), cfg).start()\n"
        "except BridgeError as exc:\n"
        "    print('ERROR', exc, flush=True)\n"
    )
    child = child_process([PYTHON, "-c", script], env={"ROS_LOG_DIR": str(tmp_path), "ROS_HOME": str(tmp_path)})
    line = child.expect("ERROR ", timeout_s=30)
    assert "no ROS master answers at http://localhost:" in line and "roscore" in line
    assert child.wait() == 0


def test_hostile_messages_from_a_rospy_client_are_refused_counted_and_answered(roscore, child_process):
    """The same hostile messages as the ROS 2 test, from Debian's rospy against a real roscore."""
    host = child_process([PYTHON, str(HERE / "ros1_host.py"), "--attack"], env=roscore)
    host.expect("READY", timeout_s=60)
    client_env = dict(roscore, PYTHONPATH="")
    client = child_process(
        [DEBIAN_PYTHON, str(HERE / "ros1_client.py"), "--namespace", "/test/edgevox", "--scenario", "attack"],
        env=client_env,
    )
    answers = json.loads(client.expect("RESULTS ", timeout_s=90, skip_other=True)[len("RESULTS ") :])
    assert client.wait() == 0
    assert_attacks_answered(answers)
    host.send('counters {"oversized": 1, "too_deep": 1, "invalid": 5, "unknown_goal": 1, "rate_limited": 1}')
    report = json.loads(host.expect("COUNTERS ")[len("COUNTERS ") :])
    c = report["counters"]
    assert c["oversized"] >= 1 and c["too_deep"] >= 1 and c["invalid"] >= 5 and c["unknown_goal"] == 1, report
    assert c["rate_limited"] >= 1, report  # 800 interrupts at ~400/s, 5 per second allowed
    assert report["interrupts"] <= 5 + 5 * report["elapsed_s"] + 1 and report["texts"] == 0, report
    host.send("quit")
    assert host.expect("DONE ", skip_other=True) == "DONE clean=True"
    assert host.wait() == 0
