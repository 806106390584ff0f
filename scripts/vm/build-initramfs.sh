#!/usr/bin/env bash
# Build the rig's busybox initramfs for a kernel tree unpacked by fetch-kernel.sh and print its
# path. Cached in $SWIFTWING_VM_CACHE/initramfs/, keyed by kernel ABI + a hash of the rig's
# guest-side scripts and busybox; a second run returns at once.
#
#   scripts/vm/build-initramfs.sh [KERNEL_DIR]      # default: $(scripts/vm/fetch-kernel.sh)
#
# Modules: the roots below plus everything they depend on (modinfo -F depends), in an order where
# every module comes after its dependencies. base = needed to reach the host (virtio, 9p, overlay);
# dev = the devices under test. Default parameters are given here; run.sh --param adds to them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
export PATH="$PATH:/usr/sbin:/sbin"

BASE_ROOTS=(virtio_pci 9pnet_virtio 9p overlay)
DEV_ROOTS=(vivid vfb)
# Default module parameters (module name with underscores → parameters).
declare -A DEFAULT_PARAMS=(
    [vfb]="vfb_enable=1 videomemorysize=4194304 mode_option=640x480-16"
)

kdir="${1:-$("$here/fetch-kernel.sh")}"
[ -f "$kdir/.complete" ] || vm_die "not an unpacked kernel tree: $kdir"
abi="$(cat "$kdir/.abi")"
mdir="$kdir/lib/modules/$abi"
busybox=/bin/busybox
[ -x "$busybox" ] || vm_die "$busybox missing (install busybox-static)"

key="$abi-$( { cat "$here/build-initramfs.sh" "$here/guest-init.sh"; sha256sum "$busybox"; } | sha256sum | cut -c1-16)"
out="$VM_CACHE/initramfs/$key.cpio"
if [ -f "$out" ]; then
    printf '%s\n' "$out"
    exit 0
fi

t0=$(vm_now)
mkdir -p "$VM_CACHE/initramfs"
tmp="$(mktemp -d "$VM_CACHE/initramfs/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# name (dashes → underscores) → path of every module in the tree
declare -A PATHS=()
while IFS= read -r f; do
    n="${f##*/}"; n="${n%.ko}"; PATHS["${n//-/_}"]="$f"
done < <(find "$mdir/kernel" -name '*.ko')

declare -A SEEN=()
ORDER=()
visit() {  # depth-first: dependencies first
    local n="${1//-/_}" d deps
    [ -n "${SEEN[$n]:-}" ] && return 0
    SEEN[$n]=1
    [ -n "${PATHS[$n]:-}" ] || vm_die "module $n not found in $mdir"
    deps="$(modinfo -F depends "${PATHS[$n]}")"
    for d in ${deps//,/ }; do visit "$d"; done
    ORDER+=("$n")
}

root="$tmp/root"
mkdir -p "$root"/{bin,dev,proc,sys,modules,results,host,newroot,rw}
write_order() {  # $1 = order file; ORDER holds the modules added since the last call
    local n
    : >"$1"
    for n in "${ORDER[@]}"; do
        cp "${PATHS[$n]}" "$root/modules/$n.ko"
        printf '%s %s\n' "$n" "${DEFAULT_PARAMS[$n]:-}" >>"$1"
    done
    ORDER=()
}
for m in "${BASE_ROOTS[@]}"; do visit "$m"; done
write_order "$root/modules/base.order"
for m in "${DEV_ROOTS[@]}"; do visit "$m"; done
write_order "$root/modules/dev.order"

cp "$busybox" "$root/bin/busybox"   # init links the applets at boot (busybox --install -s)
install -m 0755 "$here/guest-init.sh" "$root/init"
# (/dev/console comes from the kernel's built-in initramfs, which is unpacked first.)
( cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet >"$tmp/initramfs.cpio" )
mv "$tmp/initramfs.cpio" "$out"
# Images of older rig versions: drop them once unused for a day (a running QEMU has read its own).
find "$VM_CACHE/initramfs" -maxdepth 1 -name '*.cpio' ! -path "$out" -mtime +1 -delete 2>/dev/null || true
vm_log "initramfs built in $(vm_since "$t0") s ($(du -h "$out" | cut -f1), modules: $(cat "$root/modules/base.order" "$root/modules/dev.order" | cut -d' ' -f1 | tr '\n' ' '))"
printf '%s\n' "$out"
