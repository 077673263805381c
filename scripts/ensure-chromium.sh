#!/usr/bin/env bash
# Browser tests drive Debian's chromium through playwright-core (no browser download works on
# the machines we run on). Installs it when missing; prints the executable's path.
set -euo pipefail
bin="${SVC_CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$bin" ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo -n"; fi
  echo "installing Debian's chromium for the browser tests" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
fi
echo "$bin"
