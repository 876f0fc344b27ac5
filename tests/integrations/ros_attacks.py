"""Hostile messages for the ROS bridge tests (not collected): imported by ros2_client.py and
ros1_client.py, which run under different Pythons, so only the standard library is used.

Each item is ``(topic relative to the bridge namespace, String data)``. The bridge must
refuse all of them, count them and answer the goal and cancel ones on ``skill/result``.
"""

from __future__ import annotations

ATTACKS = [
    ("text_input", "x" * 1_000_000),  # over max_message_bytes
    ("skill/goal", '{"goal_id": "deep", "skill": "wave", "args": ' + "[" * 5000 + "]" * 5000 + "}"),
    ("skill/goal", '{"goal_id": "nan", "skill": "wave", "args": {"times": NaN}}'),
    ("skill/goal", '{"goal_id": 5, "skill": "wave"}'),
    ("skill/goal", '{"goal_id": "extra", "skill": "wave", "args": {"times": 1}, "priority": 9}'),
    ("skill/cancel", '{"goal_id": "ghost"}'),
    ("skill/cancel", "[1, 2]"),
    ("text_input", '{"text": "hi", "lang": "en"}'),
]
FLOOD_TOPIC, FLOOD_COUNT, FLOOD_GAP_S = "interrupt", 800, 0.002
"""The flood: FLOOD_COUNT messages about FLOOD_GAP_S apart (~400/s, about 2 s). Paced, so that
DDS's and rospy's depth-10 queues do not drop most of it before the bridge sees it; long enough
that the bridge's reader for this topic, which DDS may match only after the client's writer has
started (discovery is per side), still gets well over a second of it (a CI run with a 0.5 s flood
saw 6 messages arrive and none rate-limited)."""
ANSWERED = 6
"""How many of ATTACKS are answered on skill/result (the goals and cancels)."""
TOPICS = sorted({topic for topic, _ in ATTACKS} | {FLOOD_TOPIC})


def assert_attacks_answered(answers: list[dict]) -> None:
    """What a bridge must have answered to ATTACKS (the answers a client read on skill/result)."""
    expected = [
        ("rejected", "", "goal message refused: payload is nested too deeply (limit 32)"),
        ("rejected", "nan", "goal message refused: payload is not valid JSON: NaN is not a number JSON allows"),
        ("rejected", "", "goal message refused: field 'goal_id': Input should be a valid string (got 5)"),
        ("rejected", "extra", "goal message refused: unknown field 'priority'"),
        ("cancel_rejected", "ghost", "no running goal 'ghost' was started through this bridge"),
        ("cancel_rejected", "", "cancel message refused: expected a JSON object, got list"),
    ]
    assert len(answers) == len(expected), answers
    for status, goal_id, error in expected:
        assert any(
            (a["status"], a["goal_id"]) == (status, goal_id) and a["error"].startswith(error) for a in answers
        ), (error, answers)
