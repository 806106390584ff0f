#!/usr/bin/env bash
# Hostile sticks against the real udev rule (udev/71-swiftwing-export.rules), export unit
# (systemd/swiftwing-export@.service) and daemon (vivid camera, PNG panel), sticks hot-plugged
# through QMP, whole-disk file systems (no partition table):
#   other (ext2) and blank (zeros)   no export unit starts: only vfat, exFAT and ext4 are mounted
#   panic (ext4, superblock errors=panic, root directory block overwritten with random bytes)
#                                    the export mounts it with errors=remount-ro: the kernel keeps
#                                    running, the export ends with its message in the journal and
#                                    on the panel, and a shutter press afterwards is saved
# Three roles in one file (as usb-export.sh): host, hook and guest.
# Needs `swift build --product swiftwing` on the host. Run alone: Tests/VMRig/usb-export-hostile.sh
VM_TEST_TIMEOUT=1200
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if [ -n "${SWIFTWING_VM_QMP:-}" ] && [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- hook: runs on the host next to QEMU ----
    set -uo pipefail
    . "$repo/scripts/vm/qmp.sh"
    dir="$SWIFTWING_HOSTILE_DIR"
    out="$SWIFTWING_VM_OUT"
    trap 'rm -rf "$dir"' EXIT
    fail=0
    wait_file() {
        local i
        for ((i = 0; i < $2 * 10; i++)); do
            [ -e "$out/$1" ] && return 0
            kill -0 "$SWIFTWING_VM_QEMU_PID" 2>/dev/null || return 1
            sleep 0.1
        done
        return 1
    }
    plug() {
        if qmp_usb_plug "$SWIFTWING_VM_QMP" "$1" "$dir/$1.img"; then echo "ok - host: plugged $1"
        else echo "not ok - host: plug $1 through QMP"; fail=1; fi
    }
    wait_file plug-others 400 || { echo "not ok - host: the guest never asked for the first sticks"; exit 1; }
    plug other
    plug blank
    wait_file plug-panic 500 || { echo "not ok - host: the guest never asked for the panic stick"; exit 1; }
    plug panic
    wait_file finished 900
    exit "$fail"
fi

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- host: three 32 MiB sticks ----
    set -euo pipefail
    export PATH="$PATH:/usr/sbin:/sbin"
    for t in mkfs.ext4 mke2fs tune2fs debugfs dumpe2fs socat; do
        command -v "$t" >/dev/null || { echo "skipped: no $t on the host (scripts/install-deps.sh vm)"; exit 77; }
    done
    [ -x "$repo/.build/debug/swiftwing" ] ||
        { echo "not ok - .build/debug/swiftwing is missing: swift build --product swiftwing"; exit 1; }
    dir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-hostile.XXXXXX")"
    chmod 0755 "$dir"
    for stick in other blank panic; do truncate -s 32M "$dir/$stick.img"; done
    mke2fs -q -t ext2 -L SWOTHER "$dir/other.img"
    mkfs.ext4 -q -b 4096 -O metadata_csum -L SWPANIC "$dir/panic.img"
    tune2fs -e panic "$dir/panic.img" >/dev/null
    # The root directory's first (only) block, overwritten: its checksum fails at the first lookup.
    block="$(debugfs -R 'bmap / 0' "$dir/panic.img" 2>/dev/null)"
    [[ "$block" =~ ^[0-9]+$ ]] || { echo "not ok - debugfs found no block for the root directory: '$block'"; exit 1; }
    head -c 4096 /dev/urandom | dd of="$dir/panic.img" bs=4096 seek="$block" conv=notrunc status=none
    dumpe2fs -h "$dir/panic.img" 2>/dev/null | grep -q '^Errors behavior: *Panic' ||
        { echo "not ok - tune2fs did not set errors=panic"; exit 1; }
    export SWIFTWING_HOSTILE_DIR="$dir"
    VM_TEST_ARGS=(--systemd --usb --udev-rule "$repo/udev/71-swiftwing-export.rules"
        --unit "$repo/systemd/swiftwing-export@.service" --hook "$here/usb-export-hostile.sh")
fi
. "$here/../../scripts/vm/testlib.sh"

# ---- guest ----
out="$SWIFTWING_VM_OUT"
bin="$PWD/.build/debug/swiftwing"
vm_expect "PID 1 is systemd" "$(cat /proc/1/comm)" systemd
getent passwd swiftwing >/dev/null || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin swiftwing
mkdir -p /var/lib/swiftwing /usr/local/bin
chown swiftwing:swiftwing /var/lib/swiftwing
chmod 0750 /var/lib/swiftwing
install -m 0755 "$bin" /usr/local/bin/swiftwing
systemd-run --quiet --unit=swiftwing-under-test -p User=swiftwing -p Group=swiftwing -p SupplementaryGroups=video \
    -p RuntimeDirectory=swiftwing --setenv=SWIFTWING_CAMERA_WIDTH=640 --setenv=SWIFTWING_CAMERA_HEIGHT=480 \
    /usr/local/bin/swiftwing run --camera /dev/video0 --panel png:/run/swiftwing/panel.png
running() { "$bin" status --json 2>/dev/null | grep -q '"running" : true'; }
vm_check "the daemon answers on /run/swiftwing/control.sock" vm_wait_for 180 running
daemon_log() { journalctl -u swiftwing-under-test -o cat --no-pager; }
export_units() { systemctl list-units --all --plain --no-legend 'swiftwing-export@*' | awk '{ print $1 }'; }

# 1. ext2 and a blank stick: udev starts nothing for them.
touch "$out/plug-others"
two_disks() { [ "$(find /sys/block -maxdepth 1 -name 'sd*' | wc -l)" -ge 2 ]; }
if vm_wait_for 240 two_disks; then vm_ok "other and blank: both disks appear"; else
    vm_not_ok "other and blank: both disks appear"
    vm_note "block devices: $(find /sys/block -mindepth 1 -maxdepth 1 -printf '%f '); kernel: $(dmesg | grep -iE 'usb|scsi|sd[a-z]' | tail -8 | tr '\n' '|')"
fi
udevadm settle --timeout=60
vm_check "other: udev calls it ext2" test -e /dev/disk/by-label/SWOTHER
for disk in /sys/block/sd*; do
    name="$(basename "$disk")"
    vm_check "$name ($(udevadm info --query=property --name="/dev/$name" | sed -n 's/^ID_FS_TYPE=//p' | grep . || echo blank)): no SYSTEMD_WANTS from the export rule" \
        sh -c "! udevadm info --query=property --name=/dev/$name | grep -q '^SYSTEMD_WANTS=.*swiftwing-export'"
done
vm_expect "other and blank: no export unit was started" "$(export_units | tr '\n' ' ')" ""

# 2. ext4 whose superblock says errors=panic, its root directory block corrupted.
touch "$out/plug-panic"
vm_check "panic: the stick appears" vm_wait_for 120 test -e /dev/disk/by-label/SWPANIC
dev="$(basename "$(readlink -f /dev/disk/by-label/SWPANIC)")"
unit="swiftwing-export@$dev.service"
ended() { state="$(systemctl show -P ActiveState "$unit")"; [ -n "$(systemctl show -P InvocationID "$unit")" ] &&
    { [ "$state" = inactive ] || [ "$state" = failed ]; }; }
if vm_wait_for 420 ended; then vm_ok "panic ($dev): udev started $unit and it ended"; else
    vm_not_ok "panic ($dev): udev started $unit and it ended"
    vm_note "$(systemctl status --no-pager "$unit" 2>&1 | tr '\n' '|')"
    vm_note "$(journalctl -o cat --no-pager -u "$unit" | tail -20 | tr '\n' '|')"
fi
vm_expect "panic: the unit's result" "$(systemctl show -P Result "$unit")" exit-code
unit_log="$(journalctl -o cat --no-pager _SYSTEMD_INVOCATION_ID="$(systemctl show -P InvocationID "$unit")")"
vm_check "panic: the journal says the file system is damaged" grep -qF "file system on the USB stick $dev is damaged" <<<"$unit_log"
vm_note "panic: $(grep -m1 -F "is damaged" <<<"$unit_log")"
vm_note "kernel: $(dmesg | grep -m1 -E "EXT4-fs error|EXT4-fs \($dev\).*read-only" || echo 'no EXT4-fs error line')"
vm_check "panic: the daemon shows it" vm_wait_for 30 sh -c 'journalctl -u swiftwing-under-test -o cat --no-pager | grep -qF "export to a USB stick failed: The stick is damaged"'
vm_check "the kernel is still running: the daemon answers" running
scan="$("$bin" shutter 2>&1)"
vm_check "scanning goes on: a shutter press after the export is saved (scan $scan)" grep -Eq '^[0-9a-fA-F-]{36}$' <<<"$scan"
vm_check "the stick is not left mounted anywhere" sh -c "! grep -q '^/dev/$dev ' /proc/mounts"
touch "$out/finished"
vm_finish
