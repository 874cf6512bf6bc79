"""No import circle among the project's modules, and the dependency direction of the house rules holds."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "engine", "catalog")


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every project module `name` imports, at the top or inside a function (a lazy import hides a circle, it
    does not remove it); `from a import b` counts as importing a.b when that is a module, else a."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a module: the longest known prefix
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == 1:
                return path[path.index(successor):] + [successor]
            if successor not in state and (cycle := visit(successor)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_graph_is_read():
    graph = import_graph()
    assert "bot.store" in graph["bot.features.core"]
    assert "bot.features.questions" in graph["bot.features.commands"]
    assert "bot.telegram.handlers" in graph["bot.telegram.app"]  # a lazy import inside build_application counts


def test_no_import_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_nothing_imports_bot_and_engine_does_not_import_telegram():
    graph = import_graph()
    for name, targets in graph.items():
        if not name.startswith("bot"):
            assert not {t for t in targets if t.startswith("bot")}, name
    for name, path in project_modules().items():
        if not name.startswith("bot"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
            names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
            assert not {n for n in names if n == "telegram" or n.startswith("telegram.")}, name


# The rooms of each package from the top floor down: a module may import its own room and the rooms below it,
# never one above (docs/architecture.md draws the same map).
BOT_FLOORS = (("bot.cli",), ("bot.telegram",), ("bot.operators",), ("bot.features",),
              ("bot.texts", "bot.store", "bot.config", "bot.metrics"))
# engine.speed sits under engine.fit: a layout's tok/s (ranking, "a faster layout") is the speed estimate; it
# reads the sized request (engine.sizing) and nothing above it.
ENGINE_FLOORS = (("engine.answer",), ("engine.parse",), ("engine.serving",), ("engine.fit",), ("engine.speed",),
                 ("engine.sizing",), ("engine.formats",), ("engine.models",),
                 ("engine.notes", "engine.formula", "engine.memo"))
LOOSE_MODULES_AT_MOST = 4


def room_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def floor_of(module: str, floors: tuple[tuple[str, ...], ...]) -> int | None:
    room = room_of(module)
    return next((index for index, rooms in enumerate(floors) if room in rooms), None)


def upward_arrows(floors: tuple[tuple[str, ...], ...]) -> list[str]:
    arrows = []
    for name, targets in import_graph().items():
        here = floor_of(name, floors)
        for target in targets:
            there = floor_of(target, floors)
            if here is not None and there is not None and there < here:
                arrows.append(f"{name} -> {target}")
    return sorted(arrows)


def test_every_module_of_bot_and_engine_has_a_floor():
    for name in project_modules():
        if name.startswith("bot."):
            assert floor_of(name, BOT_FLOORS) is not None, name
        elif name.startswith("engine."):
            assert floor_of(name, ENGINE_FLOORS) is not None, name


def test_no_arrow_runs_up_a_floor():
    assert upward_arrows(BOT_FLOORS) == []
    assert upward_arrows(ENGINE_FLOORS) == []


def test_the_floor_check_sees_an_upward_arrow():
    assert floor_of("bot.features.x", BOT_FLOORS) == 3 and floor_of("bot.cli.main", BOT_FLOORS) == 0
    assert floor_of("engine.sizing.rule", ENGINE_FLOORS) == 5


def test_few_loose_modules_at_the_top_of_bot_and_engine():
    for package in ("bot", "engine"):
        loose = sorted(path.name for path in (ROOT / package).glob("*.py") if path.name != "__init__.py")
        assert len(loose) <= LOOSE_MODULES_AT_MOST, (package, loose)
