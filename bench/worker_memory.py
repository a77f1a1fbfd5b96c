"""Memory of a gunicorn worker: idle, and its peak while ingesting batches of growing size.

One worker (so every request lands on it) on a scratch database; batches of PyRIT 0.12 pieces,
one score per piece and one attack result per 10 pieces, up to a body near the 64 MiB limit
(``INGEST_MAX_BODY_MB``; with these realistic field sizes it binds before
``INGEST_MAX_ITEMS``). Prints the worker's resident memory after start-up and its peak
(``VmHWM``) after each batch, and the peak's growth per item, which docs/deployment.md uses to
size ``WEB_CONCURRENCY``. Usage::

    .venv/bin/python bench/worker_memory.py                     # SQLite
    .venv/bin/python bench/worker_memory.py --databases sqlite,postgres
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import serving  # noqa: E402
from bench.payloads import batch  # noqa: E402


def _worker_memory(master: int) -> tuple[float, float]:
    """(resident, peak resident) MiB of the master's one worker process."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    status = Path(f"/proc/{children[0]}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    kib = {name: int(fields[name].split()[0]) for name in ("VmRSS", "VmHWM")}
    return kib["VmRSS"] / 1024, kib["VmHWM"] / 1024


def run(database: str, sizes: list[int]) -> list[dict]:
    """Post one batch of each size (pieces) to a one-worker server; memory after each."""
    rows = []
    with serving(database, workers=1) as server:
        if server is None:
            return []
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=900)
        headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        time.sleep(0.5)  # let the worker settle after its first request
        idle, _ = _worker_memory(server.pid)
        rows.append({"batch": "idle", "items": 0, "rss": idle, "peak": idle})
        for index, pieces in enumerate(sizes):
            body = json.dumps(batch(index + 1, conversations=pieces // 10, turns=10)).encode()
            items = pieces * 2 + pieces // 10
            conn.request("POST", "/api/v1/ingest/", body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status} for {pieces} pieces")
            rss, peak = _worker_memory(server.pid)
            rows.append({"batch": f"{pieces:,} pieces", "items": items, "rss": rss, "peak": peak})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite")
    parser.add_argument(
        "--sizes",
        default="1000,5000,20000",
        help="pieces per batch (20,000: 58 MB of JSON, near the 64 MiB body limit)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"{'database':<10} {'batch':>16} {'items':>8} {'RSS MiB':>9} {'peak MiB':>9}",
        f"{'KiB/item':>9}",
    )
    for database in args.databases.split(","):
        rows = run(database, sizes)
        idle = rows[0]["peak"] if rows else 0.0
        for row in rows:
            per_item = (row["peak"] - idle) * 1024 / row["items"] if row["items"] else 0.0
            print(
                f"{database:<10} {row['batch']:>16} {row['items']:>8,} {row['rss']:>9.0f} "
                f"{row['peak']:>9.0f} {per_item:>9.1f}"
            )


if __name__ == "__main__":
    main()
