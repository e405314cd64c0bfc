"""`python -m inspector`: the GUI, or a headless sub-command."""

import sys

from inspector.cli import main

sys.exit(main())
