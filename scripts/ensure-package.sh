#!/usr/bin/env bash
# Installs a Debian package when its program is missing, and prints the program's path: the
# machines we run on reach Debian's packages, and no download of a binary of its own works there.
#   ensure-package.sh PACKAGE PROGRAM PURPOSE [--optional]
# Used for chromium (browser tests), bubblewrap (the shell sandbox: tests, `npm start`, the
# benches), passt (the sandbox's SVC_SHELL_NETWORK=external: tests) and nats-server (NATS tests
# and benches); TypeScript callers go through ensure-package.ts. Without the
# program afterwards it says how to install it and exits 1, or with --optional exits 0 printing
# nothing (the caller copes: a worker then refuses the shell tasks it cannot sandbox).
set -uo pipefail
package="$1" program="$2" purpose="$3" optional="${4:-}"
bin="$(command -v "$program" || true)"
if [ -z "$bin" ] && command -v apt-get >/dev/null 2>&1; then
  # Test files run in parallel and several may need the same package on a fresh machine: one
  # installs while the others wait on this lock, then find the program (dpkg's own lock would
  # fail them at once). DPkg::Lock::Timeout waits for any other apt run too.
  exec 9>"${TMPDIR:-/tmp}/svc-ensure-package.lock"
  command -v flock >/dev/null 2>&1 && flock -w 900 9
  bin="$(command -v "$program" || true)"
  if [ -z "$bin" ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo -n"; fi
    echo "installing Debian's $package for $purpose" >&2
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 \
      && DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$package" >&2
    bin="$(command -v "$program" || true)"
  fi
fi
if [ -z "$bin" ]; then
  echo "$package is not installed and could not be ($purpose needs it: apt-get install $package)" >&2
  [ "$optional" = --optional ] && exit 0
  exit 1
fi
echo "$bin"
