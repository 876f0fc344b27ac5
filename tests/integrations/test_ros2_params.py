"""The config keys a ROS 2 node offers as parameters: documented, validated like the YAML, live
ones applied to the running application, the others refused while it runs (no rclpy needed)."""

from __future__ import annotations

import re
import threading

from edgevox.app import App, Engines
from edgevox.integrations.ros2_params import PARAMETERS, READ_ONLY, ConfigSource, ParameterBinding, apply_live
from edgevox.testing import ScriptedLLM

from .conftest import REPO_ROOT

CONFIG = """\
name: params
audio: {input: {source: text}, output: {sink: none}}
agents:
  chat: {}
  terse: {max_tokens: 16}
"""


def test_every_parameter_is_in_the_docs_table_with_whether_it_changes_live():
    text = (REPO_ROOT / "docs" / "ros.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z0-9_.]+)` \| [a-z ]+ \| (\*\*yes\*\*|no) \|", text, flags=re.M))
    assert rows == {p.key: "**yes**" if p.live else "no" for p in PARAMETERS}


def test_live_keys_reach_the_running_agents_and_read_only_ones_are_refused_while_it_runs(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    source = ConfigSource(str(path))
    config = source.load()
    app = App.build(config, engines=Engines(llm=ScriptedLLM(default="ok")))
    running = threading.Event()
    running.set()
    binding = ParameterBinding(
        source, {}, running=running.is_set, apply=lambda cfg, keys: apply_live(app, cfg, keys), config=config
    )
    try:
        assert binding.check_and_apply({"llm.temperature": 0.7, "llm.max_tokens": 99}) == (True, "")
        assert app.agents["chat"].temperature == 0.7 and app.agents["chat"].reply_max_tokens == 99
        assert app.agents["terse"].reply_max_tokens == 16  # its own key still wins over llm:

        ok, reason = binding.check_and_apply({"llm.max_tokens": 0})
        assert not ok and "llm.max_tokens = 0" in reason and app.agents["chat"].reply_max_tokens == 99
        ok, reason = binding.check_and_apply({"safety.stop_phrases": ["halt"]})
        assert not ok and reason.startswith(f"safety.stop_phrases: {READ_ONLY}")
        ok, reason = binding.check_and_apply({"bridges.ros2.diagnostics_period_s": 0.0})
        assert ok and binding.config.bridges.ros2.diagnostics_period_s is None  # 0 stands for null

        running.clear()  # a managed node before configure: every key may be set, used later
        assert binding.check_and_apply({"safety.stop_phrases": ["halt", "freeze"]}) == (True, "")
        assert binding.config.safety.stop_phrases == ["halt", "freeze"]
        assert source.load(binding.params).safety.stop_phrases == ["halt", "freeze"]
    finally:
        assert app.stop(2.0)
