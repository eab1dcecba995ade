"""The package's import graph: stages import downwards only, and nothing imports in a circle.

Every `import` counts, including those inside functions and under `if TYPE_CHECKING:`,
because a type-only circle is still a circle a reader has to untangle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agentwatch"

# Lower numbers sit lower in the data flow; a module may import only its own rank or below.
# Within a rank, modules may import each other as long as no circle forms.
RANKS = {
    "errors": 0,
    "paths": 0,
    "safefs": 0,
    "interpreter": 0,
    "store": 1,
    "record": 2,
    "config": 3,
    "verify": 4,
    "coverage": 4,
    "evidence": 5,
    "fleet": 6,
    "daemon": 7,
    "readers": 8,
    "install": 9,
    "ui": 9,
    "cli": 10,
    "__main__": 10,
}
# External contracts that import only the standard library (docs/architecture.md).
STDLIB_ONLY = {"hook", "hookclient", "standalone_verify", "platform_layer"}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_has_a_stage():
    unranked = sorted({stage(m) for m in graph() if m != "agentwatch"} - set(RANKS) - STDLIB_ONLY)
    assert unranked == []


def test_imports_point_down_the_data_flow():
    upward = []
    for module, targets in graph().items():
        if module == "agentwatch" or stage(module) in STDLIB_ONLY:
            continue
        for target in targets:
            if target == "agentwatch" or stage(target) in STDLIB_ONLY:
                continue
            if RANKS[stage(target)] > RANKS[stage(module)]:
                upward.append(f"{module} -> {target}")
    assert upward == []


# The one import an external contract makes beyond the standard library: the hook's slow
# path masks a frame before it spools it (docs/redaction.md), never on the fast path.
SLOW_PATH_IMPORTS = {"agentwatch.hookclient": {"agentwatch.daemon", "agentwatch.daemon.spool_redact"}}


def test_the_external_contracts_import_only_each_other():
    g = graph()
    for name in STDLIB_ONLY:
        allowed = SLOW_PATH_IMPORTS.get(f"agentwatch.{name}", set())
        assert {t for t in g[f"agentwatch.{name}"]
                if t != "agentwatch" and stage(t) not in STDLIB_ONLY and t not in allowed} == set(), name


def find_cycles(g: dict[str, set[str]]) -> list[list[str]]:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node)
    # A package's __init__ importing its own submodules is not a circle through them.
    return [c for c in cycles if not all(m.startswith(c[0] + ".") or m == c[0] for m in c)]


def test_no_import_circles():
    assert find_cycles(graph()) == []


def test_the_circle_finder_finds_circles():
    g = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    assert find_cycles(g) == [["a.x", "a.y", "a.z", "a.x"]]


def test_the_graph_reader_sees_known_edges():
    g = graph()
    assert "agentwatch.store.append" in g["agentwatch.daemon.writer"]
    assert "agentwatch.daemon.admission" in g["agentwatch.daemon.connection"]


# Modules that talk to a person or a harness directly; everything else logs or returns.
PRINTS_ALLOWED = {"agentwatch.cli", *(f"agentwatch.cli.{group}" for group in ("app", "record", "query", "evidence",
                  "fleet", "setup", "ui", "retention", "docs", "render", "jsonerror")), "agentwatch.hook", "agentwatch.hookclient", "agentwatch.standalone_verify"}

# The log handler writes stderr; the verify worker speaks its pickle protocol on stdin/stdout.
STREAMS_ALLOWED = PRINTS_ALLOWED | {"agentwatch.daemon.logs", "agentwatch.verify.worker", "agentwatch.fleet.worker"}


def test_library_code_never_prints():
    printing = []
    for name, path in modules().items():
        if name in PRINTS_ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                printing.append(f"{name}:{node.lineno}")
            if (name not in STREAMS_ALLOWED and isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr")
                    and isinstance(node.value, ast.Name) and node.value.id == "sys"):
                printing.append(f"{name}:{node.lineno} sys.{node.attr}")
    assert printing == []


def test_every_setting_is_read_somewhere():
    """A key's value is looked up (`cfg["name"]`, `values["name"]`) somewhere besides its declaration,
    or becomes a field of the daemon's ServeConfig (daemon/settings.py's FIELD_KEYS)."""
    from agentwatch import config
    from agentwatch.daemon.settings import FIELD_KEYS

    sources = "\n".join(p.read_text() for p in modules().values())
    unread = [name for name in config.KEYS if f'["{name}"]' not in sources and name not in FIELD_KEYS.values()]
    assert unread == []


def test_test_helpers_live_in_tests_support():
    """tests/ holds test modules, its conftest and the two vector generators; helpers go to tests/support/."""
    tests = Path(__file__).resolve().parent
    others = sorted(p.name for p in tests.glob("*.py")
                    if not p.name.startswith("test_") and p.name not in ("conftest.py", "__init__.py"))
    assert others == ["make_bundle_vector.py", "make_packed_vector.py"]
