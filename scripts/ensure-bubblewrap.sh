#!/usr/bin/env bash
# Shell tasks run in a bubblewrap sandbox (DESIGN.md, Security); a worker without it refuses them.
# Installs Debian's bubblewrap when missing (tests and `npm start` call this); prints bwrap's path.
# Never fails the caller: without apt or sudo it says how to install it and exits 0.
set -uo pipefail
bin="$(command -v bwrap || true)"
if [ -z "$bin" ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo -n"; fi
  if command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's bubblewrap for sandboxed shell tasks" >&2
    $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bubblewrap >&2
  fi
  bin="$(command -v bwrap || true)"
  if [ -z "$bin" ]; then
    echo "bubblewrap is not installed: shell tasks will be refused (install the bubblewrap package, or set SVC_SHELL_SANDBOX=off)" >&2
    exit 0
  fi
fi
echo "$bin"
