#!/usr/bin/env bash
# Redline's two commands:
#   ./dev.sh up      set up everything (virtualenv, install, migrate, demo data, admin login)
#                    and serve the app on http://127.0.0.1:8000
#   ./dev.sh test    run the whole test suite, one worker per core (extra arguments go to pytest)
# Also: ./dev.sh setup (virtualenv + install only).
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
MIN_MINOR=12

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

python_ok() {
  # Is "$1" a Python 3.MIN_MINOR+ interpreter with venv support?
  "$1" -c "import sys, venv; sys.exit(0 if sys.version_info >= (3, $MIN_MINOR) else 1)" 2>/dev/null
}

find_python() {
  local candidates=() c found=()
  [ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
  candidates+=(python3.14 python3.13 python3.12)
  # pyenv and hand-built interpreters are often installed but not on PATH.
  for c in "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 /usr/local/bin/python3.1[2-9] \
           /usr/bin/python3.1[2-9] python3; do
    candidates+=("$c")
  done
  for c in "${candidates[@]}"; do
    if command -v "$c" >/dev/null 2>&1 || [ -x "$c" ]; then
      if python_ok "$c"; then echo "$c"; return 0; fi
      found+=("$c ($("$c" -V 2>&1 || echo unknown))")
    fi
  done
  die "Redline needs Python >= 3.$MIN_MINOR, and none was found.
  Looked at: ${found[*]:-nothing on PATH}
  Install one (e.g. 'pyenv install 3.12', or your system's python3.12 and python3.12-venv
  packages) or point PYTHON at it: PYTHON=/path/to/python3.12 ./dev.sh up"
}

setup() {
  if [ ! -x "$VENV/bin/python" ] || ! python_ok "$VENV/bin/python"; then
    local py
    py=$(find_python)
    say "Creating virtualenv with $py ($("$py" -V 2>&1))"
    rm -rf "$VENV"
    "$py" -m venv "$VENV"
  fi
  # Reinstall only when the dependency list changed since the last install.
  local stamp="$VENV/.redline-installed" want
  want=$(cat pyproject.toml client/pyproject.toml | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "Installing Redline and its test dependencies"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    if [ "${REDLINE_LOCKED:-0}" = 1 ]; then
      # Exactly the pinned versions, each checked against its recorded hashes (docs/deployment.md).
      say "Installing the pinned dependencies of requirements.lock (hashes checked)"
      "$VENV/bin/python" -m pip install --quiet --require-hashes -r requirements.lock
      "$VENV/bin/python" -m pip install --quiet --no-deps -e ./client -e .
    else
      # The PyRIT reader the importer uses ships in the push client's distribution (client/).
      "$VENV/bin/python" -m pip install --quiet -e ./client
      "$VENV/bin/python" -m pip install --quiet -e ".[test]"
    fi
    echo "$want" > "$stamp"
  fi
}

cmd=${1:-up}
[ $# -gt 0 ] && shift
case "$cmd" in
  setup)
    setup
    ;;
  up)
    setup
    export DEBUG=${DEBUG:-1}
    say "Migrating the database (${DATABASE_URL:-SQLite file var/redline.sqlite3})"
    "$VENV/bin/python" manage.py migrate --no-input -v 0
    say "Loading demo data (skipped when the database already holds memory)"
    "$VENV/bin/python" manage.py demo --if-empty
    "$VENV/bin/python" manage.py ensure_admin
    say "Starting the background worker (imports uploaded in the browser)"
    "$VENV/bin/python" manage.py import_worker &
    worker=$!
    say "Starting the webhook worker (deliveries to the endpoints set up in the admin)"
    "$VENV/bin/python" manage.py deliver_webhooks --loop &
    webhooks=$!
    say "Serving on http://127.0.0.1:8000 (Ctrl-C to stop)"
    "$VENV/bin/python" manage.py runserver 127.0.0.1:8000 "$@" &
    server=$!
    # Stopping dev.sh (Ctrl-C, or a TERM from a supervisor) stops the workers and the server,
    # the autoreloader's serving child included, which a kill of its parent would orphan.
    stop() {
      pkill -TERM -P "$server" 2>/dev/null || true
      kill "$worker" "$webhooks" "$server" 2>/dev/null || true
    }
    trap stop EXIT
    trap 'exit 130' INT TERM
    wait "$server"
    ;;
  test)
    setup
    # One worker process per core (pytest-xdist), each with its own test database; "-n 0" after
    # it runs everything in this one process.
    exec "$VENV/bin/python" -m pytest -n auto "$@"
    ;;
  *)
    die "unknown command '$cmd' (use: up, test, setup)"
    ;;
esac
