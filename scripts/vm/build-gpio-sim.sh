#!/usr/bin/env bash
# Build gpio-sim and the IRQ simulator (irq_sim) as out-of-tree modules for the rig's guest kernel
# and print the directory holding irq_sim.ko and gpio-sim.ko. Debian's kernels enable neither,
# but both build against Debian's own headers and load on the stock kernel.
#
#   scripts/vm/build-gpio-sim.sh [KERNEL_DIR]      # default: $(scripts/vm/fetch-kernel.sh)
#
# Exit status: 0 (directory on stdout), 77 when the packages cannot be downloaded or the modules
# cannot be built here (callers report the GPIO tests as skipped, not failed), 1 other errors.
#
# What it fetches (versions exactly those of the kernel image package), all into
# $SWIFTWING_VM_CACHE/gpio-sim/, nothing installed on the host:
#   - linux-headers-<abi>, linux-headers-<abi-base>-common, linux-kbuild-6.1 (~14 MB): unpacked
#     with dpkg-deb -x into a scratch tree (the headers' Makefile includes the common one by its
#     absolute /usr/src path: rewritten to the scratch tree), deleted after the build;
#   - linux-source-6.1 (139 MB): only drivers/gpio/gpio-sim.c, drivers/gpio/gpiolib.h (private
#     header, must be the same version) and kernel/irq/irq_sim.c are kept (src/<version>/);
#     the .deb itself is not kept. A second build for the same version downloads only the headers.
# irq_sim.c is patched to build as a module: MODULE_LICENSE("GPL") added, and the unexported
# irq_to_desc() replaced: handle_simple_irq(irq_to_desc(irqnum)) -> generic_handle_irq(irqnum).
# Needs make and gcc-12 (Debian bookworm's kernel compiler) on the host.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
export PATH="$PATH:/usr/sbin:/sbin"

skip() { vm_log "gpio-sim unavailable: $*"; exit 77; }

kdir="${1:-$("$here/fetch-kernel.sh")}" || skip "no kernel tree"
[ -f "$kdir/.complete" ] || vm_die "not an unpacked kernel tree: $kdir"
abi="$(cat "$kdir/.abi")"                                     # 6.1.0-56-amd64
pkgver="$(sed -n 's/^linux-image-[^_]*_\([^_]*\)_.*/\1/p' "$kdir/.package")"  # 6.1.192-2
[ -n "$pkgver" ] || vm_die "cannot tell the kernel package version from $kdir/.package"
series="$(printf '%s' "$abi" | cut -d. -f1,2)"              # 6.1
flavour="${abi##*-}"                                         # amd64
base="${abi%-"$flavour"}"                                    # 6.1.0-56

root="$VM_CACHE/gpio-sim"
key="$abi-$(vm_hash_files "$here/build-gpio-sim.sh")"
out="$root/modules/$key"
if [ -f "$out/gpio-sim.ko" ] && [ -f "$out/irq_sim.ko" ]; then
    printf '%s\n' "$out"
    exit 0
fi

vm_need_packages make:make gcc-12:gcc-12 || skip "no make or gcc-12 on the host (needed to build kernel modules)"

