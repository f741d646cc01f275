#!/usr/bin/env bash
# Set up Docker and the sandbox runtime image, offline where possible.
#
#   sudo PYTHON=.venv/bin/python bash sandbox/bootstrap.sh [build options]
#
# Safe to run again: each step is skipped when already done.
#   1. install docker.io, debootstrap and runsc (Debian) if missing   (needs root)
#   2. register runsc (gVisor) in /etc/docker/daemon.json            (needs root)
#   3. start dockerd if `docker info` fails, log in $DOCKERD_LOG      (needs root)
#      (a running dockerd is sent SIGHUP, which reloads its runtimes)
#   4. "$PYTHON" -m grader sandbox build [build options]              (e.g. --base registry)
set -euo pipefail

DOCKERD_LOG="${DOCKERD_LOG:-/var/log/grader-dockerd.log}"
DOCKERD_PIDFILE="${DOCKERD_PIDFILE:-/var/run/docker.pid}"
DOCKERD_WAIT="${DOCKERD_WAIT:-60}"
PY="${PYTHON:-python3}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { echo "bootstrap: $*"; }
die() { echo "bootstrap: error: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }
have() { command -v "$1" >/dev/null 2>&1; }

# 1. packages -----------------------------------------------------------------
missing=()
if ! have dockerd || ! have docker; then missing+=(docker.io); fi
have debootstrap || missing+=(debootstrap)
have runsc || missing+=(runsc)
if [ "${#missing[@]}" -gt 0 ]; then
    if is_root; then
        have apt-get || die "missing ${missing[*]} and no apt-get here; install them with your package manager."
        say "installing ${missing[*]} ..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq || die "apt-get update failed (see above)."
        # The package's own service start may be refused by policy; dockerd is started below.
        apt-get install -y -qq "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed."
        have dockerd && have docker || die "docker.io is installed but dockerd/docker is not on PATH."
    elif [[ " ${missing[*]} " == *" docker.io "* ]]; then
        die "Docker is not installed. Run as root:
    apt-get update && apt-get install -y ${missing[*]}
then run this script again (as root, so it can start dockerd)."
    else
        say "note: ${missing[*]} missing. Without debootstrap (and root) the image needs a registry base;"
        say "      without runsc, --runtime runsc (gVisor) is unavailable. As root: apt-get install -y ${missing[*]}"
    fi
else
    say "docker.io, debootstrap and runsc are installed"
fi

# 2. gVisor ---------------------------------------------------------------------
# Docker learns extra OCI runtimes from daemon.json; merge ours in, keeping every other key.
DAEMON_JSON="${DAEMON_JSON:-/etc/docker/daemon.json}"
if have runsc && is_root; then
    mkdir -p "$(dirname "$DAEMON_JSON")"
    python3 - "$DAEMON_JSON" "$(command -v runsc)" <<'PYEOF' || die "could not update $DAEMON_JSON (see above)."
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
wanted = {"path": runsc, "runtimeArgs": ["--network=none"]}
if config.get("runtimes", {}).get("runsc") != wanted:
    config.setdefault("runtimes", {})["runsc"] = wanted
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2)
    os.replace(tmp, path)
    print(f"bootstrap: registered runsc in {path}")
PYEOF
fi

# 3. engine -------------------------------------------------------------------
has_runsc() { docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; }
if docker info >/dev/null 2>&1; then
    say "Docker engine is running"
    if have runsc && is_root && ! has_runsc; then
        pid="$(cat "$DOCKERD_PIDFILE" 2>/dev/null || pidof dockerd || true)"
        if [ -n "$pid" ] && kill -HUP "$pid" 2>/dev/null; then
            for _ in $(seq 10); do has_runsc && break; sleep 1; done
        fi
        has_runsc && say "dockerd reloaded: runtime runsc available" \
            || say "note: dockerd did not pick up runsc; restart it to use --runtime runsc"
    fi
else
    if [ -n "${DOCKER_HOST:-}" ] && [ "${DOCKER_HOST}" != "unix:///var/run/docker.sock" ]; then
        die "no Docker engine answers at DOCKER_HOST=${DOCKER_HOST}; start it there, or unset DOCKER_HOST."
    fi
    if [ -S /var/run/docker.sock ] && ! is_root && [ ! -w /var/run/docker.sock ]; then
        die "this user may not use /var/run/docker.sock. Run as root, or: usermod -aG docker $(id -un) (then log in again)."
    fi
    if pid="$(cat "$DOCKERD_PIDFILE" 2>/dev/null)" && [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
        say "dockerd (pid $pid) is running but not answering yet; waiting ..."
    else
        is_root || die "the Docker engine is not running. Start it as root:
    dockerd >>${DOCKERD_LOG} 2>&1 &
or run this script as root."
        say "starting dockerd (log: ${DOCKERD_LOG}) ..."
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        setsid dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
        pid=$!
    fi
    for _ in $(seq "$DOCKERD_WAIT"); do
        docker info >/dev/null 2>&1 && break
        [ -d "/proc/$pid" ] || break  # dockerd exited: no point waiting
        sleep 1
    done
    if ! docker info >/dev/null 2>&1; then
        echo "bootstrap: error: dockerd exited or did not answer within ${DOCKERD_WAIT} s. Last lines of ${DOCKERD_LOG}:" >&2
        tail -n 20 "$DOCKERD_LOG" >&2 2>/dev/null || true
        exit 1
    fi
    say "Docker engine is running"
fi

# 4. runtime image ------------------------------------------------------------
"$PY" -c "import grader" 2>/dev/null || die "'$PY' cannot import grader. Point PYTHON at the project's venv:
    PYTHON=.venv/bin/python bash sandbox/bootstrap.sh"
exec "$PY" -m grader sandbox build "$@"
