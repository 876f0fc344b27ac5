"""Write a spoken question to a WAV file with the embedded Piper voice (no network needed).

    python scripts/make_question_wav.py question.wav ["What can you do for me?"]

Used by scripts/demo.sh to give the main job real speech on a machine with no microphone.
"""

from __future__ import annotations

import argparse

import numpy as np

from edgevox.engines.audio_wav import write_wav
from edgevox.engines.tts_piper import PiperTTS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="WAV file to write")
    parser.add_argument("text", nargs="?", default="Hello robot. What can you do for me?", help="what to say")
    parser.add_argument("--voice", default="piper-joe-medium", help="Piper voice model reference")
    args = parser.parse_args()
    tts = PiperTTS(args.voice)
    audio = np.concatenate(list(tts.synthesize(args.text)))
    silence = np.zeros(int(0.3 * tts.sample_rate_hz), dtype=np.float32)
    write_wav(args.path, np.concatenate([silence, audio, silence]), tts.sample_rate_hz)
    print(f"{args.path}: {audio.shape[0] / tts.sample_rate_hz:.1f} s of speech: {args.text!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
