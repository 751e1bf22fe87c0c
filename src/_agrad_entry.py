"""The `agrad` console script's entry point, outside the agrad package on purpose.

Importing `agrad.cli` runs `agrad/__init__.py` first, which loads NumPy and the
engine (about a tenth of a second). A KeyboardInterrupt raised in that time can
surface as a traceback, as an ImportError (NumPy wraps it), or be swallowed by an
import-lock callback. So before anything is imported, Ctrl-C is made to end the
process at once, cleanly: ``error: interrupted`` on stderr, exit status 130. The
parts of a command that report what they did so far (fit, suites) turn
KeyboardInterrupt back on for their duration (`agrad.cli.interrupts`).
"""

import os
import signal


def exit_interrupted(signum: int, frame: object) -> None:
    """SIGINT handler: say so and exit 130, from wherever the process is."""
    try:
        os.write(2, b"error: interrupted\n")
    finally:
        os._exit(130)


# Installed as this module is imported (only the console script imports it), not in main():
# the interval in which Ctrl-C still surfaces as a traceback is then the interpreter's own
# start-up and the generated script's ``import re``, before any of agrad's code runs.
signal.signal(signal.SIGINT, exit_interrupted)


def main() -> None:
    signal.signal(signal.SIGINT, exit_interrupted)
    from agrad.cli import main as agrad_main

    agrad_main()
