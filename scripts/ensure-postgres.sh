#!/usr/bin/env bash
# `make test` runs the store's tests against a real PostgreSQL server (tests/support/postgres.py starts one):
# install Debian's `postgresql` package (initdb, pg_ctl, psql) when its binaries are missing. A no-op when they are
# there; without root (a developer laptop) it only says so, and the PostgreSQL tests skip with that reason.
set -euo pipefail

if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-postgres: initdb not found and not root: install PostgreSQL (e.g. apt-get install postgresql)" \
         "or the PostgreSQL tests will skip" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-postgres: initdb not found and no apt-get: install PostgreSQL's server binaries" >&2
    exit 1
fi
echo "ensure-postgres: installing postgresql (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq postgresql >/dev/null
# The suite starts a server of its own on a free port, so a cluster the package may start is no conflict; only
# check that the binaries are where tests/support/postgres.py looks.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
