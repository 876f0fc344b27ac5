"""The config schema: typed pydantic v2 models for one edgevox application.

Over 400 lines because it is one schema: one short section class per part of the application,
read together because :class:`AppConfig` cross-checks their names; sections owned by other
subsystems already live in their packages.

One YAML file describes a whole application: engines and their models, audio in and
out, endpointing, the safety stop, agents and their tools, workflows, background
agents, the agent pool, orchestration, bridges and logging. :func:`edgevox.config.load`
reads it, interpolates ``${ENV}`` and validates it against :class:`AppConfig`;
:mod:`edgevox.app` is the single place that turns a validated config into running
objects.

Rules kept everywhere in this module:

* ``extra="forbid"`` on every model, so a typo is an error naming the nearest valid key.
* Strict scalars (``true`` is not a number, ``"3"`` is not an int): a config is written
  by a person, and silent coercion hides mistakes. ``${ENV}`` values that make up a whole
  scalar are parsed as YAML first, so ``threads: ${THREADS:-2}`` is still an int.
* Units live in key names (``_s``, ``_ms``, ``_hz``) and every field has a description,
  which is what ``docs/config.md`` is generated from (a test keeps the two in sync).
* References to code are ``module:attribute`` strings (:data:`Ref`), checked for shape
  here and imported only when the application is built (or by ``edgevox check``).

Sections owned by other subsystems are defined in their packages and imported here:
``bridges`` is :class:`edgevox.integrations.config.BridgesConfig`; ``orchestration`` is
:class:`edgevox.orchestration.config.OrchestrationConfig`.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from edgevox.agents import llm_agent
from edgevox.config.fields import (
    DAY_S,
    HOUR_S,
    MIN_TIMEOUT_S,
    Milliseconds,
    Name,
    Seconds,
    Section,
    ShortSeconds,
    Temperature,
    Threads,
    Tokens,
)
from edgevox.dashboard.config import DashboardConfig
from edgevox.engines import audio_sounddevice, llm_llama_cpp, stt_faster_whisper, tts_piper, vad_silero, vad_webrtc
from edgevox.integrations.config import BridgesConfig
from edgevox.orchestration import workflows
from edgevox.orchestration.config import OrchestrationConfig, ToolLimitsSection
from edgevox.voice.wake_config import WakeConfig

# --- shared types ------------------------------------------------------------------------------

REF_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
Ref = Annotated[str, Field(pattern=REF_PATTERN)]
"""A reference to Python code: ``package.module:attribute`` (e.g. ``my_robot.tools:move``)."""


Overflow = Literal["drop_oldest", "drop_new"]  # a background agent never blocks its publisher
Restart = Literal["permanent", "transient", "temporary"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


# --- engines -----------------------------------------------------------------------------------


class STTConfig(Section):
    """Speech to text."""

    engine: StrictStr = Field(
        "faster-whisper",
        description="STT engine: `faster-whisper`, or a `module:factory` reference called with the keys of `options`.",
    )
    model: StrictStr = Field(
        stt_faster_whisper.DEFAULT_MODEL,
        description="Model reference: a builtin name (`edgevox models list`), a local path, or a hub reference `hf:owner/repo[/file]`.",
    )
    language: StrictStr = Field("en", description="Spoken language (ISO 639-1 code).")
    beam_size: Annotated[StrictInt, Field(ge=1, le=32)] = Field(
        1, description="Beam search width; 1 is greedy and fastest."
    )
    cpu_threads: Threads = Field(
        stt_faster_whisper.DEFAULT_CPU_THREADS, description="CPU threads used by the STT engine."
    )
    vocabulary: list[StrictStr] = Field(
        default_factory=list,
        description="Words and phrases that bias recognition (robot names, room names...). The active agent's tool names and enum values are added automatically.",
    )
    bias: Literal["prompt", "hotwords", "none"] = Field(
        "prompt", description="How the vocabulary biases Whisper: as its initial prompt, as hotwords, or not at all."
    )
    no_speech_threshold: Annotated[StrictFloat, Field(ge=0, le=1)] = Field(
        stt_faster_whisper.DEFAULT_NO_SPEECH_THRESHOLD,
        description="Segments more likely than this to be non-speech (and with low confidence) are dropped.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="Where Whisper runs: `auto` uses CUDA when CTranslate2 sees a CUDA device, else the CPU; `cuda` fails at startup when it sees none.",
    )
    compute_type: StrictStr = Field(
        "auto",
        description="CTranslate2 compute type (`int8`, `int8_float16`, `float16`, `float32`...); `auto` is int8 on the CPU, float16 on CUDA.",
    )
    min_window_s: Annotated[StrictFloat, Field(ge=0, le=30)] = Field(
        stt_faster_whisper.DEFAULT_MIN_WINDOW_S,
        description="Shortest Whisper encoder window, in seconds; the window is the first of a ladder of lengths (from min_window_s, each a quarter longer, in whole seconds: 10, 13, 17, 22, 28 s) that holds the utterance + window_pad_s; each is built at warm-up, so memory stays flat. 30 = always Whisper's full 30 s window (faster-whisper's own decoding, slower).",
    )
    window_pad_s: Annotated[StrictFloat, Field(ge=0, le=29)] = Field(
        stt_faster_whisper.DEFAULT_WINDOW_PAD_S,
        description="Seconds of padding after the utterance in the encoder window (less loses or repeats the last words); utterances longer than 30 - window_pad_s use the full 30 s window.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Extra keyword arguments for a custom engine factory."
    )


class LLMConfig(Section):
    """The local language model shared by all agents."""

    engine: StrictStr = Field(
        "llama-cpp", description="LLM engine: `llama-cpp`, or a `module:factory` reference called with `options`."
    )
    model: StrictStr = Field(
        llm_llama_cpp.DEFAULT_MODEL,
        description="Model reference: builtin name, path to a `.gguf` file, or `hf:owner/repo/file.gguf`.",
    )
    context_tokens: Tokens = Field(llm_llama_cpp.DEFAULT_CONTEXT_TOKENS, description="Context window in tokens.")
    max_tokens: Tokens = Field(256, description="Maximum tokens generated per reply.")
    temperature: Temperature = Field(0.2, description="Sampling temperature; 0 is deterministic.")
    threads: Literal["auto"] | Threads = Field(
        "auto",
        description="CPU threads for decoding (one token at a time). `auto`: one fewer than the usable cores (at least 1; half the cores from 8). On 2 cores with other work running, 1 thread decoded 31-47 tokens/s and 2 threads 2-20 (llama.cpp's OpenMP threads spin waiting for each other); idle, 2 threads give 58 against 45.",
    )
    batch_threads: Literal["auto"] | Threads = Field(
        "auto",
        description="CPU threads for evaluating the prompt (prefill, before the first token). `auto`: as `threads` below 8 cores, else all usable cores but one. On 2 cores with other work running, 2 prefill threads made the first token 1.7-45x later than 1 (four measurements).",
    )
    gpu_layers: Literal["auto"] | Annotated[StrictInt, Field(ge=-1, le=100_000)] = Field(
        "auto",
        description="Model layers offloaded to the GPU: -1 = all, 0 = CPU only. `auto`: all when the installed llama-cpp-python is a GPU (CUDA, Metal...) build, else 0; any value but 0 or `auto` with a CPU-only build is an error (see docs/engines.md, GPU builds).",
    )
    seed: Annotated[StrictInt, Field(ge=0, le=2**32 - 1)] = Field(0, description="Random seed for sampling.")
    options: dict[str, Any] = Field(default_factory=dict, description="Extra keyword arguments for the engine.")

    @model_validator(mode="after")
    def _reply_fits(self) -> LLMConfig:
        if self.max_tokens > self.context_tokens:
            raise ValueError(
                f"max_tokens = {self.max_tokens} is more than the context window (context_tokens = "
                f"{self.context_tokens}); a reply cannot be longer than the context: lower max_tokens"
            )
        return self


class AgentLLMConfig(Section):
    """An agent's own language model: keys of ``llm:`` this agent sets differently (the rest
    are ``llm:``'s). Agents whose engine, model file and load options (everything but
    ``max_tokens`` and ``temperature``, which are per call) come out the same share one
    loaded engine."""

    engine: StrictStr | None = Field(None, description="`llm.engine` for this agent; null = `llm.engine`.")
    model: StrictStr | None = Field(
        None,
        description="Model of this agent (builtin name, `.gguf` path or `hf:` reference); null = `llm.model`.",
    )
    context_tokens: Tokens | None = Field(None, description="Context window in tokens; null = `llm.context_tokens`.")
    max_tokens: Tokens | None = Field(None, description="Reply length limit in tokens; null = `llm.max_tokens`.")
    temperature: Temperature | None = Field(None, description="Sampling temperature; null = `llm.temperature`.")
    threads: Literal["auto"] | Threads | None = Field(None, description="Decode threads; null = `llm.threads`.")
    batch_threads: Literal["auto"] | Threads | None = Field(
        None, description="Prompt threads; null = `llm.batch_threads`."
    )
    gpu_layers: Literal["auto"] | Annotated[StrictInt, Field(ge=-1, le=100_000)] | None = Field(
        None, description="GPU layers; null = `llm.gpu_layers`."
    )
    seed: Annotated[StrictInt, Field(ge=0, le=2**32 - 1)] | None = Field(None, description="Seed; null = `llm.seed`.")
    options: dict[str, Any] | None = Field(
        None, description="Extra engine keyword arguments (replace `llm.options` as a whole); null = `llm.options`."
    )


class TTSConfig(Section):
    """Text to speech."""

    engine: StrictStr = Field("piper", description="TTS engine: `piper`, or a `module:factory` reference.")
    voice: StrictStr = Field(
        tts_piper.DEFAULT_VOICE,
        description="Voice model reference: builtin name, path to a Piper `.onnx`, or hub reference.",
    )
    speaker_id: Annotated[StrictInt, Field(ge=0, le=100_000)] | None = Field(
        None, description="Speaker of a multi-speaker voice; null = the voice's default."
    )
    length_scale: Annotated[StrictFloat, Field(gt=0, le=10)] = Field(
        1.0, description="Speaking-rate factor: >1 is slower, <1 faster."
    )
    threads: Literal["auto"] | Threads = Field(
        "auto",
        description="CPU threads for one synthesis (onnxruntime intra-op threads, which sleep rather than spin when idle). `auto`: 2, or 1 on a single core.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="Where Piper runs: `auto` uses CUDA when onnxruntime offers its CUDA provider (the `onnxruntime-gpu` package), else the CPU; `cuda` fails at startup without it.",
    )
    gain_db: Annotated[StrictFloat, Field(ge=tts_piper.GAIN_DB_RANGE[0], le=tts_piper.GAIN_DB_RANGE[1])] = Field(
        tts_piper.DEFAULT_GAIN_DB,
        description="Output gain in dB, the same for every sentence (Piper's per-sentence normalisation to full scale is off). 0 = the voice's own level (`piper-joe-medium` peaks at -3 to -6 dBFS).",
    )
    limiter: StrictBool = Field(
        True,
        description="Keep peaks under -1 dBFS with a look-ahead limiter (20 ms ramps, no clipped samples); `false` clips samples beyond full scale.",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Extra keyword arguments for the engine.")


class VADConfig(Section):
    """Voice activity detection (which audio frames contain speech)."""

    engine: StrictStr = Field("webrtc", description="VAD engine: `webrtc`, or a `module:factory` reference.")
    aggressiveness: Annotated[StrictInt, Field(ge=0, le=3)] = Field(
        vad_webrtc.DEFAULT_AGGRESSIVENESS, description="0..3: higher rejects more noise (and some quiet speech)."
    )
    frame_ms: Literal[10, 20, 30] = Field(
        vad_webrtc.DEFAULT_FRAME_MS, description="VAD frame length in milliseconds (10, 20 or 30)."
    )
    confirm: Literal["silero", "none"] = Field(
        "silero",
        description="Second opinion on `webrtc`'s speech frames: `silero` (the Silero VAD model shipped with faster-whisper; rejects steady noise that webrtcvad calls speech, ~0.1 ms per frame) or `none`. Needs a 16, 32 or 48 kHz pipeline.",
    )
    silero_threshold: Annotated[StrictFloat, Field(ge=0.2, le=0.9)] = Field(
        vad_silero.DEFAULT_THRESHOLD,
        description="Silero speech probability that turns speech on (0.2..0.9); it turns off below this minus 0.15. Higher rejects more noise and more quiet speech.",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for a custom engine factory.")


class EndpointingConfig(Section):
    """How speech is cut into utterances."""

    pre_roll_ms: Milliseconds = Field(300, description="Audio kept from before speech was detected, in milliseconds.")
    min_speech_ms: Milliseconds = Field(
        100,
        description="Voiced audio needed to start an utterance (and to barge in), in milliseconds; shorter bursts are ignored.",
    )
    end_silence_ms: Annotated[StrictInt, Field(ge=1, le=60_000)] = Field(
        250,
        description="Silence that ends an utterance, in milliseconds (trades latency against cutting the user off). With `hold_silence_ms`, only once the transcript of the pause reads complete.",
    )
    hold_silence_ms: Annotated[StrictInt, Field(ge=0, le=60_000)] = Field(
        800,
        description="Adaptive endpointing: silence that ends an utterance while the transcript of the pause ends mid-phrase ('turn left and', a number, 'um') or is not known yet, in milliseconds; 0 = off (always `end_silence_ms`). Must be 0 or >= `end_silence_ms` (when left out, it is raised to `end_silence_ms`). Needs `voice.speculative_stt` (without it this is ignored).",
    )
    statement_silence_ms: Annotated[StrictInt, Field(ge=0, le=60_000)] = Field(
        650,
        description="Adaptive endpointing: silence that ends an utterance whose pause reads as a complete statement ('He paced up and down, waiting.') rather than a request, a question or a short answer, in milliseconds; people telling something often go on after a sentence. Between `end_silence_ms` and `hold_silence_ms` (clamped); 0 = `end_silence_ms`.",
    )
    max_utterance_s: Annotated[StrictFloat, Field(ge=0.5, le=600)] = Field(
        15.0, description="An utterance is cut after this many seconds."
    )
    pause_ms: Milliseconds = Field(
        60,
        description="Silence after which the audio so far is transcribed speculatively (before `end_silence_ms` confirms the end), in milliseconds; 0 = never. Used only with `voice.speculative_stt`.",
    )

    @model_validator(mode="after")
    def _hold_not_below_end(self) -> EndpointingConfig:
        if self.hold_silence_ms and self.hold_silence_ms < self.end_silence_ms:
            if "hold_silence_ms" not in self.model_fields_set:  # only end_silence_ms was raised
                object.__setattr__(self, "hold_silence_ms", self.end_silence_ms)
                return self
            raise ValueError(
                f"hold_silence_ms = {self.hold_silence_ms} is below end_silence_ms = {self.end_silence_ms}: "
                "set it to 0 (off) or at least end_silence_ms"
            )
        return self


# --- audio -------------------------------------------------------------------------------------


class AudioInputConfig(Section):
    """Where the user's voice comes from."""

    source: Literal["device", "file", "text"] | None = Field(
        None,
        description="`device` (microphone), `file` (a WAV file, headless) or `text` (typed lines, no audio). Default: `file` when `file` is set, else `device`.",
    )
    device: StrictStr | Annotated[StrictInt, Field(ge=0, le=100_000)] | None = Field(
        None, description="Input device name (substring) or index from `edgevox devices`; null = system default."
    )
    file: StrictStr | None = Field(None, description="WAV file to read when `source` is `file`.")
    realtime: StrictBool = Field(
        True, description="Pace file input in real time (as a microphone would); false reads as fast as possible."
    )
    device_sample_rate_hz: Annotated[StrictInt, Field(ge=1000, le=768_000)] | None = Field(
        None, description="Capture rate of the device in Hz; null = the device's default. Audio is resampled."
    )
    block_ms: Annotated[StrictInt, Field(ge=1, le=1000)] = Field(
        audio_sounddevice.INPUT_BLOCK_MS, description="Capture block length in milliseconds."
    )
    latency: Literal["low", "high"] | Annotated[StrictFloat, Field(ge=0.001, le=10)] = Field(
        audio_sounddevice.DEFAULT_LATENCY,
        description="Device latency PortAudio aims for: `low`, `high` (fewer overflows on a busy machine) or seconds.",
    )

    @model_validator(mode="after")
    def _infer_source(self) -> AudioInputConfig:
        if self.source is None:
            object.__setattr__(self, "source", "file" if self.file else "device")
        if self.source == "file" and not self.file:
            raise ValueError("source is 'file' but no file is given: set audio.input.file (or use --input FILE.wav)")
        return self


