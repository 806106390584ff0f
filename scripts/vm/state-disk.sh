#!/usr/bin/env bash
# An ext4 disk image for a guest's state directory, for power-cut tests (run.sh --disk IMG, which
# the guest sees as /dev/vda, the 2nd as /dev/vdb...; virtio-blk, QEMU cache=writeback).
#
# On the host:
#   state-disk.sh create IMG [SIZE]   a fresh ext4 image (default 64M), label swiftwing-state
#   state-disk.sh fsck IMG            e2fsck -fn on the image from the host (only after a clean
#                                     unmount or a replay: an unreplayed journal gives false errors)
# In the guest:
#   state-disk.sh mount DEV DIR       load ext4 and mount DEV on DIR (replays the journal, if any)
#   state-disk.sh check DEV           after a power cut: mount (the kernel replays the journal),
#                                     unmount, then a full read-only e2fsck -fn (meaningful now: the
#                                     journal is replayed and the unmount clean; plain -n would only
#                                     say "clean"); prints "replayed: yes|no" and e2fsck's output;
#                                     exit 0 when e2fsck finds no problem, 1 otherwise
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

cmd="${1:-}"; shift || true
case "$cmd" in
    create)
        img="${1:?IMG}"; size="${2:-64M}"
        rm -f "$img"; truncate -s "$size" "$img"
        mkfs.ext4 -q -F -L swiftwing-state "$img" ;;
    fsck)
        e2fsck -fn "${1:?IMG}" ;;
    mount)
        dev="${1:?DEV}"; dir="${2:?DIR}"
        modprobe ext4 2>/dev/null || true
        mkdir -p "$dir"
        mount -t ext4 "$dev" "$dir" ;;
    check)
        dev="${1:?DEV}"
        modprobe ext4 2>/dev/null || true
        before="$(dmesg | wc -l)"
        mnt="$(mktemp -d)"
        mount -t ext4 "$dev" "$mnt"
        if dmesg | tail -n +"$((before + 1))" | grep -q 'recovery complete'; then echo "replayed: yes"; else echo "replayed: no"; fi
        umount "$mnt"; rmdir "$mnt"
        st=0; out="$(e2fsck -fn "$dev" 2>&1)" || st=$?
        printf '%s\n' "$out" | sed 's/^/e2fsck: /'
        echo "e2fsck -fn: exit $st"
        [ "$st" = 0 ] ;;
    *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
