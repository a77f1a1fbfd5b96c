"""The architecture: the import contracts hold, and CONTRIBUTING shows the current graph."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from redteam.management.commands.import_graph import part_of

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold():
    """Layers, one-way seeds, a platform that imports no app, no cycles (pyproject.toml)."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_contributing_shows_the_current_import_graph():
    out = StringIO()
    call_command("import_graph", stdout=out)
    graph = out.getvalue()
    assert graph.startswith("flowchart TD\n")
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert f"```mermaid\n{graph}```" in contributing, (
        "CONTRIBUTING.md's import graph is stale: run "
        "`.venv/bin/python manage.py import_graph --update CONTRIBUTING.md`"
    )


def test_every_module_of_the_apps_belongs_to_a_drawn_part():
    assert part_of("memory.storage.write") == "memory.storage"
    assert part_of("redteam.api_urls") == "redteam.urls"
    assert part_of("redteam.core.forms") == "redteam.core"
    assert part_of("redteam.tokens") == "redteam"
    assert part_of("memory.migrations.0001_initial") is None
    modules = [
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for app in ("memory", "seeds", "redteam")
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and path.name != "__init__.py"
    ]
    undrawn = [m for m in modules if part_of(m) is None and m not in ("memory.apps",)]
    assert undrawn == []
