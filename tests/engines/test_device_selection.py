"""Thread counts and GPU selection: the rules in edgevox.engines.device, and the LLM/TTS
engines and config wiring that use them, tested on the CPU with fake llama_cpp/onnxruntime
modules (no GPU needed, no model loaded)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from edgevox.engines import device
from edgevox.errors import ArgumentError, ModelError

# --- thread rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cores", "decode", "batch"),
    [(1, 1, 1), (2, 1, 1), (4, 3, 3), (6, 5, 5), (8, 4, 7), (16, 8, 15), (64, 32, 63)],
)
def test_auto_llm_threads_leave_one_core_and_stop_at_half_from_eight(cores, decode, batch):
    assert device.llm_threads("auto", "auto", cores=cores) == (decode, batch)


def test_explicit_llm_threads_are_kept_even_beyond_the_cores():
    assert device.llm_threads(2, 3, cores=2) == (2, 3)
    assert device.llm_threads(2, "auto", cores=2) == (2, 1)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "two", None])
def test_a_thread_count_that_is_not_auto_or_positive_is_an_argument_error(bad):
    with pytest.raises(ArgumentError, match="llm.threads"):
        device.llm_threads(bad, cores=2)


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 2), (4, 2), (32, 2)])
def test_auto_tts_threads_are_two_or_one_on_a_single_core(cores, threads):
    assert device.onnx_threads("auto", cores=cores) == threads
    assert device.onnx_threads(3, cores=cores) == 3


def test_usable_cores_follow_the_affinity_mask(monkeypatch):
    monkeypatch.setattr(device.os, "sched_getaffinity", lambda pid: {0, 3}, raising=False)
    assert device.usable_cores() == 2
    assert device.llm_threads() == (1, 1)


# --- GPU rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "supported", "layers"),
    [("auto", True, -1), ("auto", False, 0), (0, False, 0), (0, True, 0), (-1, True, -1), (12, True, 12)],
)
def test_gpu_layers_auto_offloads_all_only_when_the_build_can(requested, supported, layers):
    assert device.llm_gpu_layers(requested, offload_supported=supported) == layers


@pytest.mark.parametrize("requested", [-1, 20])
def test_asking_for_gpu_layers_from_a_cpu_build_says_what_to_install_in_one_line(requested):
    with pytest.raises(ModelError) as err:
        device.llm_gpu_layers(requested, offload_supported=False)
    message = str(err.value)
    assert "\n" not in message
    assert f"llm.gpu_layers = {requested}" in message
    assert "docs/engines.md" in message and "llm.gpu_layers: 0" in message


def test_gpu_layers_below_minus_one_are_an_argument_error():
    with pytest.raises(ArgumentError, match="gpu_layers"):
        device.llm_gpu_layers(-2, offload_supported=True)


def _fake_llama_cpp(*, offload: bool, system_info: bytes = b"CPU : AVX2 = 1 | ") -> types.ModuleType:
    mod = types.ModuleType("llama_cpp")
    mod.llama_supports_gpu_offload = lambda: offload  # type: ignore[attr-defined]
    mod.llama_print_system_info = lambda: system_info  # type: ignore[attr-defined]
    return mod


@pytest.mark.parametrize(
    ("offload", "info", "backend"),
    [
        (False, b"CPU : AVX2 = 1 | ", None),
        (True, b"CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : AVX2 = 1 | ", "cuda"),
        (True, b"Metal : EMBED_LIBRARY = 1 | CPU : NEON = 1 | ", "metal"),
        (True, b"Vulkan : | CPU : AVX2 = 1 | ", "vulkan"),
        (True, b"something new | ", "gpu"),
    ],
)
def test_the_llama_backend_is_named_from_the_build_info(offload, info, backend):
    assert device.llama_gpu_backend(_fake_llama_cpp(offload=offload, system_info=info)) == backend


def test_a_binding_without_the_offload_query_counts_as_cpu_only():
    assert device.llama_gpu_backend(types.ModuleType("llama_cpp")) is None


@pytest.mark.parametrize(
    ("asked", "available", "used"),
    [
        ("auto", ["CPUExecutionProvider"], "cpu"),
        ("auto", ["CUDAExecutionProvider", "CPUExecutionProvider"], "cuda"),
        ("cpu", ["CUDAExecutionProvider", "CPUExecutionProvider"], "cpu"),
        ("cuda", ["CUDAExecutionProvider", "CPUExecutionProvider"], "cuda"),
    ],
)
def test_onnx_auto_uses_cuda_only_when_onnxruntime_offers_it(asked, available, used):
    got, providers = device.onnx_providers(asked, available)
    assert got == used
    assert providers[-1] == "CPUExecutionProvider"
    assert (providers[0][0] == "CUDAExecutionProvider") == (used == "cuda")


def test_asking_for_cuda_without_onnxruntime_gpu_says_what_to_install_in_one_line():
    with pytest.raises(ModelError) as err:
        device.onnx_providers("cuda", ["AzureExecutionProvider", "CPUExecutionProvider"])
    message = str(err.value)
    assert "\n" not in message
    assert "tts.device = 'cuda'" in message and "onnxruntime-gpu" in message and "tts.device: cpu" in message


def test_an_unknown_onnx_device_is_an_argument_error():
    with pytest.raises(ArgumentError, match="'gpu'"):
        device.onnx_providers("gpu", ["CPUExecutionProvider"])


# --- the LLM engine with a fake llama_cpp --------------------------------------------------------


class _FakeLlama:
    created: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        _FakeLlama.created.append(kwargs)
        self.metadata = {"llama.block_count": "30"}


@pytest.fixture
def fake_llama_cpp(monkeypatch):
    def install(*, offload: bool, info: bytes = b"CUDA : ARCHS = 890 | CPU : AVX2 = 1 | ") -> list[dict[str, Any]]:
        mod = _fake_llama_cpp(offload=offload, system_info=info)
        mod.Llama = _FakeLlama  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "llama_cpp", mod)
        monkeypatch.setattr(device, "usable_cores", lambda: 2)
        _FakeLlama.created = []
        return _FakeLlama.created

    return install


def test_llm_on_a_cpu_build_uses_the_cpu_and_the_auto_threads(fake_llama_cpp, caplog):
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    created = fake_llama_cpp(offload=False)
    with caplog.at_level("INFO", logger="edgevox.engines.llm_llama_cpp"):
        llm = LlamaCppLLM("smollm2-135m")
    assert created[0]["n_gpu_layers"] == 0
    assert (created[0]["n_threads"], created[0]["n_threads_batch"]) == (1, 1)
    assert llm.device == "cpu"
    assert llm.describe() == "cpu, 1 decode / 1 batch threads"
    assert "cpu, 1 decode / 1 batch threads" in caplog.text


def test_llm_on_a_cuda_build_offloads_every_layer_by_default(fake_llama_cpp):
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    created = fake_llama_cpp(offload=True)
    llm = LlamaCppLLM("smollm2-135m", n_threads=2, n_threads_batch=2)
    assert created[0]["n_gpu_layers"] == -1
    assert llm.device == "cuda (all 30 layers)"
    assert llm.describe() == "cuda (all 30 layers), 2 decode / 2 batch threads"


def test_llm_reports_a_partial_offload(fake_llama_cpp):
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    fake_llama_cpp(offload=True)
    assert LlamaCppLLM("smollm2-135m", n_gpu_layers=12).device == "cuda (12 of 30 layers)"
    assert LlamaCppLLM("smollm2-135m", n_gpu_layers=0).device == "cpu"


def test_llm_refuses_gpu_layers_on_a_cpu_build_before_loading_the_model(fake_llama_cpp):
    from edgevox.engines.llm_llama_cpp import LlamaCppLLM

    created = fake_llama_cpp(offload=False)
    with pytest.raises(ModelError, match=r"llm.gpu_layers = 8, but .* set llm.gpu_layers: 0"):
        LlamaCppLLM("smollm2-135m", n_gpu_layers=8)
    assert created == []


def test_make_llm_passes_the_config_threads_and_gpu_layers(fake_llama_cpp):
    from edgevox.config.build import make_llm
    from edgevox.config.schema import LLMConfig

    created = fake_llama_cpp(offload=True)
    llm = make_llm(LLMConfig(threads=3, batch_threads=4, gpu_layers=5))
    assert {k: created[0][k] for k in ("n_threads", "n_threads_batch", "n_gpu_layers")} == {
        "n_threads": 3,
        "n_threads_batch": 4,
        "n_gpu_layers": 5,
    }
    assert llm.describe() == "cuda (5 of 30 layers), 3 decode / 4 batch threads"


# --- the TTS engine with a fake onnxruntime session ----------------------------------------------


class _FakeSession:
    def __init__(self, providers: list[str]) -> None:
        self._providers = providers

    def get_providers(self) -> list[str]:
        return self._providers


def test_tts_device_is_what_the_session_got():
    from edgevox.engines.tts_piper import _device_used

    assert _device_used(_FakeSession(["CPUExecutionProvider"]), "cpu", "auto") == "cpu"
    assert _device_used(_FakeSession(["CUDAExecutionProvider", "CPUExecutionProvider"]), "cuda", "auto") == "cuda"


def test_tts_auto_falls_back_to_the_cpu_when_cuda_cannot_start(caplog):
    from edgevox.engines.tts_piper import _device_used

    with caplog.at_level("WARNING", logger="edgevox.engines.tts_piper"):
        assert _device_used(_FakeSession(["CPUExecutionProvider"]), "cuda", "auto") == "cpu"
    assert "could not start" in caplog.text


def test_tts_cuda_by_name_that_cannot_start_is_a_model_error():
    from edgevox.engines.tts_piper import _device_used

    with pytest.raises(ModelError, match=r"tts.device = 'cuda'.*tts.device: cpu"):
        _device_used(_FakeSession(["CPUExecutionProvider"]), "cuda", "cuda")


def test_tts_asks_onnxruntime_for_cuda_when_it_offers_it(monkeypatch):
    """The real Piper voice loads; onnxruntime's provider list and session are faked."""
    import onnxruntime

    from edgevox.engines import tts_piper

    seen: dict[str, Any] = {}
    real = onnxruntime.InferenceSession

    def session(path: str, sess_options: Any, providers: list[Any]) -> Any:
        seen["providers"] = providers
        seen["threads"] = sess_options.intra_op_num_threads
        got = real(path, sess_options=sess_options, providers=["CPUExecutionProvider"])
        monkeypatch.setattr(got, "get_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
        return got

    monkeypatch.setattr(
        onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    tts = tts_piper.PiperTTS("piper-joe-medium", num_threads=1)
    assert seen["providers"][0][0] == "CUDAExecutionProvider"
    assert seen["threads"] == 1
    assert tts.device == "cuda"
    assert tts.describe() == "cuda"


def test_make_tts_passes_the_config_threads_and_device(monkeypatch):
    from edgevox.config.build import make_tts
    from edgevox.config.schema import TTSConfig
    from edgevox.engines import tts_piper

    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, voice: str, **kwargs: Any) -> None:
            seen.update(kwargs, voice=voice)

    monkeypatch.setattr(tts_piper, "PiperTTS", Recorder)
    make_tts(TTSConfig(threads=1, device="cpu"))
    assert (seen["num_threads"], seen["device"]) == (1, "cpu")


# --- what `edgevox check` reports ----------------------------------------------------------------


def _config(**sections: Any) -> Any:
    from edgevox.config.schema import AppConfig

    return AppConfig.model_validate(sections)


def test_check_reports_the_device_and_threads_each_engine_will_use(fake_llama_cpp, monkeypatch):
    import onnxruntime

    from edgevox.config.diagnostics import engine_devices

    fake_llama_cpp(offload=False)
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert engine_devices(_config()) == [
        ("STT whisper-tiny.en", "ok", "cpu int8, 2 threads"),  # no CUDA device for CTranslate2 here
        ("LLM smollm2-135m", "ok", "cpu, 1 decode / 1 batch threads"),
        ("TTS piper-joe-medium", "ok", "cpu, 2 threads"),
    ]
    fake_llama_cpp(offload=True)
    monkeypatch.setattr(
        onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    assert [d for _, _, d in engine_devices(_config(llm={"threads": 2}))] == [
        "cpu int8, 2 threads",
        "cuda (all layers), 2 decode / 1 batch threads",
        "cuda",
    ]


def test_check_fails_a_gpu_request_the_installed_libraries_cannot_honour(fake_llama_cpp, monkeypatch):
    import onnxruntime

    from edgevox.config.diagnostics import engine_devices

    fake_llama_cpp(offload=False)
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    (_stt, llm, tts) = engine_devices(_config(llm={"gpu_layers": 4}, tts={"device": "cuda"}))
    assert llm[1] == tts[1] == "fail"
    assert "llm.gpu_layers: 0" in llm[2] and "tts.device: cpu" in tts[2]


def test_check_skips_custom_engines_and_a_missing_speaker(fake_llama_cpp):
    from edgevox.config.diagnostics import engine_devices

    fake_llama_cpp(offload=False)
    config = _config(tts={"engine": "my_robot.voice:make_tts"}, audio={"output": {"sink": "none"}})
    assert [what for what, _, _ in engine_devices(config)] == ["STT whisper-tiny.en", "LLM smollm2-135m"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("llm:\n  threads: 0\n", "llm.threads = 0: must be 'auto' or >= 1 (allowed: 1 to 256)"),
        ("llm:\n  batch_threads: true\n", "llm.batch_threads = true: expected 'auto' or an integer, got a boolean"),
        ("llm:\n  gpu_layers: -2\n", "llm.gpu_layers = -2: must be 'auto' or >= -1 (allowed: -1 to 100000)"),
        ("tts:\n  threads: two\n", "tts.threads = two: expected 'auto' or an integer, got a string"),
        ("tts:\n  device: gpu\n", "tts.device = gpu: must be one of 'auto', 'cpu' or 'cuda'"),
    ],
)
def test_a_bad_thread_or_device_value_in_a_config_is_one_clear_line(yaml_text, message):
    from edgevox.config.loader import parse_config
    from edgevox.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_config(yaml_text, source="robot.yaml")
    assert str(err.value) == f"robot.yaml:2: {message}"
