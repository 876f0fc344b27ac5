#!/usr/bin/env python3
"""Runtime benchmark: the same as ``edgevox bench runtime [options]``.

Runs from a checkout without installing (the repository root is put on ``sys.path``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edgevox.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", "runtime", *sys.argv[1:]]))
