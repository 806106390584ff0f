#!/usr/bin/env bash
# systemd as init (run.sh --systemd) with udevd, and a USB stick hot-plugged through QMP onto the
# emulated xhci controller (run.sh --usb): udev sees the stick's vfat partition with ID_BUS=usb,
# a udev rule starts a templated unit (fixtures/) that reads a file the host put on the stick and
# writes one back; after the unplug the host reads that file from the image with mtools.
# Three roles in one file: host (prepares the image, boots), hook (host side, plugs/unplugs
# through QMP, reads back; run.sh --hook) and guest (the checks).
# Run alone: Tests/VMRig/usb-stick.sh
VM_TEST_TIMEOUT=240
here="$(cd "$(dirname "$0")" && pwd)"

if [ -n "${SWIFTWING_VM_QMP:-}" ] && [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- hook: runs on the host next to QEMU ----
    set -uo pipefail
    . "$here/../../scripts/vm/qmp.sh"
    img="$SWIFTWING_STICK_IMG"
    out="$SWIFTWING_VM_OUT"    # the guest's $SWIFTWING_VM_OUT, seen from the host
    trap 'rm -rf "$(dirname "$img")"' EXIT
    # wait_file NAME SECONDS — for the guest to leave a file in the results share
    wait_file() {
        local i
        for ((i = 0; i < $2 * 10; i++)); do
            [ -e "$out/$1" ] && return 0
            kill -0 "$SWIFTWING_VM_QEMU_PID" 2>/dev/null || return 1
            sleep 0.1
        done
        return 1
    }
    fail=0
    host_ok() { echo "ok - host: $*"; }
    host_not_ok() { echo "not ok - host: $*"; fail=1; }
    wait_file ready-for-stick 200 || { host_not_ok "the guest never became ready for the stick"; exit 1; }
    t0=$(date +%s.%N)
    if qmp_usb_plug "$SWIFTWING_VM_QMP" stick "$img"; then host_ok "plugged $img (QMP blockdev-add + device_add usb-storage on xhci.0)"
    else host_not_ok "plug through QMP"; exit 1; fi
    echo "$t0" >"$out/plugged-at"
    wait_file stick-done 90 || { host_not_ok "the guest never finished with the stick"; exit 1; }
    if qmp_usb_unplug "$SWIFTWING_VM_QMP" stick; then host_ok "unplugged (device_del, DEVICE_DELETED, blockdev-del)"
    else host_not_ok "unplug through QMP"; fi
    touch "$out/unplugged"
    got="$(mtype -i "$img@@1M" ::/FROMVM.TXT 2>&1)"
    if [ "$got" = "written in the guest by swiftwing-vm-stick@sda1.service" ]; then
        host_ok "mtools reads FROMVM.TXT back from the image: '$got'"
    else
        host_not_ok "FROMVM.TXT on the image: got '$got'"
    fi
    dd if="$img" of="$img.part" bs=1M skip=1 status=none
    if PATH="$PATH:/usr/sbin:/sbin" fsck.vfat -n "$img.part" >/dev/null 2>&1; then
        host_ok "the filesystem is clean after the unplug (fsck.vfat -n)"
    else
        host_not_ok "fsck.vfat -n reports problems"
    fi
    exit "$fail"
fi

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- host: a 32 MiB stick with an MBR partition table and one vfat partition at 1 MiB ----
    set -euo pipefail
    for t in mkfs.vfat mcopy mtype sfdisk socat; do
        PATH="$PATH:/usr/sbin:/sbin" command -v "$t" >/dev/null ||
            { echo "skipped: no $t on the host (scripts/install-deps.sh vm)"; exit 77; }
    done
    export PATH="$PATH:/usr/sbin:/sbin"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-stick.XXXXXX")"
    img="$dir/stick.img"
    truncate -s 32M "$img"
    echo 'start=2048, type=c' | sfdisk -q "$img"
    mkfs.vfat -n SWIFTSTICK --offset 2048 "$img" $((31 * 1024)) >/dev/null
    printf 'hello from the host, %s\n' "$(date -u +%FT%TZ)" >"$dir/HELLO.TXT"
    mcopy -i "$img@@1M" "$dir/HELLO.TXT" ::/HELLO.TXT
    SWIFTWING_STICK_HELLO="$(cat "$dir/HELLO.TXT")"
    export SWIFTWING_STICK_IMG="$img" SWIFTWING_STICK_HELLO
    VM_TEST_ARGS=(--systemd --usb --udev-rule "$here/fixtures/99-swiftwing-vm-stick.rules"
        --unit "$here/fixtures/swiftwing-vm-stick@.service" --hook "$here/usb-stick.sh")
fi
. "$here/../../scripts/vm/testlib.sh"

# ---- guest ----
out="$SWIFTWING_VM_OUT"
vm_expect "PID 1 is systemd" "$(cat /proc/1/comm)" systemd
vm_check "systemd-udevd is running" systemctl is-active --quiet systemd-udevd.service
udevadm settle --timeout=30
vm_check "udev loaded xhci_pci and bound the controller" sh -c 'ls /sys/bus/pci/drivers/xhci_hcd | grep -q "^0000:"'
touch "$out/ready-for-stick"

vm_check "the stick's partition /dev/sda1 appears" vm_wait_for 60 test -b /dev/sda1
udevadm settle --timeout=30
props="$(udevadm info --query=property --name=/dev/sda1)"
prop() { sed -n "s/^$1=//p" <<<"$props"; }
vm_expect "udev: ID_BUS" "$(prop ID_BUS)" usb
vm_expect "udev: ID_FS_TYPE" "$(prop ID_FS_TYPE)" vfat
vm_expect "udev: ID_FS_LABEL" "$(prop ID_FS_LABEL)" SWIFTSTICK
vm_expect "udev: ID_USB_DRIVER" "$(prop ID_USB_DRIVER)" usb-storage
vm_note "udev: ID_MODEL=$(prop ID_MODEL) ID_SERIAL=$(prop ID_SERIAL) ID_PATH=$(prop ID_PATH)"
vm_check "the rule asked systemd for the unit (SYSTEMD_WANTS)" grep -qx 'SYSTEMD_WANTS=swiftwing-vm-stick@sda1.service' <<<"$props"
vm_check "the unit ran to its end" vm_wait_for 60 test -e "$out/handled-sda1"
vm_expect "the unit's result" "$(systemctl show -P Result swiftwing-vm-stick@sda1.service)" success
if [ -f "$out/plugged-at" ]; then
    vm_note "plug to handled: $(awk -v a="$(cat "$out/plugged-at")" -v b="$(stat -c %.9Y "$out/handled-sda1")" 'BEGIN { printf "%.1f s", b - a }') (host clock)"
fi
vm_expect "the unit read HELLO.TXT from the stick" "$(cat "$out/hello-from-stick.txt" 2>&1)" "$SWIFTWING_STICK_HELLO"
vm_check "usb-storage, sd_mod, xhci_pci and vfat are loaded" sh -c 'for m in usb_storage sd_mod xhci_pci vfat; do test -d /sys/module/$m || { echo "no $m"; exit 1; }; done'
touch "$out/stick-done"
vm_check "the host unplugs it: /dev/sda disappears" vm_wait_for 60 sh -c '! test -e /dev/sda'
vm_check "and the unit is stopped with its device (BindsTo)" vm_wait_for 20 sh -c '! systemctl is-active --quiet swiftwing-vm-stick@sda1.service'
# give the hook time to read the image back before the guest powers off (it needs no guest)
vm_finish