t0=$(vm_now)
mkdir -p "$root/src" "$root/modules"
tmp="$(mktemp -d "$root/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
sandbox=(); [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
download() {  # download PKG=VERSION... into $tmp/deb
    mkdir -p "$tmp/deb"
    ( cd "$tmp/deb" && apt-get download -q "${sandbox[@]}" "$@" >&2 ) && return 0
    vm_log "download failed; running apt-get update once and retrying"
    vm_as_root apt-get update -q >&2 || true
    ( cd "$tmp/deb" && apt-get download -q "${sandbox[@]}" "$@" >&2 )
}

# 1. The three source files, once per kernel package version.
src="$root/src/$pkgver"
if [ ! -f "$src/.complete" ]; then
    vm_log "downloading linux-source-$series=$pkgver (139 MB; only 3 files are kept)"
    download "linux-source-$series=$pkgver" || skip "apt-get download linux-source-$series=$pkgver failed"
    mkdir -p "$tmp/src"
    # (tar stops reading once it has the files; dpkg-deb may then die of SIGPIPE: check the files)
    ( set +o pipefail
      dpkg-deb --fsys-tarfile "$tmp"/deb/linux-source-*.deb | tar -xO "./usr/src/linux-source-$series.tar.xz" |
          tar -xJ -C "$tmp/src" --strip-components=1 "linux-source-$series/drivers/gpio/gpio-sim.c" \
              "linux-source-$series/drivers/gpio/gpiolib.h" "linux-source-$series/kernel/irq/irq_sim.c" ) 2>/dev/null || true
    for f in drivers/gpio/gpio-sim.c drivers/gpio/gpiolib.h kernel/irq/irq_sim.c; do
        [ -s "$tmp/src/$f" ] || skip "$f not found in linux-source-$series=$pkgver"
    done
    rm -rf "$src" && mkdir -p "$src"
    cp "$tmp/src/drivers/gpio/gpio-sim.c" "$tmp/src/drivers/gpio/gpiolib.h" "$tmp/src/kernel/irq/irq_sim.c" "$src/"
    touch "$src/.complete"
    rm -f "$tmp"/deb/*.deb
    vm_log "sources extracted in $(vm_since "$t0") s"
fi

# 2. The headers and kbuild, unpacked into the scratch tree.
download "linux-headers-$abi=$pkgver" "linux-headers-$base-common=$pkgver" "linux-kbuild-$series=$pkgver" ||
    skip "apt-get download of the kernel headers ($pkgver) failed"
for d in "$tmp"/deb/*.deb; do dpkg-deb -x "$d" "$tmp/hdr"; done
hdr="$tmp/hdr/usr/src/linux-headers-$abi"
[ -f "$hdr/Makefile" ] || skip "no Makefile in linux-headers-$abi"
sed -i "s|^include /usr/src/|include $tmp/hdr/usr/src/|" "$hdr/Makefile"

# 3. Patch and build.
b="$tmp/build"
mkdir -p "$b"
cp "$src/gpio-sim.c" "$src/gpiolib.h" "$src/irq_sim.c" "$b/"
grep -q 'handle_simple_irq(irq_to_desc(irqnum));' "$b/irq_sim.c" || skip "irq_sim.c of $pkgver does not look as expected (irq_to_desc call)"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$b/irq_sim.c"
if ! grep -q MODULE_LICENSE "$b/irq_sim.c"; then
    printf '\n#include <linux/module.h>\nMODULE_LICENSE("GPL");\nMODULE_DESCRIPTION("Interrupt simulator, built out of tree for the SwiftWing VM rig");\n' >>"$b/irq_sim.c"
fi
echo 'obj-m += irq_sim.o gpio-sim.o' >"$b/Kbuild"
if ! make -s -C "$hdr" M="$b" modules >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log" >&2
    skip "building the modules failed (see above)"
fi
grep -v 'Skipping BTF generation' "$tmp/make.log" >&2 || true
vermagic="$(modinfo -F vermagic "$b/gpio-sim.ko" | cut -d' ' -f1)"
[ "$vermagic" = "$abi" ] || vm_die "gpio-sim.ko has vermagic $vermagic, expected $abi"
mkdir -p "$tmp/out"
cp "$b/irq_sim.ko" "$b/gpio-sim.ko" "$tmp/out/"
rm -rf "$out" && mv -T "$tmp/out" "$out"
# Modules of older rig versions: drop them once unused for a day.
find "$root/modules" -mindepth 1 -maxdepth 1 -type d ! -path "$out" -mtime +1 -exec rm -rf {} + 2>/dev/null || true
vm_log "gpio-sim built in $(vm_since "$t0") s: $out"
printf '%s\n' "$out"
