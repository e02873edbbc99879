#!/usr/bin/env bash
# Debian's Chromium and its chromedriver (built from the same source, so their versions match)
# for the web view's browser tests (tests/server/test_web_browser.py). `make test` runs this;
# it installs from the system package manager only and never downloads a browser build.
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-browser: apt-get is not available here: install Chromium and chromedriver" \
         "at /usr/bin/chromium and /usr/bin/chromedriver by hand; until then the browser" \
         "tests fail" >&2
    exit 1
fi
run=()
if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-browser: installing chromium needs root (or sudo): run" \
             "'apt-get install chromium chromium-driver' as root" >&2
        exit 1
    fi
    run=(sudo -n)
fi
echo "install-browser: installing chromium and chromium-driver with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get update -qq
"${run[@]}" apt-get install -y -qq --no-install-recommends chromium chromium-driver
