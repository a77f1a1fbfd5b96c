"""The WSGI application loads every view when a worker starts, not in its first request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> str:
    """What ``code`` prints in a fresh interpreter with Redline's settings."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "redteam.settings"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_importing_the_wsgi_application_loads_the_urlconf_and_the_ingestion_views():
    code = (
        "import sys, redteam.wsgi; "
        "print(all(m in sys.modules for m in ("
        "'memory.transfer.ingest.views', 'memory.storage.write', "
        "'memory.dashboards.views')))"
    )
    assert _python(code).strip() == "True"


def test_the_start_up_objects_are_frozen_out_of_the_cyclic_collector():
    code = (
        "import gc; before = gc.get_freeze_count(); import redteam.wsgi; "
        "print(before, gc.get_freeze_count())"
    )
    before, after = map(int, _python(code).split())
    # Django, the views and the URLconf: far more than the interpreter's own start.
    assert after - before > 50_000
