"""The review Loop with RoomKit's meaning (issue 13): ``strategy`` is how reviewers run
(sequential: each sees the earlier reviewers' feedback; parallel: all at once on the same
draft), ``reviewer=`` is the one-reviewer shorthand, vote counting is ``approval``, and a
review approves only when it says so ("NOT APPROVED" is not approval), through the class
and through YAML."""

from __future__ import annotations

import threading

import pytest

from edgevox.errors import Cancelled, ConfigError
from edgevox.orchestration import Loop, OrchestrationConfig, build_orchestration, parse_verdict
from edgevox.orchestration.events import TurnAnswered
from edgevox.runtime.context import AgentContext

# What small models really write when asked to "reply APPROVED if the answer is good".
APPROVING = [
    "APPROVED",
    "**APPROVED**",
    "Approved.",
    "approved, looks right",
    "Verdict: **Approved** \u2705",
    "The answer is clear and polite.\n\nAPPROVED",
    "LGTM",
    "I approve.",
    "Approved? Yes.",
    "No issues found, approved.",
]
NOT_APPROVING = [
    "NOT APPROVED",
    "Not approved: fix the date.",
    "**Not Approved** - too long",
    "- Not approved\n- The tone is rude",
    "I can't approve this yet: it is too long.",
    "I can\u2019t approve it.",
    "I do not think this should be approved.",
    "unapproved",
    "Approved? No.",
    "Approved: no",
    "Rejected. Say seven, not 7.",
    "It cannot be approved until the date is right.",
    "Good start, but not approved.",
    "Reply APPROVED if the answer is good.",  # the instruction echoed back
    "Approved once you fix the typo.",
    "Almost approved.",
    "Approved?",
    "Too shouty.",
    "",
]


@pytest.mark.parametrize("review", APPROVING)
def test_reviews_that_approve(review):
    assert parse_verdict(review).approved, parse_verdict(review)


@pytest.mark.parametrize("review", NOT_APPROVING)
def test_reviews_that_do_not_approve(review):
    verdict = parse_verdict(review)
    assert not verdict.approved and verdict.kind in ("rejected", "unclear"), verdict


def test_a_negated_approval_is_a_rejection_and_a_question_is_unclear():
    assert (parse_verdict("NOT APPROVED").kind, parse_verdict("NOT APPROVED").why) == ("rejected", "not approved")
    assert parse_verdict("Approved?").kind == "unclear"
    assert parse_verdict("The answer is long.").why == "no verdict"


def writer(Scripted):
    return Scripted("writer", lambda t, c: "Dinner is at seven." if "Reviewer feedback" in t else "DINNER AT 7!!!")


def test_not_approved_is_not_approval_and_its_feedback_reaches_the_next_draft(Scripted):
    # Before issue 13 "NOT APPROVED" contained "APPROVED": the shouty first draft was shipped.
    w = writer(Scripted)
    tone = Scripted("tone", lambda t, c: "APPROVED" if "seven" in t else "NOT APPROVED: too shouty.")
    result = Loop(w, [tone]).run("announce dinner", AgentContext())
    assert (result.text, result.data["approved"], result.data["iteration"]) == ("Dinner is at seven.", True, 2)
    assert "- tone: NOT APPROVED: too shouty." in w.tasks[1]
    assert result.data["reviews"] == [
        {"reviewer": "tone", "verdict": "approved", "why": "approved", "text": "APPROVED"}
    ]


def test_the_single_reviewer_shorthand(Scripted):
    result = Loop(writer(Scripted), reviewer=Scripted("tone", "**Approved**"), max_iterations=1).run(
        "x", AgentContext()
    )
    assert result.data["approved"] is True and [s.agent for s in result.steps] == ["writer", "tone"]
    with pytest.raises(ValueError, match="not both"):
        Loop(writer(Scripted), [Scripted("a")], reviewer=Scripted("b"))
    with pytest.raises(ValueError, match="at least one reviewer"):
        Loop(writer(Scripted))


def test_sequential_reviewers_see_the_earlier_reviewers_feedback(Scripted):
    clarity = Scripted("clarity", lambda t, c: "APPROVED" if "seven" in t else "Say seven, not 7.")
    tone = Scripted("tone", lambda t, c: "APPROVED" if "seven" in t.split("---")[0] else "Too shouty.")
    result = Loop(writer(Scripted), [clarity, tone], strategy="sequential").run("announce dinner", AgentContext())
    assert result.data["approved"] is True
    # Draft 1: tone's review request carries clarity's feedback; clarity's never carries tone's.
    assert "--- clarity feedback ---\nSay seven, not 7." in tone.tasks[0]
    assert "tone" not in clarity.tasks[0]
    # Draft 2: both approve; an approval is not passed on as feedback.
    assert "--- clarity feedback ---" not in tone.tasks[1]


