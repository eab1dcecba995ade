"""`python -m agentwatch.cli`: the command line (services and tests run it this way)."""

from agentwatch.cli import main

main()
