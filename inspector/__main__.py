"""`python -m inspector`: the GUI, or a headless sub-command."""

import sys

from inspector.cli import main

# Guarded: a worker process started with "spawn" (the window's triage) imports this module as
# `__mp_main__` and must not start the application again.
if __name__ == "__main__":
    if getattr(sys, "frozen", False):  # the bundle: worker processes start through its executable
        import multiprocessing

        multiprocessing.freeze_support()
    sys.exit(main())
