"""``manage.py import_graph``: the import graph of the code's parts, as a Mermaid diagram.

The parts are the layers that ``lint-imports`` checks (``[tool.importlinter]`` in
pyproject.toml); an arrow means "imports", labelled with how many module-to-module imports it
stands for. CONTRIBUTING.md shows this output, and a test keeps the two the same.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

#: The parts drawn, most specific prefix first; a module belongs to the first that matches.
PARTS: tuple[tuple[str, str], ...] = (
    ("redteam.urls", "redteam.urls"),
    ("redteam.api_urls", "redteam.urls"),
    ("redteam.core", "redteam.core"),
    ("redteam", "redteam"),
    ("memory.management", "memory.management"),
    ("memory.review", "memory.review"),
    ("memory.dashboards", "memory.dashboards"),
    ("memory.findings", "memory.findings"),
    ("memory.transfer", "memory.transfer"),
    ("memory.admin", "memory.admin"),
    ("memory.demo", "memory.demo"),
    ("memory.storage", "memory.storage"),
    ("memory.models", "memory.models"),
    ("seeds.management", "seeds.management"),
    ("seeds", "seeds"),
)


def part_of(module: str) -> str | None:
    """The part ``module`` belongs to; None for migrations and the apps' own package files."""
    if ".migrations" in module or module in ("memory", "seeds", "redteam", "memory.apps"):
        return None
    for prefix, part in PARTS:
        if module == prefix or module.startswith(prefix + "."):
            return part
    return None


def part_edges() -> Counter[tuple[str, str]]:
    """``{(importer part, imported part): number of module imports}``."""
    try:
        import grimp
    except ImportError as exc:  # a test dependency: ./dev.sh setup installs it
        raise CommandError("needs grimp (pip install -e '.[test]')") from exc
    graph = grimp.build_graph("redteam", "memory", "seeds", cache_dir=None)
    edges: Counter[tuple[str, str]] = Counter()
    for module in graph.modules:
        source = part_of(module)
        if source is None:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            target = part_of(imported)
            if target is not None and target != source:
                edges[(source, target)] += 1
    return edges


def mermaid(edges: Counter[tuple[str, str]]) -> str:
    """The graph as a Mermaid ``flowchart``: each part once, then the arrows."""
    parts = sorted({part for edge in edges for part in edge})
    lines = ["flowchart TD"]
    lines += [f'    {part.replace(".", "_")}["{part}"]' for part in parts]
    lines += [
        f"    {source.replace('.', '_')} -->|{count}| {target.replace('.', '_')}"
        for (source, target), count in sorted(edges.items())
    ]
    return "\n".join(lines) + "\n"


def replace_block(text: str, graph: str) -> str:
    """``text`` with its first Mermaid code block replaced by ``graph``."""
    start = text.index("```mermaid\n") + len("```mermaid\n")
    end = text.index("```", start)
    return text[:start] + graph + text[end:]


class Command(BaseCommand):
    help = "Print the import graph of the code's parts as a Mermaid diagram."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--update",
            metavar="FILE",
            help="Replace the first ```mermaid block of FILE (e.g. CONTRIBUTING.md) instead.",
        )

    def handle(self, *args: Any, update: str | None = None, **options: Any) -> None:
        graph = mermaid(part_edges())
        if update is None:
            self.stdout.write(graph, ending="")
            return
        path = Path(update)
        path.write_text(replace_block(path.read_text(encoding="utf-8"), graph), encoding="utf-8")
        self.stdout.write(f"updated {path}")
