"""agentwatch: a tamper-evident flight recorder for AI coding agents."""

__version__ = "0.1.0"
