#!/usr/bin/env bash
# Installs the browsers the end-to-end tests drive: Debian's Chromium and
# Firefox ESR. Idempotent: a browser already present is left alone, so the
# e2e run calls this every time and a fresh machine still works.
#
#   scripts/install-browsers.sh            install what is missing
#   CHROMIUM_PATH=... FIREFOX_PATH=...     use other binaries (then nothing is installed)
set -euo pipefail

need=()
chromium_bin="${CHROMIUM_PATH:-/usr/bin/chromium}"
firefox_bin="${FIREFOX_PATH:-/usr/bin/firefox-esr}"
[ -x "$chromium_bin" ] || need+=(chromium)
[ -x "$firefox_bin" ] || need+=(firefox-esr)

if [ "${#need[@]}" -eq 0 ]; then
  echo "install-browsers: chromium and firefox-esr present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browsers: missing ${need[*]} and no apt-get here; install them or set CHROMIUM_PATH/FIREFOX_PATH" >&2
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo -n); else
    echo "install-browsers: need root (or sudo) to apt-get install ${need[*]}" >&2
    exit 1
  fi
fi

echo "install-browsers: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" fonts-dejavu-core >/dev/null
echo "install-browsers: done"