class AudioOutputConfig(Section):
    """Where the robot's voice goes."""

    sink: Literal["device", "file", "none"] | None = Field(
        None,
        description="`device` (speaker), `file` (write a WAV) or `none` (no audio; replies are shown as text). Default: `file` when `file` is set, else `device`.",
    )
    device: StrictStr | Annotated[StrictInt, Field(ge=0, le=100_000)] | None = Field(
        None, description="Output device name (substring) or index from `edgevox devices`; null = system default."
    )
    file: StrictStr | None = Field(None, description="WAV file to write when `sink` is `file`.")
    device_sample_rate_hz: Annotated[StrictInt, Field(ge=1000, le=768_000)] | None = Field(
        None, description="Playback rate of the device in Hz; null = the TTS voice's rate. Audio is resampled."
    )
    block_ms: Annotated[StrictInt, Field(ge=1, le=1000)] = Field(
        audio_sounddevice.OUTPUT_BLOCK_MS,
        description="Playback block length in milliseconds (bounds how fast audio stops).",
    )
    latency: Literal["low", "high"] | Annotated[StrictFloat, Field(ge=0.001, le=10)] = Field(
        audio_sounddevice.DEFAULT_LATENCY,
        description="Device latency PortAudio aims for: `low` (first audio and barge-in stop sooner), `high` (fewer underruns on a busy machine) or seconds.",
    )

    @model_validator(mode="after")
    def _infer_sink(self) -> AudioOutputConfig:
        if self.sink is None:
            object.__setattr__(self, "sink", "file" if self.file else "device")
        if self.sink == "file" and not self.file:
            raise ValueError("sink is 'file' but no file is given: set audio.output.file (or use --output FILE.wav)")
        return self


