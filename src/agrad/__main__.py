"""`python -m agrad` runs the command-line interface."""

from agrad.cli import main

main()
