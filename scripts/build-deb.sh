#!/usr/bin/env bash
# Builds swiftwing_VERSION_ARCH.deb for this machine's architecture with dpkg-deb, offline, from a
# built binary: the files scripts/install.sh installs (with PREFIX=/usr, units in /lib/systemd/system,
# udev rules in /lib/udev/rules.d) and maintainer scripts that create the user, write the config
# when there is none and enable and start the service. The recognizer (swiftwing-recognizer, built
# beside the binary) and its unit come in the same package; its unit is not enabled (docs/recognizer.md). `remove` keeps the library in
# /var/lib/swiftwing; `purge` deletes it with the config and the user.
#
# Usage: scripts/build-deb.sh [--binary PATH] [--out DIR]
# The Depends: line lists the Debian packages that own the libraries the binary links. A library
# no package owns (a Swift runtime from a toolchain folder) is refused: build with
# `SWIFT_FLAGS=--static-swift-stdlib`; SWIFTWING_DEB_ALLOW_UNPACKAGED=1 lets it through (the VM
# rig's guests see the host's toolchain).
set -euo pipefail
cd "$(dirname "$0")/.."

binary=.build/release/swiftwing
out=.build/deb
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "usage: $0 [--binary PATH] [--out DIR]" >&2; exit 2 ;;
    esac
done
[ -x "$binary" ] || { echo "build-deb: $binary is not built: run \`make release\` first" >&2; exit 1; }

version=$(sed -n 's/.*static let string = "\([^"]*\)".*/\1/p' Sources/SwiftWingCore/Version.swift)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT

PREFIX=/usr DESTDIR="$stage" UNITDIR=/lib/systemd/system UDEVRULESDIR=/lib/udev/rules.d \
    scripts/install.sh --binary "$binary" --files-only >/dev/null

# Depends: the package of every shared library the binary loads.
depends=() unpackaged=()
while read -r library; do
    owner=$(dpkg-query -S "$library" 2>/dev/null || dpkg-query -S "$(readlink -f "$library")" 2>/dev/null || true)
    if [ -z "$owner" ]; then
        unpackaged+=("$library")
    else
        depends+=("${owner%%:*}")
    fi
done < <(for linked in "$binary" "$(dirname "$binary")/swiftwing-recognizer" "$(dirname "$binary")/swiftwing-web"; do
    [ -x "$linked" ] && ldd "$linked"
done | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | sort -u)
if [ ${#unpackaged[@]} -gt 0 ] && [ "${SWIFTWING_DEB_ALLOW_UNPACKAGED:-0}" != 1 ]; then
    echo "build-deb: $binary links libraries no Debian package provides: ${unpackaged[*]}" >&2
    echo "build-deb: build it with \`make release\` (it links the Swift runtime in) and run make deb again" >&2
    exit 1
fi
# python3: the OCR worker's virtual environment runs on Debian's interpreter (the one it was made with).
depends_line=$(printf '%s\n' "${depends[@]}" systemd passwd python3 | sort -u | paste -sd, | sed 's/,/, /g')

install -d "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<EOF
Package: swiftwing
Version: $version
Architecture: $arch
Maintainer: SwiftWing <swiftwing@localhost>
Section: misc
Priority: optional
Depends: $depends_line
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Description: book-scanning kiosk daemon
 Press the shutter at a bookshelf: the photo is queued durably, sent to a recognition
 backend, and the books land in the device's library. Runs as the systemd service swiftwing.
 swiftwing-recognizer, an offline recognition backend (its OCR worker's Python environment and
 an open catalogue of 10,000 popular books included; the owner's own catalogues searched first),
 comes as the service swiftwing-recognizer, not enabled: a kiosk with a remote backend needs none.
 swiftwing-web, the library in a browser, comes as the service swiftwing-web; it serves only
 with [web] enabled = true in /etc/swiftwing/swiftwing.toml.
EOF
echo /etc/swiftwing/swiftwing.toml.example >"$stage/DEBIAN/conffiles"

cat >"$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    /usr/lib/swiftwing/swiftwing-setup
fi
EOF
cat >"$stage/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    systemctl stop swiftwing.service swiftwing-recognizer.service swiftwing-web.service \
        swiftwing-library-export.timer || true
fi
if [ "$1" = remove ]; then
    systemctl disable swiftwing.service swiftwing-recognizer.service swiftwing-web.service \
        swiftwing-library-export.timer >/dev/null 2>&1 || true
fi
EOF
cat >"$stage/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
# remove: the library (/var/lib/swiftwing) and the config stay; purge deletes them and the user.
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
fi
if [ "$1" = purge ]; then
    rm -rf /var/lib/swiftwing /var/lib/private/swiftwing /etc/swiftwing/swiftwing.toml \
        /var/lib/private/swiftwing-recognizer /var/cache/private/swiftwing-recognizer /var/lib/swiftwing-library
    rmdir /etc/swiftwing 2>/dev/null || true
    if getent passwd swiftwing >/dev/null; then userdel swiftwing || true; fi
    if getent group swiftwing >/dev/null; then groupdel swiftwing || true; fi
fi
EOF
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

mkdir -p "$out"
package="$out/swiftwing_${version}_${arch}.deb"
# xz for a package to install; gzip for the VM rig's throwaway package: xz took minutes over its ~250 MB of debug
# binaries, gzip takes seconds (73 MB), and none left the guest's disk too full for the daemon to take a press.
compression="${SWIFTWING_DEB_COMPRESSION:-xz}"
case "$compression" in
    xz | gzip | zstd | none) ;;
    *) echo "build-deb: SWIFTWING_DEB_COMPRESSION must be xz, gzip, zstd or none, not '$compression'" >&2; exit 2 ;;
esac
dpkg-deb --root-owner-group -Z"$compression" --build "$stage" "$package" >/dev/null
echo "$package"