class AudioConfig(Section):
    input: AudioInputConfig = Field(default_factory=AudioInputConfig, description="Audio input.")
    output: AudioOutputConfig = Field(default_factory=AudioOutputConfig, description="Audio output.")
    sample_rate_hz: Literal[8000, 16000, 32000, 48000] = Field(
        stt_faster_whisper.SAMPLE_RATE_HZ, description="Rate of the speech pipeline (VAD and STT) in Hz."
    )


# --- voice loop and safety ---------------------------------------------------------------------


class VoiceConfig(Section):
    """Turn taking (barge-in, the echo guard) and the latency trade-offs of the loop."""

    barge_in: StrictBool = Field(
        True, description="User speech during playback stops the robot and cancels the reply (not in `half_duplex`)."
    )
    echo_guard: Literal["aec", "half_duplex", "energy_gate", "off"] = Field(
        "half_duplex",
        description="How the robot avoids hearing itself: `aec` removes its voice from the microphone with WebRTC's echo canceller (full duplex: the user can talk over it), `half_duplex` ignores the microphone while speaking (stop phrases still work), `energy_gate` counts speech only when louder than the playback, `off` trusts the VAD (use with a headset).",
    )
    echo_tail_ms: Milliseconds = Field(
        300,
        description="The microphone still counts as echo this long after playback, in milliseconds, plus the measured delay of the device's echo (docs/voice.md, Echo guard).",
    )
    energy_gate_ratio: Annotated[StrictFloat, Field(gt=0, le=1000)] = Field(
        2.0, description="`energy_gate`: speech must be this many times louder (RMS) than the playback."
    )
    session_id: StrictStr = Field("default", description="Conversation id of the voice session.")
    speculative_stt: StrictBool = Field(
        True,
        description="Transcribe during the end-of-speech silence (at `endpointing.pause_ms`) so the transcript is ready when the endpoint fires; costs CPU when the user only paused.",
    )
    speculative_reply: StrictBool = Field(
        True,
        description="Also start the agent on that speculative transcript: its reply is generated while the endpoint waits and released only if the final transcript is the same text (tools, skills and memory wait for it; otherwise it is discarded unseen). Needs `speculative_stt`.",
    )
    tts_priority_ms: Milliseconds = Field(
        400,
        description="The LLM pauses while the reply's next chunk is synthesized and less than this much audio is buffered, in milliseconds; 0 = never (on 2 cores the first sound comes sooner).",
    )
    first_fragment_words: Annotated[StrictInt, Field(ge=0, le=1000)] = Field(
        4,
        description="Speak the first this-many words at once if no clause or sentence mark came yet; 0 = wait for a clause mark.",
    )


