#!/bin/sh
# Installs helm (built from source through the Go module proxy) into a cache
# directory if it is missing, and prints its path. Idempotent: a second run
# only checks the version.
set -eu
HELM_VERSION="${HELM_VERSION:-v4.3.1}"
BIN_DIR="${ERRATA_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/errata/bin}"
HELM="$BIN_DIR/helm"
# A binary built with go install reports only major.minor, so the installed
# version is recorded next to it.
STAMP="$BIN_DIR/helm.version"
if [ -x "$HELM" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$HELM_VERSION" ]; then
	echo "$HELM"
	exit 0
fi
mkdir -p "$BIN_DIR"
# Build in a temporary directory so a partial build never replaces a good binary.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
GOBIN="$tmp" GOFLAGS=-mod=mod go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2
mv "$tmp/helm" "$HELM"
echo "$HELM_VERSION" >"$STAMP"
echo "$HELM"
