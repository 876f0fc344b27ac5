"""Typed config of the bridges: the ``bridges`` section of the YAML.

Over 410 lines because it is one schema (three bridges and their shared ROS part) whose field
descriptions are the reference docs (``docs/config.md`` is generated from them); splitting it per
bridge would part the shared checks and the section that joins them.

::

    bridges:
      zenoh:
        enabled: true
        namespace: edgevox/robot1
        listen: ["tcp/127.0.0.1:7447"]
        publish_kinds: ["voice.transcript", "voice.turn_done"]
      ros2:
        enabled: true
        namespace: /robot1/edgevox
        qos: {depth: 10, reliability: reliable}
      ros1:
        enabled: false

Every model is a :class:`edgevox.config.fields.Section` (unknown keys are errors) with strict
scalars, like ``edgevox.config.schema``; every field has a description (``docs/config.md`` is
generated from them). :class:`BridgesConfig` is imported by the main schema; keep
its name stable.

Importing this module imports neither zenoh nor rclpy nor rospy.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from edgevox.config.fields import HOUR_S, Period, PosInt, RatePerSecond, Section, ShortSeconds

_TOPIC_NAME = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_ROS_NAMESPACE = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)*/?$")
KEY_CHUNK = re.compile(r"^[^*$?#\s/]+$")
"""One chunk of a Zenoh key (between slashes) that names a thing: no wildcard or special character."""
BRIDGE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
"""A bridge's id on the network, also a fleet member's certificate name."""

Seconds = ShortSeconds
"""A positive duration in seconds, at most an hour."""
MiB = 1024 * 1024


# --- ROS (shared by ROS 2 and ROS 1) ---------------------------------------------------------


def _default_publish() -> dict[str, list[str]]:
    return {
        "transcript": ["voice.transcript"],
        "reply": ["voice.turn_done"],
        "reply_chunk": ["voice.chunk"],
        "state": [
            "voice.speech_started",
            "voice.turn_started",
            "voice.interrupted",
            "voice.stopped",
            "runtime.agent_state",
            "bridge.*",
        ],
        "events": ["agent.*", "skill.*", "runtime.error"],
    }


def _check_topic(value: str) -> str:
    if not _TOPIC_NAME.match(value):
        raise ValueError(f"topic name {value!r}: use letters, digits, '_' and '/' (e.g. 'skill/goal')")
    return value


class RosTopicsConfig(Section):
    """Topic names. Relative names are put under the bridge ``namespace``; a name starting with
    ``/`` is used as is. Every message is ``std_msgs/String``."""

    publish: dict[StrictStr, list[StrictStr]] = Field(
        default_factory=_default_publish,
        description="Outgoing: topic name -> event kind patterns (shell wildcards) published on it as `Event.to_dict()` JSON.",
    )
    text_input: StrictStr = Field(
        "text_input", description='Incoming: plain text (or JSON `{"text": ...}`) handled like a typed user turn.'
    )
    say: StrictStr = Field("say", description="Incoming: text the robot speaks as is (no LLM).")
    interrupt: StrictStr = Field(
        "interrupt",
        description="Incoming: barge-in; stop speaking and generating now (`control.interrupt`). Data = reason.",
    )
    stop: StrictStr = Field(
        "stop", description="Incoming: safety stop; cancels speech, generation and running skills (`control.stop`)."
    )
    skill_goal: StrictStr = Field(
        "skill/goal", description='Incoming: `{"goal_id": "g1", "skill": "move", "args": {...}}` starts a skill.'
    )
    skill_cancel: StrictStr = Field(
        "skill/cancel", description='Incoming: `{"goal_id": "g1"}` cancels one goal; `{}` cancels every running goal.'
    )
    stop_ack: StrictStr = Field(
        "stop/ack",
        description='Outgoing: the answer to each message on `stop`, after it acted: `{"stop": <the message>, "stopped": [what was cancelled], "rate_limited": bool}`.',
    )
    say_done: StrictStr = Field(
        "say/done",
        description='Outgoing: the end of each message on `say`: `{"say": <the text>, "turn_id": n, "status": "completed" | "interrupted" | "stopped" | "cancelled" | "refused" | "failed", "error": ""}` (`refused`: nothing speakable; `failed`: the say handler raised).',
    )
    skill_feedback: StrictStr = Field(
        "skill/feedback", description='Outgoing: `{"goal_id", "skill", "feedback"}` while a goal runs.'
    )
    skill_result: StrictStr = Field(
        "skill/result",
        description='Outgoing: `{"goal_id", "skill", "status", "result", "error"}`; status: accepted, succeeded, cancelled, failed, rejected.',
    )

    @field_validator(
        "text_input",
        "say",
        "interrupt",
        "stop",
        "stop_ack",
        "say_done",
        "skill_goal",
        "skill_cancel",
        "skill_feedback",
        "skill_result",
    )
    @classmethod
    def _check_name(cls, value: str) -> str:
        return _check_topic(value)

    @field_validator("publish")
    @classmethod
    def _check_publish(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, kinds in value.items():
            _check_topic(name)
            if not kinds:
                raise ValueError(f"publish[{name!r}]: list at least one event kind pattern, e.g. 'voice.*'")
        return value


class RosQosConfig(Section):
    """QoS of every bridge topic."""

    depth: Annotated[StrictInt, Field(ge=1, le=10_000)] = Field(
        10, description="History depth per topic (ROS 1: the publisher/subscriber `queue_size`)."
    )
    reliability: Literal["reliable", "best_effort"] = Field("reliable", description="ROS 2 reliability policy.")
    durability: Literal["volatile", "transient_local"] = Field(
        "volatile", description="ROS 2 durability; `transient_local` replays the last `depth` messages to late joiners."
    )


class _RosCommon(Section):
    enabled: StrictBool = Field(False, description="Start this bridge with the application.")
    node_name: StrictStr = Field("edgevox", description="ROS node name (letters, digits and `_`).")
    namespace: StrictStr = Field("/edgevox", description="Prefix of every relative topic name, e.g. `/robot1/edgevox`.")
    topics: RosTopicsConfig = Field(default_factory=RosTopicsConfig, description="Topic names.")
    qos: RosQosConfig = Field(default_factory=RosQosConfig, description="Quality of service of every topic.")
    max_outbox: PosInt = Field(
        1000, description="Outgoing messages waiting for the ROS thread; beyond this the oldest are dropped (counted)."
    )
    max_concurrent_goals: PosInt = Field(4, description="Skill goals running at once; more are rejected.")
    skill_feedback_period_s: Annotated[StrictFloat, Field(ge=0.0, le=60.0)] = Field(
        1.0,
        description="A running goal's feedback (`agent.skill_state` running with feedback) goes out at most this often per goal, in seconds; every change of state goes out at once. 0 sends every tick.",
    )
    max_message_bytes: Annotated[StrictInt, Field(ge=64, le=64 * MiB)] = Field(
        65_536,
        description="Incoming messages longer than this (bytes of UTF-8) are refused and counted (`oversized`).",
    )
    max_depth: Annotated[StrictInt, Field(ge=2, le=200)] = Field(
        32, description="Nesting of arrays/objects an incoming JSON message may have; deeper ones are refused."
    )
    max_messages_per_s: RatePerSecond = Field(
        50.0,
        description="Incoming messages accepted per topic per second (bursts of the same size); more are dropped and counted (`rate_limited`).",
    )

    @field_validator("node_name")
    @classmethod
    def _check_node_name(cls, value: str) -> str:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value):
            raise ValueError(f"node_name {value!r}: use letters, digits and '_' (no '/' or '-')")
        return value

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        if not value.startswith("/") or not _ROS_NAMESPACE.match(value):
            raise ValueError(f"namespace {value!r}: must be absolute, like '/robot1/edgevox'")
        return value.rstrip("/") or "/"


class Ros2BridgeConfig(_RosCommon):
    """ROS 2 (rclpy) bridge."""

    rosout: StrictBool = Field(
        True,
        description="Publish edgevox's log records on `/rosout` (`rcl_interfaces/msg/Log`, at the level the process logs), where `rqt_console` and `ros2 bag` find them.",
    )
    domain_id: Annotated[StrictInt, Field(ge=0, le=232)] | None = Field(
        None, description="`ROS_DOMAIN_ID` of the bridge's own rclpy context; null = the environment's (else 0)."
    )
    localhost_only: StrictBool = Field(
        True,
        description="Limit discovery to this machine (`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`) unless the environment sets it.",
    )
    rmw_implementation: StrictStr = Field(
        "rmw_fastrtps_cpp",
        description="`RMW_IMPLEMENTATION` used when the environment names none (the ros-rclpy wheels need one).",
    )
    executor_threads: Annotated[StrictInt, Field(ge=2, le=64)] = Field(
        4,
        description="Threads of the MultiThreadedExecutor (>= 2, so a cancel is served while a goal message is handled).",
    )
    stop_service: StrictBool = Field(
        True,
        description="Also offer the stop topic's name (e.g. `/edgevox/stop`) as a `std_srvs/srv/Trigger` service: it runs the safety stop and answers what it stopped.",
    )
    diagnostics_period_s: Period | None = Field(
        1.0,
        description="Publish `diagnostic_msgs/DiagnosticArray` on `diagnostics_topic` every this many seconds (state, the last turn's latencies, supervision restarts, errors); null = never.",
    )
    diagnostics_topic: StrictStr = Field(
        "/diagnostics", description="Topic of the diagnostics (the ROS convention is `/diagnostics`)."
    )

    @field_validator("diagnostics_topic")
    @classmethod
    def _check_diagnostics_topic(cls, value: str) -> str:
        return _check_topic(value)


class Ros1BridgeConfig(_RosCommon):
    """ROS 1 (rospy) bridge."""

    master_uri: StrictStr | None = Field(
        None, description="`ROS_MASTER_URI`, e.g. `http://localhost:11311`; null = the environment's."
    )
    hostname: StrictStr | None = Field(
        "localhost", description="`ROS_HOSTNAME` advertised to peers; null = the environment's."
    )
    init_timeout_s: Seconds = Field(10.0, description="Seconds `start()` waits for the master before failing.")
    python_path: StrictStr | None = Field(
        "/usr/lib/python3/dist-packages",
        description="Where rospy and its ROS 1 messages live when not importable as is (Debian's python3-rospy); null = never add a path.",
    )


# --- Zenoh -------------------------------------------------------------------------------------


class ZenohBridgeConfig(Section):
    """Zenoh bus bridge: selected event kinds and blackboard requests cross processes."""

    enabled: StrictBool = Field(False, description="Start the Zenoh bus bridge with the application.")
    namespace: StrictStr = Field(
        "edgevox/robot",
        description="Key prefix of this robot (`<namespace>/events/<kind>`, `<namespace>/blackboard/<key>`); robots with different namespaces never see each other's events.",
    )
    bridge_id: StrictStr = Field(
        "",
        description="This bridge's id on the network (its liveliness token, the origin of what it sends, the name in stop reports). Empty: a random one per start. A fleet made by `edgevox fleet init` sets it to the member's certificate name, which its access control expects.",
    )
    fleet: StrictStr = Field(
        "",
        description="On a robot of a fleet: the operator's namespace above this one (e.g. `edgevox/site1` for a robot at `edgevox/site1/r1`). Events and stops put there reach every robot under it, and the operator's liveliness arms the dead-man. Empty: only this namespace.",
    )
    robots: StrictStr = Field(
        "",
        description="On an operator: the robots it reaches, as a key expression under `namespace` (`*`: every robot at `<namespace>/<name>`). Their events, liveliness and stop acknowledgements come in on this one session and its threads, whatever their number; `ZenohBridge.robots()` lists them. Robots set `fleet` to this namespace. Empty: only peers in `namespace`.",
    )
    mode: Literal["peer", "client"] = Field("peer", description="Zenoh session mode.")
    listen: list[StrictStr] = Field(
        default_factory=list,
        description="Endpoints to listen on, e.g. `tcp/127.0.0.1:7447`. Listen beyond loopback only with `tls/` endpoints and Zenoh `access_control` (see docs/distributed.md).",
    )
    connect: list[StrictStr] = Field(default_factory=list, description="Endpoints of peers or routers to connect to.")
    multicast_scouting: StrictBool = Field(
        False, description="Discover peers by UDP multicast. Off by default: name peers in `connect`."
    )
    gossip_scouting: StrictBool = Field(False, description="Learn about peers from other peers.")
    shared_memory: StrictBool = Field(False, description="Zenoh shared-memory transport (leaves files in /dev/shm).")
    publish_kinds: list[StrictStr] = Field(
        default_factory=list,
        description="Local event kinds (shell patterns, e.g. `voice.transcript`, `agent.*`) sent to peers.",
    )
    subscribe_kinds: list[StrictStr] = Field(
        default_factory=list, description="Event kinds from peers accepted into the local bus; nothing else crosses."
    )
    serve_blackboard: StrictBool = Field(
        False,
        description="Answer blackboard requests from peers by posting them on this runtime's blackboard, for the keys in `serve_keys` only.",
    )
    serve_keys: list[StrictStr] = Field(
        default_factory=list,
        description="Blackboard keys peers may post requests on (exact, or a prefix ending in `*`); required with `serve_blackboard`. A key that already holds a value, and reply keys (`.../reply/...`), are never written for a peer.",
    )
    forward_requests: list[StrictStr] = Field(
        default_factory=list,
        description="Blackboard request keys (exact, or a prefix ending in `*`) posted here that peers answer; such keys are never served here, so requests cannot loop.",
    )
    request_timeout_s: Seconds = Field(10.0, description="Default wait for a remote blackboard reply, in seconds.")
    max_request_timeout_s: Seconds = Field(
        30.0,
        description="Longest a peer's request may wait here for a local reply, in seconds; a larger `timeout_s` from a peer is clamped to this, a non-finite or non-positive one refused.",
    )
    max_served_requests: PosInt = Field(
        16,
        description="Peer requests waiting for a local reply at once, per entry of `serve_keys`; more are answered `busy` (counted).",
    )
    lease_s: Annotated[StrictFloat, Field(ge=0.5, le=HOUR_S)] = Field(
        10.0,
        description="A peer that sends nothing (not even keep-alives) for this long is gone: its link closes and `bridge.peer` reports `left`, in seconds. A process that exits or crashes is noticed at once (its sockets close); the lease covers a frozen process, a powered-off robot or a cut cable. Keep-alives go out 4 times per lease.",
    )
    max_inbox: PosInt = Field(
        10_000, description="Received events waiting for the local bus; beyond this the oldest are dropped (counted)."
    )
    max_inbox_bytes: Annotated[StrictInt, Field(ge=1024, le=4096 * MiB)] = Field(
        16 * MiB,
        description="Bytes of received events waiting for the local bus; beyond this the oldest are dropped (counted).",
    )
    max_payload_bytes: Annotated[StrictInt, Field(ge=1024, le=256 * MiB)] = Field(
        262_144,
        description="Largest event, request or reply accepted from a peer, in bytes; larger ones are refused and counted (`oversized`). Zenoh itself discards messages over 4 times this while reassembling them, before the bridge sees them.",
    )
    max_depth: Annotated[StrictInt, Field(ge=4, le=200)] = Field(
        32,
        description="Nesting of arrays/objects a received payload may have (the envelope takes 2); deeper ones are refused and counted (`too_deep`).",
    )
    max_control_per_s: RatePerSecond = Field(
        10.0,
        description="Control events (`control.stop`, `control.interrupt`) accepted from peers per kind per second (bursts of the same size); more are dropped and counted (`rate_limited`).",
    )
    stop_retry_s: Annotated[StrictFloat, Field(ge=0.01, le=10.0)] = Field(
        0.1,
        description="A stop sent to peers is sent again this often, in seconds, until every robot in the namespace acknowledged it or `stop_deadline_s` passed (then once a second for a minute).",
    )
    stop_deadline_s: Annotated[StrictFloat, Field(ge=0.05, le=60.0)] = Field(
        1.0,
        description="A robot that has not acknowledged a stop this long after it was sent is reported `unreachable` (a `bridge.stop_delivery` event and a warning), in seconds; a later acknowledgement reports it `late`.",
    )
    deadman: StrictBool = Field(
        True,
        description="Dead-man: when a peer that sent this robot events leaves (its process ended, or it was silent for `lease_s`), stop everything running here, as if it had sent a stop.",
    )
    zenoh_config_file: StrictStr | None = Field(
        None,
        description="A Zenoh JSON5 config file for what edgevox does not model: TLS, `access_control`, user/password auth. edgevox's own fields are applied on top (`listen`/`connect` only when not empty).",
    )
    zenoh_config: dict[StrictStr, Any] = Field(
        default_factory=dict,
        description='Zenoh settings by path, applied last (they win), e.g. `{"transport/link/tls/root_ca_certificate": "/etc/edgevox/ca.pem"}`.',
    )

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        value = value.strip("/")
        if not value or not all(KEY_CHUNK.match(c) for c in value.split("/")):
            raise ValueError(
                f"namespace {value!r}: use '/'-separated names without '*', '$', '?', '#' or spaces, e.g. 'edgevox/robot1'"
            )
        return value

    @field_validator("bridge_id")
    @classmethod
    def _check_bridge_id(cls, value: str) -> str:
        if value and not BRIDGE_ID.match(value):
            raise ValueError(f"bridge_id {value!r}: 1 to 64 letters, digits, '_', '.' or '-', e.g. 'robot1'")
        return value

    @field_validator("fleet")
    @classmethod
    def _check_fleet(cls, value: str) -> str:
        value = value.strip("/")
        if value and not all(KEY_CHUNK.match(c) for c in value.split("/")):
            raise ValueError(
                f"fleet {value!r}: the operator's namespace, '/'-separated names without '*', '$', '?', '#' or "
                f"spaces, e.g. 'edgevox/site1'"
            )
        return value

    @field_validator("robots")
    @classmethod
    def _check_robots(cls, value: str) -> str:
        value = value.strip("/")
        if value and not all(c in ("*", "**") or KEY_CHUNK.match(c) for c in value.split("/")):
            raise ValueError(
                f"robots {value!r}: a key expression under namespace, e.g. '*' (every robot at <namespace>/<name>) "
                f"or 'arm-1'; chunks are names, '*' or '**'"
            )
        return value

    @field_validator("listen", "connect")
    @classmethod
    def _check_endpoints(cls, value: list[str]) -> list[str]:
        for endpoint in value:
            if "/" not in endpoint:
                raise ValueError(f"endpoint {endpoint!r}: expected '<proto>/<address>', e.g. 'tcp/127.0.0.1:7447'")
        return value

    @field_validator("serve_keys", "forward_requests")
    @classmethod
    def _check_keys(cls, value: list[str]) -> list[str]:
        for key in value:
            body = key[:-1] if key.endswith("*") else key
            if not body.strip("/") or any(c in body for c in "*$?#") or any(c.isspace() for c in key):
                raise ValueError(
                    f"key {key!r}: list an exact blackboard key or a prefix ending in '*', e.g. 'plan' or 'planner/*' "
                    f"('*' alone would open every key)"
                )
            if "reply" in body.strip("/").split("/"):
                raise ValueError(f"key {key!r}: reply keys are written by local agents only; list the request key")
        return value

    @field_validator("zenoh_config")
    @classmethod
    def _check_zenoh_paths(cls, value: dict[str, Any]) -> dict[str, Any]:
        for path in value:
            if not path or path.startswith("/") or path.endswith("/"):
                raise ValueError(
                    f"zenoh_config key {path!r}: a Zenoh config path, e.g. 'transport/link/tls/enable_mtls'"
                )
        return value

    @model_validator(mode="after")
    def _check_serving(self) -> ZenohBridgeConfig:
        if self.fleet and not self.namespace.startswith(self.fleet + "/"):
            raise ValueError(
                f"fleet {self.fleet!r} is not above namespace {self.namespace!r}: a robot of fleet 'edgevox/site1' "
                f"has a namespace under it, e.g. 'edgevox/site1/r1'"
            )
        if self.serve_blackboard and not self.serve_keys:
            raise ValueError(
                "serve_blackboard is on but serve_keys is empty: list the keys peers may post requests on, "
                "e.g. serve_keys: ['plan'] (or switch serve_blackboard off)"
            )
        for key in self.serve_keys:
            if any(_prefix_match(key, pattern) for pattern in self.forward_requests):
                raise ValueError(
                    f"serve_keys {key!r} is also in forward_requests; a key is served or forwarded, not both"
                )
        return self


def _prefix_match(key: str, pattern: str) -> bool:
    """Whether ``key`` (itself maybe a prefix ending in ``*``) overlaps ``pattern``."""
    key_body, pattern_body = key.rstrip("*"), pattern.rstrip("*")
    if pattern.endswith("*") and key_body.startswith(pattern_body):
        return True
    if key.endswith("*") and pattern_body.startswith(key_body):
        return True
    return key == pattern


class BridgesConfig(Section):
    """Bridges that carry the bus beyond this process; each is off unless `enabled: true`."""

    ros2: Ros2BridgeConfig = Field(default_factory=Ros2BridgeConfig, description="ROS 2 (rclpy) bridge.")
    ros1: Ros1BridgeConfig = Field(default_factory=Ros1BridgeConfig, description="ROS 1 (rospy) bridge.")
    zenoh: ZenohBridgeConfig = Field(default_factory=ZenohBridgeConfig, description="Zenoh bus bridge.")
