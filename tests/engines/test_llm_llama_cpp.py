import threading

import pytest

from edgevox.errors import EngineError
from edgevox.runtime.context import CancelToken

pytestmark = pytest.mark.models

SYSTEM = "You are a small home robot. You can move, turn and pick up objects. Answer in one short sentence."


def _messages(user: str, system: str = SYSTEM) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def test_streams_several_pieces(llama_llm):
    pieces = list(llama_llm.stream(_messages("Say hello."), max_tokens=12))
    assert len(pieces) >= 2
    assert "".join(pieces).strip()
    assert llama_llm.last_stats["completion_tokens"] == len(pieces)


def test_grammar_constrains_the_output_to_yes_or_no(llama_llm):
    grammar = 'root ::= "yes" | "no"'
    for question in ("Is water wet?", "Can you fly to the moon?"):
        out = llama_llm.complete(_messages(question + " Answer yes or no."), grammar=grammar, max_tokens=4)
        assert out in ("yes", "no")


def test_an_invalid_grammar_is_an_engine_error(llama_llm):
    with pytest.raises(EngineError, match="GBNF"):
        llama_llm.stream(_messages("hi"), grammar="root ::= (")


def test_cancellation_stops_mid_stream(llama_llm):
    token = CancelToken()
    got = []
    for piece in llama_llm.stream(_messages("Tell me a long story about a robot."), max_tokens=200, cancel=token):
        got.append(piece)
        if len(got) == 3:
            token.cancel("test")
    assert len(got) == 3
    assert llama_llm.last_stats["cancelled"] == 1.0


def test_an_already_cancelled_token_yields_nothing(llama_llm):
    token = CancelToken()
    token.cancel()
    assert list(llama_llm.stream(_messages("hi"), cancel=token)) == []


def test_the_cached_system_prompt_makes_the_second_call_much_faster(llama_llm):
    system = SYSTEM + " " + "Be polite, precise and brief; never use markdown or lists. " * 6
    other = "You are a pirate. " * 10
    list(llama_llm.stream(_messages("hi", other), max_tokens=1))  # evict whatever was cached
    list(llama_llm.stream(_messages("What can you do?", system), max_tokens=1))
    cold_s = llama_llm.last_stats["first_token_s"]
    list(llama_llm.stream(_messages("Where are you?", system), max_tokens=1))
    warm_s = llama_llm.last_stats["first_token_s"]
    # Measured ~0.3 s cold vs ~0.04 s warm for ~150 system tokens on 2 cores.
    assert warm_s < cold_s / 2, (cold_s, warm_s)


def test_two_threads_never_run_inference_at_once(llama_llm):
    results: dict[str, str] = {}
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        try:
            results[name] = llama_llm.complete(_messages(f"Say the word {name}."), max_tokens=8)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("apple", "banana")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert set(results) == {"apple", "banana"}
    assert all(results.values())


def test_count_tokens(llama_llm):
    assert llama_llm.count_tokens("") == 0
    assert 1 <= llama_llm.count_tokens("hello world") <= 4


def test_warmup_returns_seconds(llama_llm):
    assert llama_llm.warmup(SYSTEM) > 0


def test_the_engine_says_where_it_runs_and_with_how_many_threads(llama_llm):
    import llama_cpp

    from edgevox.engines.device import llm_threads

    batch = llm_threads()[1]
    assert (llama_llm.n_threads, llama_llm.n_threads_batch) == (2, batch)  # the fixture asks for 2 decode threads
    if llama_cpp.llama_supports_gpu_offload():
        assert llama_llm.device.endswith("layers)")
    else:
        assert llama_llm.describe() == f"cpu, 2 decode / {batch} batch threads"


def test_gpu_layers_on_the_installed_build_offload_or_fail_with_the_fix():
    import llama_cpp

    from edgevox.engines.llm_llama_cpp import LlamaCppLLM
    from edgevox.errors import ModelError

    if llama_cpp.llama_supports_gpu_offload():
        llm = LlamaCppLLM("smollm2-135m", n_ctx=256, n_gpu_layers=4)
        assert "(4 of 30 layers)" in llm.device
        llm.close()
    else:
        with pytest.raises(ModelError, match="set llm.gpu_layers: 0"):
            LlamaCppLLM("smollm2-135m", n_ctx=256, n_gpu_layers=4)