def _default_stop_phrases() -> list[str]:
    from edgevox.voice.stop_phrases import DEFAULT_STOP_PHRASES  # one list; imported late (voice pulls numpy)

    return list(DEFAULT_STOP_PHRASES)


def _default_negations() -> list[str]:
    from edgevox.voice.stop_phrases import DEFAULT_NEGATIONS

    return list(DEFAULT_NEGATIONS)


class SafetyConfig(Section):
    """The safety stop, checked on every transcript before any agent runs."""

    stop_phrases: list[Annotated[StrictStr, Field(min_length=1)]] = Field(
        default_factory=_default_stop_phrases,
        description='A transcript matching one of these (not negated: "don\'t stop" does not match) cancels speech, generation and running skills at once. Not set: the defaults of `stt.language` (en, de, fr, es, it, nl, pt; docs/voice.md).',
    )
    negations: list[Annotated[StrictStr, Field(min_length=1)]] = Field(
        default_factory=_default_negations,
        description='Words that, just before a stop phrase, make it no stop ("don\'t", "never"). Not set: those of `stt.language`.',
    )
    enabled: StrictBool = Field(True, description="Turn the safety stop off only for experiments.")
    confirmation: StrictStr = Field(
        "Stopped.",
        description="Said (and printed) once after a safety stop, from any source; empty = say nothing.",
    )
    tool_timeout_s: ShortSeconds = Field(
        10.0,
        description="Deadline of one tool call in seconds, for tools that set none (`@tool(timeout_s=...)`); a call past it is reported as timed out and its late result is discarded.",
    )

    @field_validator("stop_phrases")
    @classmethod
    def _phrases_have_words(cls, phrases: list[str]) -> list[str]:
        """The matcher compares words: a phrase without any ("!!!") could never match, and a
        robot without a stop phrase cannot be stopped by voice."""
        from edgevox.voice.stop_phrases import normalise_words

        if not phrases:
            raise ValueError(
                "at least one phrase is needed (e.g. [stop, halt]): without one the robot cannot be stopped by voice"
            )
        for phrase in phrases:
            if not normalise_words(phrase):
                raise ValueError(f"{phrase!r} has no words to match; write a word, e.g. stop")
        return phrases


