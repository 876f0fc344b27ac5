#!/usr/bin/env bash
# The main job on a fresh Debian machine: set up, make a spoken question with the embedded
# Piper voice, let the default assistant answer it headless, and write the answer to reply.wav.
#   bash scripts/demo.sh ["your question"]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# shellcheck source=scripts/venv.sh
source scripts/venv.sh

QUESTION="${1:-Hello robot. What can you do for me?}"
mkdir -p out
"$PY" scripts/make_question_wav.py out/question.wav "$QUESTION"
edgevox run default --input out/question.wav --output out/reply.wav
echo "listen to the answer: paplay out/reply.wav (pulseaudio-utils, installed by setup; works with PipeWire too)"
echo "run edgevox yourself: $EDGEVOX_VENV/bin/edgevox run default --text   (or first: source $EDGEVOX_VENV/bin/activate)"
