#!/usr/bin/env bash
# Installs what SwiftWing needs to build, test and run its demo on Debian bookworm / Raspberry Pi OS.
# Idempotent: installs only packages that are missing. Uses sudo when not root.
# Usage: scripts/install-deps.sh [build|test|vm]   (test includes build; vm adds the QEMU rig's packages)
set -euo pipefail

what=${1:-test}
build_packages=(pkg-config libv4l-dev libjpeg62-turbo-dev libturbojpeg0-dev libgpiod-dev libcurl4-gnutls-dev nettle-dev libsystemd-dev libsqlite3-dev libcairo2-dev libzbar-dev libzxing-dev libpng-dev fonts-jetbrains-mono fonts-dejavu-core)
test_packages=(libjpeg-turbo-progs zbar-tools python3-venv v4l-utils file openssl socat nghttp2-server curl jq sqlite3 python3 xz-utils util-linux iproute2 procps gdb shellcheck chromium chromium-driver)
vm_packages=(qemu-system-x86 busybox-static cpio kmod mtools dosfstools e2fsprogs fdisk systemd udev gpiod socat make gcc-12)

packages=("${build_packages[@]}")
case "$what" in
  build) ;;
  test) packages+=("${test_packages[@]}") ;;
  vm) packages+=("${test_packages[@]}" "${vm_packages[@]}") ;;
  *) echo "usage: $0 [build|test|vm]" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null; then
  for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
    [ -x "$candidate/swift" ] && { echo "install-deps: swift is in $candidate; add it to PATH" >&2; exit 1; }
  done
  echo "install-deps: no Swift toolchain found. Install Swift 6.x for Linux (swift.org) and put its usr/bin on PATH." >&2
  exit 1
fi

# The recognizer's OCR worker: a virtual environment of pinned PyPI packages at .ocr-venv (scripts/ocr-venv.sh;
# kept when it is current). The tests read real photos through it.
case "$what" in
  test | vm) "$(dirname "$0")/ocr-venv.sh" ;;
esac
