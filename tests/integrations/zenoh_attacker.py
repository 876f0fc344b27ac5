"""A hostile Zenoh peer for the hardening tests (run by test_zenoh_hardening.py, not collected).

It speaks raw Zenoh (no edgevox bridge, so nothing of ours filters what it sends) and is
driven by one JSON command per stdin line; it answers with lines on stdout:

    -> READY                                   session open (or OPEN_FAILED <reason>)
    <- {"op": "put", "key": K, "event": {...}, "repeat": N, "pad": P}
                                                an edgevox envelope with ``event`` (``pad``
                                                bytes of "x" appended to its ``text`` or
                                                ``reason``), put ``repeat`` times
    <- {"op": "raw", "key": K, "text": T, "size": S}
                                                T as is, or S bytes of a JSON string
    <- {"op": "deep", "key": K, "depth": D}     a transcript whose ``source`` is D nested lists
    -> DONE <op>
    <- {"op": "query", "id": I, "key": K, "body": {...} | null, "timeout": T}
    -> QUERYING <id>                            at once; the query runs on its own thread
    -> REPLY <id> {"ok": ... | "err": ... | "none": true}
    <- {"op": "quit"}

Options: ``--connect`` endpoints, ``--set PATH=JSON`` Zenoh settings (TLS certificates),
``--must-connect`` (fail to open unless a connection is made within ``--connect-timeout-ms``),
``--wait-token KEY`` (say READY only once the robot's liveliness token is seen, so its
subscriber and queryable are known here and a put cannot go nowhere).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

import zenoh

_print_lock = threading.Lock()


def say(line: str) -> None:
    with _print_lock:
        print(line, flush=True)


def envelope(event: dict, pad: int = 0) -> bytes:
    event = dict(event)
    if pad:
        field = "reason" if event.get("kind", "").startswith("control.") else "text"
        event[field] = str(event.get(field, "")) + "x" * pad
    return json.dumps({"v": 1, "origin": "attacker", "event": event}).encode()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connect", action="append", required=True)
    parser.add_argument("--set", action="append", default=[], help="PATH=JSON Zenoh setting")
    parser.add_argument("--must-connect", action="store_true")
    parser.add_argument("--connect-timeout-ms", type=int, default=10_000)
    parser.add_argument("--wait-token", help="liveliness key to see before READY (the robot's bridge is up)")
    args = parser.parse_args()

    conf = zenoh.Config()
    settings = {
        "mode": "peer",
        "listen/endpoints": [],
        "connect/endpoints": args.connect,
        "scouting/multicast/enabled": False,
        "scouting/gossip/enabled": False,
        "transport/shared_memory/enabled": False,
    }
    if args.must_connect:
        settings.update({"connect/exit_on_failure": True, "connect/timeout_ms": args.connect_timeout_ms})
    for item in args.set:
        path, _, value = item.partition("=")
        settings[path] = json.loads(value)
    for path, value in settings.items():
        conf.insert_json5(path, json.dumps(value))
    try:
        session = zenoh.open(conf)
    except Exception as exc:  # noqa: BLE001 - reported to the test
        say(f"OPEN_FAILED {exc}")
        return 0
    if args.wait_token:
        seen = threading.Event()
        token_sub = session.liveliness().declare_subscriber(args.wait_token, lambda _s: seen.set(), history=True)
        if not seen.wait(30):
            say(f"NO_TOKEN {args.wait_token}")
            return 1
        token_sub.undeclare()
    say("READY")
    block = zenoh.CongestionControl.BLOCK  # large messages must arrive, not be dropped here
    threads: list[threading.Thread] = []

    def query(qid: str, key: str, body: object, timeout: float) -> None:
        payload = None if body is None else json.dumps(body).encode()
        result: dict = {"none": True}
        for reply in session.get(key, payload=payload, timeout=timeout):
            if reply.ok is not None:
                result = {"ok": json.loads(reply.ok.payload.to_bytes())}
            else:
                result = {"err": json.loads(reply.err.payload.to_bytes())}
            break
        say(f"REPLY {qid} {json.dumps(result)}")

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "quit":
            break
        if op == "put":
            data = envelope(cmd["event"], cmd.get("pad", 0))
            for _ in range(cmd.get("repeat", 1)):
                session.put(cmd["key"], data, congestion_control=block)
        elif op == "raw":
            text = cmd.get("text")
            data = text.encode() if text is not None else json.dumps("x" * cmd["size"]).encode()
            session.put(cmd["key"], data, congestion_control=block)
        elif op == "deep":
            depth = cmd["depth"]
            event = '{"kind": "voice.transcript", "text": "deep", "source": ' + "[" * depth + "]" * depth + "}"
            payload = ('{"v": 1, "origin": "attacker", "event": ' + event + "}").encode()
            session.put(cmd["key"], payload, congestion_control=block)
        elif op == "query":
            args_ = (cmd["id"], cmd["key"], cmd.get("body"), cmd.get("timeout", 10.0))
            thread = threading.Thread(target=query, args=args_, name=f"query-{cmd['id']}")
            threads.append(thread)
            thread.start()
            say(f"QUERYING {cmd['id']}")
            continue
        say(f"DONE {op}")
    for thread in threads:
        thread.join(30)
    session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