def test_no_strategy_means_sequential_as_in_roomkit(Scripted):
    loop = Loop(writer(Scripted), [Scripted("a"), Scripted("b")])
    assert loop.strategy == "sequential" and loop.approval == "all"


def test_parallel_reviewers_really_run_at_once_on_the_same_draft(Scripted):
    # Each reviewer waits until the other one has started: run one after the other, they
    # would both time out at the barrier and the draft would not be approved.
    barrier = threading.Barrier(2, timeout=5)

    def review(t, c):
        barrier.wait()
        return "APPROVED" if "seven" in t else "Needs work."

    a, b = Scripted("clarity", review), Scripted("tone", review)
    result = Loop(writer(Scripted), [a, b], strategy="parallel").run("announce dinner", AgentContext())
    assert (result.data["approved"], result.data["iteration"]) == (True, 2)
    assert a.tasks == b.tasks  # the same request, no one's feedback in the other's
    assert "feedback ---" not in a.tasks[0]


def test_parallel_reviewers_stop_with_the_turn(Scripted):
    ctx = AgentContext()
    started = threading.Barrier(3, timeout=5)

    def review(t, c):
        started.wait()
        c.cancel_token.wait(5)
        return "APPROVED"

    def cancel_when_both_started():
        started.wait()
        ctx.cancel_token.cancel("user said stop")

    stopper = threading.Thread(target=cancel_when_both_started)
    stopper.start()
    a, b = Scripted("a", review), Scripted("b", review)
    with pytest.raises(Cancelled, match="user said stop"):
        Loop(writer(Scripted), [a, b], strategy="parallel").run("x", ctx)
    stopper.join(5)
    assert len(a.tasks) == len(b.tasks) == 1  # both were joined (the thread guard checks none is left)


@pytest.mark.parametrize(("approval", "approved"), [("all", False), ("any", True), ("majority", True)])
def test_approval_counts_the_votes(Scripted, approval, approved):
    reviewers = [Scripted("a", "APPROVED"), Scripted("b", "Approved."), Scripted("c", "NOT APPROVED")]
    result = Loop(Scripted("w", "text"), reviewers, approval=approval, max_iterations=1).run("x", AgentContext())
    assert result.data["approved"] is approved


def test_vote_words_as_strategy_say_where_they_went(Scripted):
    with pytest.raises(ValueError, match="approval='any'"):
        Loop(Scripted("w"), [Scripted("r")], strategy="any")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'sequential', 'parallel'"):
        Loop(Scripted("w"), [Scripted("r")], strategy="chain")  # type: ignore[arg-type]


# -- YAML ----------------------------------------------------------------------------------------


def test_yaml_loop_parallel_with_one_reviewer_and_approval(Scripted, bus, recorded, of_kind):
    barrier = threading.Barrier(2, timeout=5)

    def review(t, c):
        barrier.wait()
        return "Approved." if "seven" in t else "Not approved: too shouty."

    agents = {"writer": writer(Scripted), "clarity": Scripted("clarity", review), "tone": Scripted("tone", review)}
    section = {
        "strategy": "loop",
        "loop": {"agent": "writer", "reviewers": ["clarity", "tone"], "strategy": "parallel", "approval": "all"},
    }
    coord = build_orchestration(section, agents, bus=bus)
    loop = coord.strategy_for("s")
    assert isinstance(loop, Loop) and (loop.strategy, loop.approval) == ("parallel", "all")
    assert coord.run("announce dinner", AgentContext(session_id="s", bus=bus)).text == "Dinner is at seven."
    answered = of_kind(recorded, TurnAnswered)
    assert [(e.agent, e.strategy) for e in answered] == [("writer", "loop")]

    one = build_orchestration({"strategy": "loop", "loop": {"agent": "writer", "reviewer": "clarity"}}, agents)
    single = one.strategy_for("s")
    assert isinstance(single, Loop) and [r.name for r in single.reviewers] == ["clarity"]
    assert single.strategy == "sequential"


@pytest.mark.parametrize(
    ("loop", "message"),
    [
        ({"agent": "w", "reviewers": ["r"], "strategy": "all"}, "write `approval: all`"),
        ({"agent": "w", "reviewers": ["r"], "reviewer": "r"}, "not both"),
        ({"agent": "w"}, "no reviewer"),
        ({"agent": "w", "reviewer": "r", "approval": "most"}, "approval"),
    ],
)
def test_yaml_loop_mistakes_are_clear(loop, message):
    with pytest.raises(ValueError, match=message):
        OrchestrationConfig.model_validate({"strategy": "loop", "loop": loop})


def test_yaml_loop_unknown_reviewer_names_the_agents(Scripted):
    with pytest.raises(ConfigError, match="no agent named 'edtor'; did you mean 'editor'"):
        build_orchestration(
            {"strategy": "loop", "loop": {"agent": "w", "reviewer": "edtor"}},
            {"w": Scripted("w"), "editor": Scripted("editor")},
        )
