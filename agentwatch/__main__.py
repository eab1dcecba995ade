"""`python -m agentwatch`: the same command as `agentwatch`."""

from agentwatch.cli import main

if __name__ == "__main__":
    main()
