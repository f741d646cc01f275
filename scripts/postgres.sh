#!/usr/bin/env bash
# PostgreSQL for the service's tests (tests/test_serve_*.py run on SQLite and on PostgreSQL), idempotently:
#   1. Debian's postgresql, installed if missing (needs root and apt-get)
#   2. a cluster, created if there is none, and started if it is down
#   3. a role and a database for the tests; the role may create databases (each test makes its own)
# The tests read GRADER_TEST_POSTGRES (default below). Without root, an unreachable server makes them skip,
# except under GRADER_REQUIRE_POSTGRES=1 (CI), where they fail.
set -euo pipefail
URL_USER=grader_test
URL_PASSWORD=grader_test
URL_DB=grader_test
export GRADER_TEST_POSTGRES="${GRADER_TEST_POSTGRES:-postgresql://$URL_USER:$URL_PASSWORD@127.0.0.1:5432/$URL_DB}"

if [ "$(id -u)" -ne 0 ]; then
    echo "postgres: not root; using whatever answers at GRADER_TEST_POSTGRES (tests skip without it unless required)"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v pg_lsclusters >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    echo "postgres: installing Debian's postgresql ..."
    { apt-get install -y -qq postgresql >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; }; } \
        || { echo "postgres: apt-get install postgresql failed" >&2; exit 1; }
fi
if [ -z "$(pg_lsclusters -h 2>/dev/null)" ]; then
    version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
    echo "postgres: creating cluster $version/main"
    pg_createcluster "$version" main >/dev/null
fi
read -r version cluster port status _ <<<"$(pg_lsclusters -h | head -1)"
if [ "$status" != "online" ]; then
    echo "postgres: starting cluster $version/$cluster on port $port"
    pg_ctlcluster "$version" "$cluster" start
fi
for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 1
done
pg_isready -q -h 127.0.0.1 -p "$port" || { echo "postgres: the server on port $port does not answer" >&2; exit 1; }
psql_admin() { runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -qAt "$@"; }
if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$URL_USER'")" != "1" ]; then
    psql_admin -c "CREATE ROLE $URL_USER LOGIN CREATEDB PASSWORD '$URL_PASSWORD'"
fi
if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$URL_DB'")" != "1" ]; then
    psql_admin -c "CREATE DATABASE $URL_DB OWNER $URL_USER"
fi
echo "postgres: cluster $version/$cluster is up on port $port; tests use $URL_USER@127.0.0.1:$port/$URL_DB"
