"""The handoff protocol: an agent hands the conversation to another agent.

Over 400 lines because requesting a handoff (resolution, every refusal), applying it (state,
return stack, the message the target reads, the notification, the caller's scratch state) and
workflows with return are one protocol over the same pending table and session records, under
one lock; what travels with a handoff and its wording live in ``handoff_context.py``.

Agents get one tool, ``handoff_conversation(target, reason, summary, next_phase,
with_return, return_expected, preserve_state)``. The framework intercepts it (:meth:`HandoffHandler.request`):

* the target is resolved through aliases (case-insensitive); ``"human"`` hands the
  session to a person (the active agent is cleared and no agent answers until
  :meth:`HandoffHandler.release_human`); ``"return"`` hands back to the agent that
  handed off *with return*;
* it is refused - :class:`~edgevox.errors.HandoffError`, whose one-line message names
  the valid targets and which the ``handoff_conversation`` tool hands to the calling
  model as its result, and a :class:`~edgevox.orchestration.events.HandoffRejected`
  event - when the target is unknown, the transition is not allowed, a handoff was
  already accepted this turn (only one handoff per turn wins), or a handoff with
  return is still in progress, or its thread id is not the session it is requested in;
* an accepted handoff is the one :class:`~edgevox.agents.base.Handoff` description
  (the same the ``handoff_to_<name>`` tools produce), published (:class:`HandoffAccepted`)
  and applied to the session's :class:`ConversationState` when the turn ends
  (:meth:`commit`). Its ``timing`` is the handler's: ``"next_turn"`` under a Coordinator
  (the *next* user turn goes to the new agent), ``"same_turn"`` in a Swarm (the target
  answers the same request at once); either way the target first receives
  ``"Context from the previous agent: <summary> The last N turns: user: ... | assistant: ..."``
  (:meth:`Handoff.context`): the recent turns travel with the handoff, so the user never
  repeats themselves (``begin_turn(session, text=...)`` and ``commit(session, reply=...)``
  keep them; ``options.history_turns`` of them travel). :meth:`received` is the whole
  handoff message (OmniForge's fields: thread, user, source, target, summary, reason,
  history count, ``return_expected``, ``preserve_state``);
* once applied, :meth:`take_notice` gives the notification the user hears before the target
  speaks (``"Connecting you with billing..."``, ``options.notification``), once.

Handoff with return pushes the caller on the state's ``return_stack``; when the conversation
comes back (target ``"return"`` or a cancel), the caller's scratch state is what it was when it
handed off if the handoff asked ``preserve_state``, else fresh. Cancelling that workflow
(:meth:`cancel_workflow`) hands control back to the caller and keeps the specialist's partial
state under the session id; :meth:`resume_workflow` re-activates the specialist with that
partial state.

Thread-safety: all methods may be called from any thread; per-session data lives in
the :class:`SessionStore` and the pending-handoff table is guarded by its lock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from edgevox.agents.base import CONTEXT_PREFIX, Handoff, HandoffTiming
from edgevox.agents.events import ReplyDelta
from edgevox.errors import HandoffError
from edgevox.orchestration.events import HandoffAccepted, HandoffRejected, PhaseChanged, WorkflowSuspended
from edgevox.orchestration.handoff_context import HandoffOptions, Transcript
from edgevox.orchestration.routing import HUMAN_KEY
from edgevox.orchestration.state import ConversationPhase, ConversationState, SessionStore, phase_name

HUMAN = "human"
RETURN = "return"
SUSPENDED_RECORD = "suspended_workflow"
USER_RECORD = "handoff/user"
RECEIVED_RECORD = "handoff/received"
PRESERVED_RECORD = "handoff/preserved/{agent}"
SCRATCH_RECORD = "scratch/{agent}"
"""Where the Coordinator keeps an agent's scratch state (``ctx.state``) per session."""


@dataclass(frozen=True)
class _Pending:
    """This turn's accepted handoff and how it moves the return stack."""

    handoff: Handoff
    returning: bool
    turn_id: int

    @property
    def to_agent(self) -> str | None:
        """The agent that answers next; None for a human."""
        return None if self.handoff.target == HUMAN else self.handoff.target


