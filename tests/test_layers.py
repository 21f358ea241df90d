"""Imports flow one way, down the layers the README's design section names, with no cycles."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "sdvm_hf"

LAYERS: list[tuple[str, ...]] = [
    (
        "sdvm_hf.errors",
        "sdvm_hf._wire",
        "sdvm_hf._atomic",
        "sdvm_hf._progress",
        "sdvm_hf._lock",
        "sdvm_hf._hash",
        "sdvm_hf._restart",
        "sdvm_hf._priority",
        "sdvm_hf.record",
        "sdvm_hf.verdicts",
    ),
    ("sdvm_hf._frozen",),
    ("sdvm_hf.samples",),
    ("sdvm_hf.arrow",),
    ("sdvm_hf.convert",),
    ("sdvm_hf.sources",),
    ("sdvm_hf.presets",),
    ("sdvm_hf.training",),
    ("sdvm_hf.files", "sdvm_hf.summary", "sdvm_hf._html", "sdvm_hf.engines", "sdvm_hf.render.text"),
    ("sdvm_hf.diff", "sdvm_hf.shuffle"),
    ("sdvm_hf.formulations",),
    ("sdvm_hf.render",),
    ("sdvm_hf.report",),
    ("sdvm_hf.jobs", "sdvm_hf.service", "sdvm_hf.exporter"),
    ("sdvm_hf.cli", "sdvm_hf.__main__"),
]
"""Bottom up; a module may import from its own layer or the layers below it."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    for number, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return number
    raise AssertionError(
        f"{module} is in no layer: add it to LAYERS (and the layers table in docs/design.md)"
    )


def imports(path: Path, runtime: bool = False) -> set[str]:
    """The package's modules ``path`` imports (``runtime``: not those under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if runtime:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
                node.body = []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("sdvm_hf.")}


MODULES = {
    module_name(path): imports(path)
    for path in sorted(PACKAGE.rglob("*.py"))
    if module_name(path) != "sdvm_hf"  # the package itself only re-exports
}


def test_every_module_imports_only_from_its_layer_or_below() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in MODULES.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_the_import_graph_has_no_cycles() -> None:
    def package_of(name: str) -> str:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    runtime = {
        module_name(path): imports(path, runtime=True)
        for path in sorted(PACKAGE.rglob("*.py"))
        if module_name(path) != "sdvm_hf"
    }
    # a type-only import (under TYPE_CHECKING) runs nothing, so it cannot close a cycle
    graph = {m: {package_of(t) for t in targets} - {m} for m, targets in runtime.items()}
    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> None:
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", " -> ".join([*trail, module])
        state[module] = "open"
        for target in graph.get(module, ()):
            if not target.endswith("__init__") and target in graph and graph[target] is not None:
                if target.count(".") < module.count(".") and module.startswith(target + "."):
                    continue  # a subpackage's __init__ re-exporting from below is not a cycle
                visit(target, [*trail, module])
        state[module] = "done"

    for module in graph:
        visit(module, [])


NEVER = {
    "sdvm_hf.files": ("sdvm_hf.sources",),
    "sdvm_hf.jobs": ("sdvm_hf.sources",),
    "sdvm_hf.summary": ("sdvm_hf.sources", "sdvm_hf.presets"),
    "sdvm_hf.render": ("sdvm_hf.sources", "sdvm_hf.presets"),
    "sdvm_hf.report": ("sdvm_hf.sources", "sdvm_hf.presets"),
}
"""The output side never reads through the input side: sample files, jobs, summaries and
reports take any :class:`~sdvm_hf.arrow.sequence.SampleBatches`, loaded or streamed. A rule
for a package holds for each of its modules."""


def test_the_output_side_never_imports_the_input_side() -> None:
    broken = [
        f"{module} imports {target}"
        for rule, forbidden in NEVER.items()
        for module, targets in MODULES.items()
        if module == rule or module.startswith(rule + ".")
        for target in targets
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    ]
    assert broken == []


DISTRIBUTIONS = {"yaml": "pyyaml", "huggingface_hub": "huggingface_hub"}
"""Import names whose distribution is named otherwise (the rest are spelled alike)."""


def third_party_imports() -> set[str]:
    import sys

    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
    return {name for name in found if name not in sys.stdlib_module_names and name != "sdvm_hf"}


def test_every_package_the_code_imports_is_declared() -> None:
    import re
    import tomllib

    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    specs = list(project["project"]["dependencies"])
    for extra in project["project"]["optional-dependencies"].values():
        specs += extra
    declared = {re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower() for spec in specs}
    wanted = {DISTRIBUTIONS.get(name, name).lower() for name in third_party_imports()}
    assert wanted - declared == set()
    assert {"pyarrow", "datasets", "pydantic", "numpy"} <= wanted  # the reader finds imports


def test_no_package_imports_another_packages_private_module() -> None:
    def package(module: str) -> str:
        return module if module in PACKAGES else module.rsplit(".", 1)[0]

    reached = [
        f"{module} imports {target}"
        for module, targets in MODULES.items()
        for target in targets
        if (private := _private_owner(target)) is not None
        and not (package(module) == private or package(module).startswith(private + "."))
    ]
    assert reached == []


PACKAGES = {
    module_name(path.parent / "__init__.py")
    for path in PACKAGE.rglob("__init__.py")
    if path.parent != PACKAGE
}


def _private_owner(module: str) -> str | None:
    """The package whose private module ``module`` is (``sdvm_hf.arrow._codec``: arrow)."""
    parts = module.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_"):
            return ".".join(parts[:index])
    return None


def test_the_layers_table_of_docs_design_md_is_this_files_table() -> None:
    import re

    text = (PACKAGE.parent / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    named = [
        [f"sdvm_hf.{name}" for name in re.findall(r"`([\w]+)(?:\.py|/)`", row.split(" | ")[0])]
        for row in rows
    ]
    listed = [module for row in named for module in row]
    top = [p for layer in LAYERS for p in layer if p.count(".") == 1]
    assert sorted(listed) == sorted(top)  # every layer's module once, nothing else
    numbers = [layer_of(row[0]) for row in named]
    assert all(layer_of(m) == layer_of(row[0]) for row in named for m in row)  # one layer a row
    assert numbers == sorted(numbers)  # bottom up
