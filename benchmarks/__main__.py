"""Entry point for ``python -m benchmarks``."""

import sys

from benchmarks.harness import main

sys.exit(main())
