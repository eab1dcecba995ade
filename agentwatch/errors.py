"""Errors the library raises, each carrying the CLI exit code it maps to.

Exit codes (docs/architecture.md): 0 ok, 1 a check found a problem, 2 usage or config
error, 3 store or daemon unreachable.
"""

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3


class AgentwatchError(Exception):
    exit_code = EXIT_USAGE


class UsageError(AgentwatchError):
    exit_code = EXIT_USAGE


class StoreUnreachable(AgentwatchError):
    """The store does not exist, cannot be opened, or is locked."""

    exit_code = EXIT_UNREACHABLE


class SchemaError(AgentwatchError):
    """The store is not an agentwatch store, or its schema is not one we can use."""

    exit_code = EXIT_UNREACHABLE


class ReadOnlyViolation(AgentwatchError):
    """A read-only command was asked to write or attach."""

    exit_code = EXIT_USAGE