class HandoffHandler:
    """Validates and applies handoffs for every session of one conversation setup.

    ``agents``: valid targets. ``aliases``: other names for them (e.g. ``"billing"`` ->
    ``"billing_agent"``). ``allowed_transitions``: ``{from_agent: targets}``; an agent not
    in the mapping may hand off to anyone (``None`` = no restriction at all).
    ``phase_of(agent)``: the phase a handoff to ``agent`` moves to when the caller gives
    no ``next_phase``. ``publish(event)``: where events go (the runtime's bus).
    ``timing``: when an accepted handoff's target answers (see the module docstring).
    ``options``: how many recent turns travel with a handoff and the notification the user
    hears (:class:`~edgevox.orchestration.handoff_context.HandoffOptions`).
    ``phase_transitions``: ``{phase: phases it may move to}`` (RoomKit's ``allowed_transitions``,
    from :meth:`ConversationPipeline.get_allowed_transitions`); a handoff whose phase (its
    ``next_phase``, else the target's) is not among the current phase's is refused.
    """

    def __init__(
        self,
        agents: Collection[str],
        store: SessionStore,
        *,
        aliases: Mapping[str, str] | None = None,
        allowed_transitions: Mapping[str, Collection[str]] | None = None,
        phase_of: Callable[[str], str | None] | None = None,
        publish: Callable[[Any], Any] | None = None,
        timing: HandoffTiming = "next_turn",
        phase_transitions: Mapping[str, Collection[str]] | None = None,
        options: HandoffOptions | None = None,
    ) -> None:
        self.agents = frozenset(agents)
        self.options = options or HandoffOptions()
        self.transcript = Transcript(store, keep=self.options.history_turns + 8)
        self._notices: dict[str, ReplyDelta] = {}
        self.phase_transitions = (
            None if phase_transitions is None else {k: tuple(v) for k, v in phase_transitions.items()}
        )
        self.timing: HandoffTiming = timing
        self.store = store
        self.aliases = {k.strip().lower(): v for k, v in (aliases or {}).items()}
        for alias, target in self.aliases.items():
            if target not in self.agents and target != HUMAN:
                raise ValueError(f"handoff alias {alias!r} -> {target!r}: unknown agent; known: {sorted(self.agents)}")
        self.allowed = (
            None if allowed_transitions is None else {k: frozenset(v) for k, v in allowed_transitions.items()}
        )
        self.phase_of = phase_of or (lambda _agent: None)
        self._publish = publish or (lambda _event: None)
        self._pending: dict[str, _Pending] = {}

    # -- resolution ------------------------------------------------------------------------

    def resolve(self, target: str) -> str | None:
        """The agent name for ``target`` (exact, alias, or case-insensitive), ``"human"``,
        ``"return"``, or None if unknown."""
        key = target.strip()
        if key in self.agents:
            return key
        low = key.lower()
        if low in (HUMAN, RETURN):
            return low
        if low in self.aliases:
            return self.aliases[low]
        for name in self.agents:
            if name.lower() == low:
                return name
        # Small models often wrap the name in words ("the chef, please"): accept the target
        # when exactly one known name or alias appears in it as a word.
        words = set(re.findall(r"[a-z0-9_\-]+", low))
        found = {n for n in self.agents if n.lower() in words}
        found |= {t for a, t in self.aliases.items() if a in words}
        found |= {HUMAN} & words
        return found.pop() if len(found) == 1 else None

    def valid_targets(self, from_agent: str) -> list[str]:
        targets = set(self.agents) - {from_agent}
        if self.allowed is not None and from_agent in self.allowed:
            targets &= self.allowed[from_agent]
        return sorted(targets) + [HUMAN]

    # -- the tool call ---------------------------------------------------------------------

    def request(
        self,
        *,
        session_id: str,
        from_agent: str,
        target: str,
        reason: str = "",
        summary: str = "",
        next_phase: str | None = None,
        with_return: bool = False,
        turn_id: int = 0,
        return_expected: bool | None = None,
        preserve_state: bool = False,
        thread_id: str | None = None,
        user_id: str | None = None,
    ) -> Handoff:
        """Validate a handoff requested by ``from_agent`` and record it for :meth:`commit`.

        OmniForge's names are accepted: ``return_expected`` is ``with_return``; ``thread_id``
        (default: ``session_id``) must be the session it is requested in; ``user_id`` defaults
        to the session's (:meth:`set_user`). The handoff carries the session's last
        ``options.history_turns`` messages (a same-turn target is given the current request
        itself as its task, so it is left out of them).

        Raises :class:`HandoffError` (after publishing ``HandoffRejected``) when it is refused.
        """
        with_return = bool(with_return or return_expected)
        with self.store.lock:
            state = self.store.state(session_id)
            resolved = self.resolve(target)
            refusal, returning = self._check(state, from_agent, target, resolved, with_return)
            if thread_id is not None and thread_id != session_id:
                refusal = (
                    f"handoff refused: its thread id {thread_id!r} is not this conversation's ({session_id!r}); "
                    "a handoff can only move the conversation it is requested in"
                )
            elif not refusal and not returning and resolved not in (None, HUMAN):
                refusal = self._check_phase(state, from_agent, resolved, next_phase)
            if refusal:
                self._publish(
                    HandoffRejected(
                        source=from_agent,
                        session_id=session_id,
                        from_agent=from_agent,
                        requested_target=target,
                        reason=refusal,
                    )
                )
                raise HandoffError(refusal)
            if returning:
                resolved = state.return_stack[-1]
            assert resolved is not None  # _check refused an unknown target
            handoff = Handoff(
                from_agent=from_agent,
                target=resolved,
                timing=self.timing,
                reason=reason,
                summary=summary,
                next_phase=phase_name(next_phase) or None,
                with_return=with_return,
                thread_id=session_id,
                user_id=self.user_of(session_id) if user_id is None else user_id,
                preserve_state=preserve_state,
                recent=self.transcript.recent(
                    session_id, self.options.history_turns, before_current=self.timing == "same_turn"
                ),
            )
            self._pending[session_id] = _Pending(handoff, returning, turn_id)
            to_agent = None if resolved == HUMAN else resolved
        self._publish(
            HandoffAccepted(
                source=from_agent,
                session_id=session_id,
                from_agent=from_agent,
                to_agent=to_agent or "",
                reason=reason,
                summary=summary,
                next_phase=phase_name(next_phase),
                with_return=with_return,
                thread_id=session_id,
                user_id=handoff.user_id,
                source_agent=from_agent,
                target_agent=handoff.target,
                history_count=handoff.history_count,
                return_expected=with_return,
                preserve_state=preserve_state,
            )
        )
        return handoff

    def configure(self, options: HandoffOptions) -> None:
        """Use ``options`` from now on (an application sets them once, before the first turn)."""
        with self.store.lock:
            self.options = options
            self.transcript = Transcript(self.store, keep=options.history_turns + 8)

    def set_user(self, session_id: str, user_id: str) -> None:
        """Who the user of ``session_id`` is (every later handoff of the session carries it)."""
        self.store.put_record(session_id, USER_RECORD, {"user_id": user_id} if user_id else None)

    def user_of(self, session_id: str) -> str:
        """The user id set for ``session_id`` ("" if none)."""
        return str((self.store.get_record(session_id, USER_RECORD) or {}).get("user_id", ""))

    def notification(self, handoff: Handoff) -> str:
        """What the user hears when ``handoff`` is accepted ("Connecting you with billing..."),
        "" when notifications are off (``options.notify``)."""
        return self.options.notice(target=handoff.target, source=handoff.from_agent, reason=handoff.reason)

    def take_notice(self, session_id: str) -> ReplyDelta | None:
        """The notification of the handoff :meth:`commit` applied for ``session_id``, once (None
        if there is none): the orchestration yields it, before the target speaks, as a reply
        piece the voice loop speaks. Its text has a space on each side (the voice loop joins
        pieces as they come); add it to a reply text with ``(reply + notice.text).strip()``."""
        with self.store.lock:
            return self._notices.pop(session_id, None)

    def received(self, session_id: str) -> Handoff | None:
        """The last handoff applied in ``session_id``: what its target reads, every field of
        the handoff message (thread, user, source, target, summary, reason, recent turns...)."""
        record = self.store.get_record(session_id, RECEIVED_RECORD)
        return None if record is None else Handoff.from_message(record)

    def accepted_message(self, handoff: Handoff) -> str:
        """What the handing agent reads when its handoff was accepted."""
        who = "a human operator" if handoff.target == HUMAN else handoff.target
        when = "takes the next turn" if handoff.timing == "next_turn" else "answers now"
        return f"Handoff to {who} accepted; {who} {when}."

    def _check(
        self, state: ConversationState, from_agent: str, target: str, resolved: str | None, with_return: bool
    ) -> tuple[str, bool]:
        """("", returning) if allowed, else (reason, False)."""
        pending = self._pending.get(state.session_id)
        if pending is not None:
            return (
                f"handoff to {target!r} refused: a handoff from {pending.handoff.from_agent} to "
                f"{pending.handoff.target} is already in progress this turn (only one handoff per turn)",
                False,
            )
        if resolved is None:
            return (
                f"handoff refused: unknown target {target!r}; valid targets: {', '.join(self.valid_targets(from_agent))}",
                False,
            )
        returning = resolved == RETURN or (bool(state.return_stack) and resolved == state.return_stack[-1])
        if resolved == RETURN and not state.return_stack:
            return (f"handoff refused: {from_agent} has no agent to return to (no handoff with return is open)", False)
        if with_return and state.return_stack:
            return (
                f"handoff to {target!r} refused: a handoff with return from {state.return_stack[-1]} is still "
                f"in progress; finish it (target 'return') or cancel it before starting another",
                False,
            )
        if resolved == from_agent:
            return (f"handoff refused: {from_agent} is already handling this conversation", False)
        if not returning and resolved != HUMAN and self.allowed is not None and from_agent in self.allowed:
            if resolved not in self.allowed[from_agent]:
                allowed = ", ".join(sorted(self.allowed[from_agent])) or "none"
                return (
                    f"handoff refused: transition from {from_agent} to {resolved} is not allowed; "
                    f"allowed targets: {allowed}, {HUMAN}",
                    False,
                )
        return "", returning

    def _check_phase(self, state: ConversationState, from_agent: str, target: str, next_phase: str | None) -> str:
        """The refusal when the phase the handoff moves to (``next_phase``, else the target's) is not
        one the current phase may move to (``phase_transitions``), else ""."""
        if self.phase_transitions is None:
            return ""
        current = state.phase if state.phase in self.phase_transitions else self.phase_of(from_agent)
        new = phase_name(next_phase) or self.phase_of(target)
        if current is None or current not in self.phase_transitions or new is None:
            return ""
        allowed = self.phase_transitions[current]
        if new in allowed:
            return ""
        return (
            f"handoff refused: phase {current!r} may move to {', '.join(repr(p) for p in allowed) or 'no other phase'}, "
            f"not {new!r}; pick one of those as next_phase"
        )

    # -- applying --------------------------------------------------------------------------

    def begin_turn(self, session_id: str, text: str | None = None) -> None:
        """Forget any handoff left pending from an earlier, aborted turn. ``text``: the user's
        words opening this turn, kept for the recent turns a handoff carries (give it once
        per user turn; None for another hop of the same turn)."""
        with self.store.lock:
            self._pending.pop(session_id, None)
            self._notices.pop(session_id, None)
            if text is not None:
                self.transcript.user(session_id, text)

    def pending(self, session_id: str) -> Handoff | None:
        """This turn's accepted handoff, not yet applied."""
        with self.store.lock:
            pending = self._pending.get(session_id)
            return pending.handoff if pending is not None else None

    def commit(self, session_id: str, *, reply: str = "") -> ConversationState | None:
        """Apply this turn's accepted handoff to the session state (None if there was none).

        ``reply``: what the agent of this turn (or hop) said, kept for the recent turns a later
        handoff carries. An applied handoff leaves its notification for :meth:`take_notice` and
        its message for :meth:`received`; with return, it keeps the handing agent's scratch
        state for the return when ``preserve_state`` is set (without it, that agent starts
        fresh when the conversation comes back)."""
        with self.store.lock:
            if reply:
                self.transcript.reply(session_id, reply)
            pending = self._pending.pop(session_id, None)
            if pending is None:
                return None
            handoff = pending.handoff
            before = self.store.state(session_id)
            stack = before.return_stack
            if pending.returning:
                stack = stack[:-1]
                self._restore_caller(session_id, handoff.target)
            elif handoff.with_return:
                stack = stack + (handoff.from_agent,)
                self._keep_caller(session_id, handoff)
            phase = handoff.next_phase
            if phase is None and pending.to_agent is None:
                phase = ConversationPhase.ESCALATION.value
            if phase is None and pending.to_agent is not None:
                phase = self.phase_of(pending.to_agent)
            context = handoff.context()
            after = before.transition(
                to_phase=phase,
                to_agent=pending.to_agent,
                reason=handoff.reason or "handoff",
                handoff=True,
                context=context,
                return_stack=stack,
            )
            if pending.to_agent is None:
                after = after.with_data(**{HUMAN_KEY: True})
            self.store.save_state(after)
            self.store.put_record(session_id, RECEIVED_RECORD, handoff.message())
            notice = self.notification(handoff)
            if notice:
                # Spaced like a sentence of its own: the voice loop joins reply pieces as they come.
                self._notices[session_id] = ReplyDelta(source="handoff", agent=handoff.target, text=f" {notice} ")
        self._publish_change(before, after, handoff.reason or "handoff")
        return after

    def _keep_caller(self, session_id: str, handoff: Handoff) -> None:
        """A handoff with return: remember whether (and what) the caller's scratch state is given
        back on return. Caller holds the store lock."""
        caller = handoff.from_agent
        scratch = self.store.get_record(session_id, SCRATCH_RECORD.format(agent=caller)) or {}
        record = {"preserve": handoff.preserve_state, "scratch": scratch if handoff.preserve_state else {}}
        self.store.put_record(session_id, PRESERVED_RECORD.format(agent=caller), record)

    def _restore_caller(self, session_id: str, caller: str) -> None:
        """The conversation returns to ``caller``: its scratch state as it was when it handed off
        (``preserve_state``), else a fresh one. Caller holds the store lock."""
        key = PRESERVED_RECORD.format(agent=caller)
        record = self.store.get_record(session_id, key)
        if record is None:
            return  # not a return this handler set up
        scratch = dict(record.get("scratch") or {}) if record.get("preserve") else None
        self.store.put_record(session_id, SCRATCH_RECORD.format(agent=caller), scratch)
        self.store.put_record(session_id, key, None)

    def release_human(self, session_id: str, *, to_agent: str | None = None, reason: str = "human released") -> None:
        """End a human takeover; the next turn is routed normally (or to ``to_agent``)."""

        def release(state: ConversationState) -> ConversationState:
            data = {k: v for k, v in state.data.items() if k != HUMAN_KEY}
            new = state.transition(to_agent=to_agent, reason=reason)
            return ConversationState.from_dict({**new.to_dict(), "data": data})

        self.store.update(session_id, release)

    # -- workflows with return --------------------------------------------------------------

    def cancel_workflow(
        self, session_id: str, *, partial: Mapping[str, Any] | None = None, reason: str = "cancelled"
    ) -> ConversationState | None:
        """Cancel the open handoff-with-return: keep the specialist's ``partial`` state under
        the session id and hand control back to the caller. None if nothing was open."""
        with self.store.lock:
            before = self.store.state(session_id)
            if not before.return_stack or before.active_agent is None:
                return None
            caller = before.return_stack[-1]
            record = {
                "agent": before.active_agent,
                "phase": before.phase,
                "return_to": caller,
                "partial": dict(partial or {}),
                "reason": reason,
            }
            self.store.put_record(session_id, SUSPENDED_RECORD, record)
            self._pending.pop(session_id, None)
            after = before.transition(
                to_phase=self.phase_of(caller), to_agent=caller, reason=reason, return_stack=before.return_stack[:-1]
            )
            self.store.save_state(after)
            self._restore_caller(session_id, caller)
        self._publish(
            WorkflowSuspended(
                source="handoff",
                session_id=session_id,
                workflow=str(record["agent"]),
                completed_steps=len(record["partial"]),
                reason=reason,
            )
        )
        self._publish_change(before, after, reason)
        return after

    def suspended(self, session_id: str) -> dict[str, Any] | None:
        """The suspended workflow record of this session, if any."""
        return self.store.get_record(session_id, SUSPENDED_RECORD)

    def resume_workflow(self, session_id: str, *, reason: str = "resumed") -> dict[str, Any] | None:
        """Re-activate the suspended specialist (with return to its caller); returns its
        saved partial state, or None if nothing was suspended."""
        with self.store.lock:
            record = self.store.get_record(session_id, SUSPENDED_RECORD)
            if record is None:
                return None
            before = self.store.state(session_id)
            after = before.transition(
                to_phase=record["phase"],
                to_agent=record["agent"],
                reason=reason,
                context=f"{CONTEXT_PREFIX}resuming an interrupted task; partial state: {record['partial']}",
                return_stack=before.return_stack + (record["return_to"],),
            )
            self.store.save_state(after)
            self.store.put_record(session_id, SUSPENDED_RECORD, None)
        self._publish_change(before, after, reason)
        return record["partial"]

    def _publish_change(self, before: ConversationState, after: ConversationState, reason: str) -> None:
        self._publish(
            PhaseChanged(
                source="handoff",
                session_id=after.session_id,
                from_phase=before.phase,
                to_phase=after.phase,
                from_agent=before.active_agent or "",
                to_agent=after.active_agent or "",
                reason=reason,
            )
        )