# --- agents ------------------------------------------------------------------------------------


class AgentConfig(Section):
    """An LLM agent: instructions and tools, or a factory that builds the agent."""

    instructions: StrictStr = Field(
        llm_agent.DEFAULT_SYSTEM_PROMPT,
        description="System prompt of the agent.",
    )
    tools: list[Ref] = Field(
        default_factory=list,
        description="Tools as `module:function` references (functions decorated with `@tool`, plain functions, or a list of them).",
    )
    skills: list[Ref] = Field(
        default_factory=list, description="Long-running, cancellable skills as `module:function` references."
    )
    handoffs: list[Name] = Field(
        default_factory=list,
        description="Names of agents this agent may hand the conversation to (`handoff_to_<name>` tools).",
    )
    delegates: list[Name] = Field(
        default_factory=list,
        description="Agents this agent may delegate sub-tasks to (supyagent's `delegates`): it gets a `delegate` tool whose `agent` lists exactly these, plus `list_processes` / `get_process_output` / `kill_process` for background delegations; any other target is refused. Limits: `orchestration.delegation`.",
    )
    limits: ToolLimitsSection = Field(
        default_factory=ToolLimitsSection,
        description="supyagent's `limits`: `max_tool_calls_per_turn`, `max_total_tool_calls` (per conversation).",
    )
    factory: Ref | None = Field(
        None,
        description="`module:function` that builds the agent instead, called as `factory(llm=..., **options)` (e.g. `edgevox.examples.home_robot:build_home_robot_agent`).",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for `factory`.")
    max_tool_hops: Annotated[StrictInt, Field(ge=1, le=100)] = Field(
        3, description="Maximum tool calls in one turn before the agent must answer."
    )
    speak_tool_results: StrictBool | None = Field(
        None,
        description="If a tool returns text, speak that text as the reply (no LLM reply after the call); `false` = the LLM phrases the reply from the tool's result. null = `true` for agents built from `tools`, the factory's own default for agents a `factory` builds (set it to override that).",
    )
    max_tokens: Tokens | None = Field(None, description="Reply length limit in tokens; null = `llm.max_tokens`.")
    temperature: Temperature | None = Field(None, description="Sampling temperature; null = `llm.temperature`.")
    decoder: Literal["schema_first", "two_stage", "grammar", "free_text"] | None = Field(
        None,
        description="How the agent decides to call a tool: `schema_first` acts on what the user's words name and asks the model only when unsure (a handoff or delegation is then chosen only when the user names it); `two_stage` lets the model pick the tool, then its arguments (what orchestration agents that hand off or delegate on their own judgement need); `grammar` one constrained decode; `free_text` no grammar. null = `schema_first`, or the factory's own for agents a `factory` builds.",
    )
    llm: AgentLLMConfig | None = Field(
        None,
        description="This agent's own model: `llm:` keys set differently for it (e.g. `{model: ..., context_tokens: 1024}`); null = `llm:` as it is. Agents whose model file and load options come out the same share one loaded engine.",
    )

    @model_validator(mode="after")
    def _factory_excludes_tools(self) -> AgentConfig:
        if self.factory and (self.tools or self.skills):
            raise ValueError(
                "an agent with a factory gets its tools from the factory: remove tools/skills or the factory"
            )
        for key in ("max_tokens", "temperature"):
            if self.llm is not None and getattr(self, key) is not None and getattr(self.llm, key) is not None:
                raise ValueError(f"{key} is set twice (as {key} and llm.{key}): keep one")
        return self


class WorkflowConfig(Section):
    """A composition of agents that behaves as one agent."""

    type: Literal["sequence", "fallback", "loop", "retry", "timeout", "router", "parallel"] = Field(
        description="`sequence` runs steps in order; `fallback` tries steps until one succeeds; `loop` repeats its step until `until` holds; `retry` reruns a failing step; `timeout` bounds a step; `router` lets the LLM pick a step; `parallel` runs steps at once and combines them with `reduce`."
    )
    steps: list[Name] = Field(description="Agent or workflow names this workflow runs (one for loop/retry/timeout).")
    until: Ref | None = Field(None, description="loop: `module:function(result) -> bool` that ends the loop.")
    max_iterations: Annotated[StrictInt, Field(ge=1, le=10_000)] = Field(3, description="loop: maximum iterations.")
    attempts: Annotated[StrictInt, Field(ge=1, le=1000)] = Field(
        workflows.DEFAULT_RETRY_ATTEMPTS, description="retry: total attempts."
    )
    timeout_s: Seconds = Field(30.0, description="timeout: seconds before the step is cancelled.")
    reduce: Ref | None = Field(
        None, description="parallel: `module:function(results) -> result`; null joins the replies."
    )

    @model_validator(mode="after")
    def _arity(self) -> WorkflowConfig:
        single = ("loop", "retry", "timeout")
        if self.type in single and len(self.steps) != 1:
            raise ValueError(f"a {self.type} workflow wraps exactly one step, got {len(self.steps)}")
        if self.type not in single and not self.steps:
            raise ValueError(f"a {self.type} workflow needs at least one step")
        return self


class TriggerConfig(Section):
    """When a background agent runs and with what task."""

    events: list[Annotated[StrictStr, Field(min_length=1)]] = Field(
        description="Event kinds or patterns that trigger the agent (e.g. `robot.battery`, `voice.*`)."
    )
    task: StrictStr | None = Field(
        None,
        description="Task template; `{field}` is replaced by the event's fields (e.g. `Battery at {level} percent.`). Exactly one of `task` and `function`.",
    )
    function: Ref | None = Field(
        None, description="`module:function(event) -> str | None` that makes the task (None = ignore the event)."
    )
    debounce_s: Annotated[StrictFloat, Field(ge=0, le=HOUR_S)] = Field(
        0.0,
        description="Wait until events have been quiet this long and run once for the last one (trailing edge); 0 = every event.",
    )

    @model_validator(mode="after")
    def _one_of(self) -> TriggerConfig:
        if (self.task is None) == (self.function is None):
            raise ValueError("give exactly one of 'task' (a template) and 'function' (a module:function reference)")
        return self


class BackgroundAgentConfig(Section):
    """An agent that runs on its own thread when events arrive, supervised with OTP restart policies."""

    name: Name = Field(description="Unique name (used in events and logs).")
    agent: Name = Field(description="Name of the agent or workflow that runs the task.")
    trigger: TriggerConfig = Field(description="Which events start it and what task it gets.")
    max_queue: Annotated[StrictInt, Field(ge=1, le=1_000_000)] = Field(
        32, description="Events waiting to be handled, at most."
    )
    overflow: Overflow = Field(
        "drop_oldest",
        description="When the queue is full: `drop_oldest` (keep the newest) or `drop_new`; drops are counted.",
    )
    restart: Restart = Field(
        "transient",
        description="`permanent` restarts after any exit, `transient` only after a crash, `temporary` never.",
    )
    max_restarts: Annotated[StrictInt, Field(ge=0, le=10_000)] = Field(
        5, description="Restarts allowed within `restart_window_s` before giving up."
    )
    restart_window_s: Annotated[StrictFloat, Field(ge=1, le=DAY_S)] = Field(
        60.0, description="Window for counting restarts, in seconds."
    )


class PoolConfig(Section):
    """The agent pool: agents that run in parallel over the shared bus and blackboard."""

    agents: list[Name] = Field(
        default_factory=list, description="Agents (by name) to place in the pool; empty = all agents."
    )
    max_concurrency: Annotated[StrictInt, Field(ge=1, le=1024)] = Field(
        2, description="Agents running at the same time, at most."
    )


# --- runtime and logging -----------------------------------------------------------------------


class RuntimeConfig(Section):
    shutdown_timeout_s: Annotated[StrictFloat, Field(ge=MIN_TIMEOUT_S, le=600)] = Field(
        2.0, description="Time allowed for a clean shutdown, in seconds."
    )


class LoggingConfig(Section):
    level: LogLevel = Field(
        "WARNING", description="Log level (DEBUG, INFO, WARNING, ERROR); `--log-level` overrides it."
    )
    file: StrictStr | None = Field(None, description="Also write the log to this file.")
    events_file: StrictStr | None = Field(None, description="Write every bus event to this file as JSON lines.")


# --- the application ---------------------------------------------------------------------------


class AppConfig(Section):
    """One edgevox application."""

    version: Literal[1] = Field(1, description="Config format version.")
    name: StrictStr = Field("edgevox", description="Application name (shown in the status line and logs).")
    agent: Name | None = Field(
        None, description="Agent or workflow that answers the user; null = the first agent in `agents`."
    )
    stt: STTConfig = Field(default_factory=STTConfig, description="Speech to text.")
    llm: LLMConfig = Field(default_factory=LLMConfig, description="Language model.")
    tts: TTSConfig = Field(default_factory=TTSConfig, description="Text to speech.")
    vad: VADConfig = Field(default_factory=VADConfig, description="Voice activity detection.")
    endpointing: EndpointingConfig = Field(default_factory=EndpointingConfig, description="Utterance segmentation.")
    audio: AudioConfig = Field(default_factory=AudioConfig, description="Audio input and output.")
    voice: VoiceConfig = Field(default_factory=VoiceConfig, description="Turn taking.")
    safety: SafetyConfig = Field(default_factory=SafetyConfig, description="Safety stop.")
    wake: WakeConfig = Field(default_factory=WakeConfig, description="Optional offline wake word.")
    agents: dict[Name, AgentConfig] = Field(
        default_factory=lambda: {"assistant": AgentConfig()},
        description="LLM agents by name.",
    )
    workflows: dict[Name, WorkflowConfig] = Field(
        default_factory=dict, description="Workflows by name; usable wherever an agent name is."
    )
    background_agents: list[BackgroundAgentConfig] = Field(
        default_factory=list, description="Agents triggered by events, each on its own supervised thread."
    )
    pool: PoolConfig = Field(default_factory=PoolConfig, description="The agent pool.")
    orchestration: OrchestrationConfig = Field(
        default_factory=OrchestrationConfig, description="Multi-agent orchestration."
    )
    bridges: BridgesConfig = Field(default_factory=BridgesConfig, description="ROS 2, ROS 1 and Zenoh bridges.")
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig, description="Runtime.")
    dashboard: DashboardConfig = Field(default_factory=DashboardConfig, description="The live web dashboard.")
    logging: LoggingConfig = Field(default_factory=LoggingConfig, description="Logging.")
    _folder: str | None = PrivateAttr(None)
    """The config file's folder, set by ``load_config``: ``module:function`` references are also
    looked for there (:mod:`edgevox.config.refs`). Not a key of the file."""

    @model_validator(mode="after")
    def _stop_phrases_of_the_language(self) -> AppConfig:
        """Stop phrases and negations not set in the file are those of the spoken language."""
        from edgevox.voice.stop_phrases import stop_phrases_for

        unset = {"stop_phrases", "negations"} - self.safety.model_fields_set
        if not unset or self.stt.language.lower().split("-")[0] == "en":
            return self
        try:
            phrases, negations = stop_phrases_for(self.stt.language)
        except ValueError as exc:
            if "stop_phrases" in unset:
                raise ValueError(f"safety.stop_phrases: {exc}") from None
            phrases, negations = (), ()  # phrases given for a language with no defaults: no negations
        if "stop_phrases" in unset:
            self.safety.stop_phrases = list(phrases)
        if "negations" in unset:
            self.safety.negations = list(negations)
        return self

    @model_validator(mode="after")
    def _names_resolve(self) -> AppConfig:
        """Every name used (agent, handoffs, workflow steps, background agents, pool) must exist."""
        if not self.agents:
            raise ValueError("agents: define at least one agent")
        overlap = set(self.agents) & set(self.workflows)
        if overlap:
            raise ValueError(f"workflows: {sorted(overlap)[0]!r} is already an agent name; names must be unique")
        known = list(self.agents) + list(self.workflows)
        _check_name("agent", self.agent, known)
        for name, agent in self.agents.items():
            context = (agent.llm and agent.llm.context_tokens) or self.llm.context_tokens
            if agent.max_tokens is not None and agent.max_tokens > context:
                raise ValueError(
                    f"agents.{name}.max_tokens = {agent.max_tokens} is more than its context_tokens = "
                    f"{context}; a reply cannot be longer than the context: lower it"
                )
            self.llm_for(name)  # its llm keys over llm: must make a valid section too
            for target in agent.handoffs:
                _check_name(f"agents.{name}.handoffs", target, list(self.agents))
            for target in agent.delegates:
                _check_name(f"agents.{name}.delegates", target, known)
        for name, wf in self.workflows.items():
            for step in wf.steps:
                _check_name(f"workflows.{name}.steps", step, known)
        seen: set[str] = set()
        for i, bg in enumerate(self.background_agents):
            _check_name(f"background_agents.{i}.agent", bg.agent, known)
            if bg.name in seen:
                raise ValueError(f"background_agents.{i}.name: {bg.name!r} is used twice; names must be unique")
            seen.add(bg.name)
        for name in self.pool.agents:
            _check_name("pool.agents", name, known)
        return self

    def llm_for(self, agent: str) -> LLMConfig:
        """The ``llm:`` section as agent ``agent`` uses it: its ``agents.<name>.llm`` keys, and
        its own ``max_tokens``/``temperature``, set over ``llm:`` (``llm:`` itself for an agent
        that sets none, or a name that is no agent)."""
        cfg = self.agents.get(agent)
        if cfg is None:
            return self.llm
        own = cfg.llm.model_dump(exclude_none=True) if cfg.llm is not None else {}
        own |= {k: v for k in ("max_tokens", "temperature") if (v := getattr(cfg, k)) is not None}
        if not own:
            return self.llm
        try:
            return LLMConfig.model_validate(self.llm.model_dump() | own)
        except ValidationError as exc:  # only the combination can be wrong: each key was checked on its own
            first = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise ValueError(f"agents.{agent}.llm: {first}") from None

    @property
    def main_agent(self) -> str:
        """Name of the agent or workflow that answers the user."""
        return self.agent or next(iter(self.agents))


def _check_name(where: str, name: str | None, known: list[str]) -> None:
    if name is None or name in known:
        return
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"{where}: no agent or workflow named {name!r}{hint} (defined: {', '.join(known) or 'none'})")
