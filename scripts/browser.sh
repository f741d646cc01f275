#!/usr/bin/env bash
# Install Debian's chromium for the panel-page browser tests, if missing (needs root and apt-get).
# playwright drives /usr/bin/chromium directly; `playwright install` (a browser download) is never used.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    echo "browser: chromium is installed"
elif [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser: installing chromium ..."
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; } \
        || { echo "browser: apt-get install chromium failed" >&2; exit 1; }
else
    echo "browser: chromium is missing and this user cannot install it; browser tests will skip."
    echo "         (as root: apt-get install -y chromium)"
fi
