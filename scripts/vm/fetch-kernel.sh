#!/usr/bin/env bash
# Fetch Debian's amd64 kernel image package (the exact linux-image-<abi>-amd64 that
# linux-image-amd64 depends on), unpack it into the cache outside the repository and print the
# unpacked tree's directory on stdout. Also installs the host packages the rig needs.
#
#   scripts/vm/fetch-kernel.sh            # -> e.g. ~/.cache/swiftwing-vm/kernel/6.1.0-56-amd64
#
# Environment: SWIFTWING_VM_CACHE (cache dir), SWIFTWING_VM_KERNEL_ABI (force an ABI, e.g.
# 6.1.0-56-amd64), SWIFTWING_VM_NO_INSTALL=1 (never run apt-get install).
# Idempotent: a second run finds the unpacked tree and returns at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

if [ "${SWIFTWING_VM_NO_INSTALL:-0}" != 1 ]; then
    vm_need_packages qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox \
        cpio:cpio kmod:modinfo || vm_die "could not install host packages (qemu-system-x86 busybox-static cpio kmod)" 77
fi

mkdir -p "$VM_CACHE/kernel"

abi="${SWIFTWING_VM_KERNEL_ABI:-}"
# apt-cache takes ~1 s: remember its answer until the package lists change (apt-get update).
lists_stamp="$(stat -c %Y /var/lib/apt/lists /var/lib/apt/lists/*_Packages* 2>/dev/null | sort -n | tail -n1 || true)"
resolved="$VM_CACHE/kernel/.resolved"
if [ -z "$abi" ] && [ -n "$lists_stamp" ] && [ -f "$resolved" ]; then
    read -r stamp cached_abi <"$resolved" || true
    [ "${stamp:-}" = "$lists_stamp" ] && abi="${cached_abi:-}"
fi
if [ -z "$abi" ]; then
    dep="$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: *linux-image-\([0-9][^ ]*\)$/\1/p' | head -n1 || true)"
    if [ -z "$dep" ]; then
        # No package lists (yet): use the newest cached tree if there is one, else update once.
        cached="$(find "$VM_CACHE/kernel" -mindepth 1 -maxdepth 1 -name '[0-9]*-amd64' -printf '%f\n' 2>/dev/null | sort -V | tail -n1 || true)"
        if [ -n "$cached" ] && [ -f "$VM_CACHE/kernel/$cached/.complete" ]; then
            dep="$cached"
        else
            vm_log "apt-cache knows no linux-image-amd64; running apt-get update"
            vm_as_root apt-get update -q >&2 || vm_die "apt-get update failed"
            dep="$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: *linux-image-\([0-9][^ ]*\)$/\1/p' | head -n1)"
        fi
    fi
    abi="$dep"
    [ -n "$abi" ] && [ -n "$lists_stamp" ] && printf '%s %s\n' "$lists_stamp" "$abi" >"$resolved"
fi
[ -n "$abi" ] || vm_die "could not determine the kernel ABI"

dest="$VM_CACHE/kernel/$abi"
# extract_vmlinux DIR — the uncompressed ELF kernel next to vmlinuz. QEMU boots it through its
# PVH entry point (CONFIG_PVH=y in Debian's kernels), which skips the ~2.5 s of xz decompression
# that the bzImage does under TCG. Best effort: without it run.sh boots vmlinuz.
extract_vmlinux() {
    local off
    command -v xz >/dev/null 2>&1 || return 0
    off="$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$1/vmlinuz" | head -n1 | cut -d: -f1 || true)"
    [ -n "$off" ] || return 0
    # (xz stops at the end of its stream, so tail may die of SIGPIPE: check the result, not $?)
    ( set +o pipefail; tail -c +"$((off + 1))" "$1/vmlinuz" | xz -dc --single-stream >"$1/.vmlinux.tmp" 2>/dev/null ) || true
    if [ "$(head -c 4 "$1/.vmlinux.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
        mv "$1/.vmlinux.tmp" "$1/vmlinux"
    else
        rm -f "$1/.vmlinux.tmp"; vm_log "could not extract vmlinux (booting the bzImage instead)"
    fi
}

if [ -f "$dest/.complete" ]; then
    [ -f "$dest/lib/modules/$abi/modules.dep" ] || PATH="$PATH:/usr/sbin:/sbin" depmod -b "$dest" "$abi"
    [ -f "$dest/vmlinux" ] || extract_vmlinux "$dest"
    printf '%s\n' "$dest"
    exit 0
fi

t0=$(vm_now)
tmp="$(mktemp -d "$VM_CACHE/kernel/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# apt's download sandbox user (_apt) cannot write into our private temp dir; root needs none.
sandbox=(); [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
vm_log "downloading linux-image-$abi"
( cd "$tmp" && apt-get download -q "${sandbox[@]}" "linux-image-$abi" >&2 ) || {
    vm_log "download failed; running apt-get update once and retrying"
    vm_as_root apt-get update -q >&2 || true
    ( cd "$tmp" && apt-get download -q "${sandbox[@]}" "linux-image-$abi" >&2 ) || vm_die "apt-get download linux-image-$abi failed"
}
deb="$(ls "$tmp"/linux-image-*.deb)"
mkdir "$tmp/root"
dpkg-deb -x "$deb" "$tmp/root"
vmlinuz="$(find "$tmp/root/boot" -maxdepth 1 -name 'vmlinuz-*' | sort | head -n1)"
[ -f "$vmlinuz" ] || vm_die "no vmlinuz in $deb"
[ -d "$tmp/root/lib/modules/$abi" ] || vm_die "no lib/modules/$abi in $deb"
ln -s "boot/$(basename "$vmlinuz")" "$tmp/root/vmlinuz"
# modules.dep etc., so that modprobe works in the guest (run.sh binds this tree to /lib/modules).
PATH="$PATH:/usr/sbin:/sbin" depmod -b "$tmp/root" "$abi"
extract_vmlinux "$tmp/root"
basename "$deb" > "$tmp/root/.package"
printf '%s\n' "$abi" > "$tmp/root/.abi"
touch "$tmp/root/.complete"
# Another run may have finished the same tree meanwhile (and may be using it): keep theirs.
if ! mv -T "$tmp/root" "$dest" 2>/dev/null; then
    [ -f "$dest/.complete" ] || { rm -rf "$dest"; mv -T "$tmp/root" "$dest"; }
fi
vm_log "kernel $abi ready in $(vm_since "$t0") s: $dest"
printf '%s\n' "$dest"
