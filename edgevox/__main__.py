import sys

from edgevox.cli.main import main

sys.exit(main())
