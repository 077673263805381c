#!/usr/bin/env bash
# Tests of the NATS bus and of nats credentials run a real nats-server (Debian's package).
# Installs it when missing; prints its path. Without apt or sudo it says so and exits 1.
set -uo pipefail
bin="$(command -v nats-server || true)"
if [ -z "$bin" ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo -n"; fi
  if command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's nats-server for the tests" >&2
    $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nats-server >&2
  fi
  bin="$(command -v nats-server || true)"
  if [ -z "$bin" ]; then
    echo "nats-server is not installed and could not be (install the nats-server package)" >&2
    exit 1
  fi
fi
echo "$bin"
