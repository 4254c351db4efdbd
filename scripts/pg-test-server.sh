#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the PostgreSQL store's tests and prints the line
# to export its URL:
#
#     eval "$(scripts/pg-test-server.sh)"     # sets BATON_PG_TEST_URL
#
# - installs Debian's `postgresql` package when no server binaries are found;
# - `initdb` in a private directory (default /tmp/baton-pg-test, or $BATON_PG_DIR), trust
#   authentication, listening on a unix socket in that directory only (no TCP);
# - as root (CI), the cluster is owned and run by the package's `postgres` user, since initdb
#   and postgres refuse to run as root;
# - safe to run again: a cluster already running in the directory is reused;
# - $BATON_PG_SHARED_BUFFERS sets the server's shared_buffers (default 128MB, PostgreSQL's
#   own default; the benchmarks in the README ran with 4GB, a quarter of a 16 GB server as
#   PostgreSQL's tuning advice has it). It takes effect when the server starts.
# Stop it with: pg_ctl -D "$BATON_PG_DIR/data" stop (as its owner).
set -euo pipefail

dir="${BATON_PG_DIR:-/tmp/baton-pg-test}"
shared_buffers="${BATON_PG_SHARED_BUFFERS:-128MB}"
port="${BATON_PG_PORT:-55432}"
database=baton_test

log() { echo "pg-test-server: $*" >&2; }

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

bin="$(find_bin)"
if [ -z "$bin" ]; then
    log "installing postgresql"
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
        sudo_cmd=(sudo)
    fi
    "${sudo_cmd[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq postgresql >&2
    bin="$(find_bin)"
fi
if [ -z "$bin" ]; then
    log "no PostgreSQL server binaries; the PostgreSQL tests will be skipped"
    exit 1
fi

# Who runs the server: ourselves, or `postgres` when we are root.
as_owner=()
owner="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    as_owner=(runuser -u postgres --)
fi

mkdir -p "$dir"
if [ "$(id -u)" -eq 0 ]; then
    chown "$owner" "$dir"
fi
chmod 700 "$dir"

if ! "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U "$owner" -E UTF8 \
            --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
            log "initdb failed:"; cat "$dir/initdb.log" >&2; exit 1; }
    fi
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -c listen_addresses= -p $port -c fsync=off -c max_connections=200 -c shared_buffers=$shared_buffers" start >&2 || {
        log "the server did not start:"; tail -20 "$dir/server.log" >&2; exit 1; }
fi

"${as_owner[@]}" "$bin/psql" -h "$dir" -p "$port" -U "$owner" -d postgres -Atqc \
    "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1 ||
    "${as_owner[@]}" "$bin/createdb" -h "$dir" -p "$port" -U "$owner" "$database"

# The socket directory percent-encoded as the URL's host.
host="${dir//\//%2F}"
echo "export BATON_PG_TEST_URL='postgres://$owner@$host:$port/$database'"
log "running: postgres://$owner@$host:$port/$database"
