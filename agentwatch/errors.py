"""Errors the library raises, each carrying the CLI exit code it maps to.

Exit codes (docs/architecture.md): 0 ok, 1 a check found a problem, 2 usage or config
error, 3 store or daemon unreachable. Four findings about the store as a whole,
which the chain alone cannot show, are problems found by a check too, each with a
code of its own so that a script can tell them apart without parsing JSON:
4 replaced, 5 rolled_back, 6 truncated, 7 schema_changed (docs/reliability.md,
"Store identity"). Several at once: the first of that list.
"""

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_REPLACED = 4
EXIT_ROLLED_BACK = 5
EXIT_TRUNCATED = 6
EXIT_SCHEMA_CHANGED = 7

# Finding kinds with an exit code of their own, in the order they win when several are found.
FINDING_EXIT = {"replaced": EXIT_REPLACED, "rolled_back": EXIT_ROLLED_BACK, "truncated": EXIT_TRUNCATED,
                "schema_changed": EXIT_SCHEMA_CHANGED}


def exit_for_findings(kinds) -> int:
    """The exit code of a check that found these finding kinds: 0 for none, 1 for chain findings."""
    kinds = list(kinds)
    if not kinds:
        return EXIT_OK
    for kind, code in FINDING_EXIT.items():
        if kind in kinds:
            return code
    return EXIT_PROBLEM


class AgentwatchError(Exception):
    exit_code = EXIT_USAGE
    next_step: str | None = None  # what to do about it, said after the error (cli.app.fail)


class UsageError(AgentwatchError):
    exit_code = EXIT_USAGE


class StoreUnreachable(AgentwatchError):
    """The store does not exist, cannot be opened, or is locked."""

    exit_code = EXIT_UNREACHABLE


class StoreMissing(StoreUnreachable):
    """No file at the store's path."""

    next_step = ("`agentwatch path` shows where commands look (--store, AGENTWATCH_STORE); "
                 "`agentwatch serve` records into a new store there")


class SchemaError(AgentwatchError):
    """The store is not an agentwatch store, or its schema is not one we can use."""

    exit_code = EXIT_UNREACHABLE


class ReadOnlyViolation(AgentwatchError):
    """A read-only command was asked to write or attach."""

    exit_code = EXIT_USAGE
