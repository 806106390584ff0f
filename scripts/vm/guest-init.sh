#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of the SwiftWing VM rig's initramfs (busybox ash). Copied to /init by build-initramfs.sh.
#
# 1. insmod the base modules (virtio, 9p, overlay) in dependency order (/modules/base.order)
# 2. mount the writable 9p share "results" (a host dir made by run.sh) and read its vm.conf
# 3. insmod the device modules (v4l2 + vivid, vfb) with default + vm.conf parameters
# 4. mount the host root (9p "host", read-only) as the lower layer of an overlay whose upper layer
#    is a tmpfs: the guest sees the host's files and may write anywhere; writes vanish at power-off
# 5. mount proc, sysfs, devtmpfs, devpts, /dev/shm and a tmpfs on /run in it; the results share on
#    /run/swiftwing-vm/results; the kernel's module tree (depmod'ed) on /lib/modules/<abi>;
#    with run.sh --gpio-sim: load configfs, irq_sim, gpio-sim and create the chip
# 6. chroot and run results/command.sh (written by run.sh) with stdout/stderr into the share,
#    write its exit status to results/exit-code, and power off. Any failure powers off too.
export PATH=/bin
/bin/busybox --install -s /bin
R=/results
NEW=/newroot

stamp() { read -r up _ </proc/uptime; echo "$1 $up" >>"$R/timing" 2>/dev/null; }
halt() {
    sync
    poweroff -f
    sleep 2
    echo o >/proc/sysrq-trigger
    reboot -f
}
fail() {
    echo "vm-init: error: $*" >&2
    [ -w "$R" ] && echo "$*" >>"$R/init-error"
    halt
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "vm-init: started"

# Parameters for module $1: defaults from the order file, then VM_PARAM_<name> from vm.conf.
load_modules() {
    while read -r name params; do
        [ -n "$name" ] || continue
        extra=""
        eval "extra=\${VM_PARAM_$name:-}"
        # shellcheck disable=SC2086 # word splitting of the parameter lists is intended
        insmod "/modules/$name.ko" $params $extra || fail "insmod $name $params $extra failed"
    done <"$1"
}

load_modules /modules/base.order
mkdir -p "$R"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none results "$R" ||
    fail "cannot mount the results share"
stamp init
# shellcheck source=/dev/null
[ -f "$R/vm.conf" ] && . "$R/vm.conf"
load_modules /modules/dev.order
# The framebuffer console draws its cursor into fb0: unbind it so tests see only their pixels.
for c in /sys/class/vtconsole/vtcon*; do
    [ -f "$c/name" ] || continue
    case "$(cat "$c/name")" in *"frame buffer"*) echo 0 >"$c/bind" ;; esac
done
stamp modules

mkdir -p /host /rw
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose host /host ||
    fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work "$NEW"
if ! mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay "$NEW"; then
    echo "vm-init: overlay failed; using the read-only host root with tmpfs on /tmp" >&2
    mount --bind /host "$NEW"
    mount -t tmpfs tmpfs "$NEW/tmp"
    mount -t tmpfs tmpfs "$NEW/var/tmp"
fi
mount -t proc proc "$NEW/proc"
mount -t sysfs sysfs "$NEW/sys"
mount -t devtmpfs devtmpfs "$NEW/dev"
mkdir -p "$NEW/dev/pts" "$NEW/dev/shm"
mount -t devpts devpts "$NEW/dev/pts"
# (udev makes these on a normal system; bash's process substitution needs /dev/fd)
ln -sf /proc/self/fd "$NEW/dev/fd"
ln -sf /proc/self/fd/0 "$NEW/dev/stdin"
ln -sf /proc/self/fd/1 "$NEW/dev/stdout"
ln -sf /proc/self/fd/2 "$NEW/dev/stderr"
mount -t tmpfs -o mode=1777 tmpfs "$NEW/dev/shm"
mount -t tmpfs -o mode=0755 tmpfs "$NEW/run"
mkdir -p "$NEW/run/swiftwing-vm/results" "$NEW/run/swiftwing-vm/modules"
mount --bind "$R" "$NEW/run/swiftwing-vm/results"
mount --bind /modules "$NEW/run/swiftwing-vm/modules"
abi="$(uname -r)"
if [ -n "${VM_KMODS:-}" ] && [ -f "$NEW$VM_KMODS/modules.dep" ]; then
    mkdir -p "$NEW/lib/modules/$abi" 2>/dev/null && mount --bind "$NEW$VM_KMODS" "$NEW/lib/modules/$abi"
fi
# gpio-sim (run.sh --gpio-sim): out-of-tree modules from the host's cache, a chip described by
# VM_GPIO_SIM_SPEC = LABEL:NUM_LINES:OFFSET=NAME[:up|down],... (see scripts/vm/README.md).
setup_gpio_sim() {
    spec="$VM_GPIO_SIM_SPEC"
    label="${spec%%:*}"; rest="${spec#*:}"; nlines="${rest%%:*}"; lines="${rest#*:}"
    insmod "/host$VM_KMODS/kernel/fs/configfs/configfs.ko" 2>/dev/null || grep -q configfs /proc/filesystems ||
        fail "insmod configfs failed"
    insmod "/host$VM_GPIO_SIM/irq_sim.ko" || fail "insmod irq_sim failed"
    insmod "/host$VM_GPIO_SIM/gpio-sim.ko" || fail "insmod gpio-sim failed"
    mount -t configfs configfs /sys/kernel/config || fail "cannot mount configfs"
    c=/sys/kernel/config/gpio-sim/swiftwing
    mkdir "$c" "$c/bank0" || fail "cannot create the gpio-sim device in configfs"
    { echo "$label" >"$c/bank0/label" && echo "$nlines" >"$c/bank0/num_lines"; } || fail "bad gpio-sim spec $spec"
    pulls=""
    for l in $(echo "$lines" | tr ',' ' '); do
        off="${l%%=*}"; name="${l#*=}"; pull=""
        case "$name" in *:*) pull="${name#*:}"; name="${name%%:*}" ;; esac
        { mkdir "$c/bank0/line$off" && echo "$name" >"$c/bank0/line$off/name"; } || fail "bad gpio-sim line $l"
        [ -n "$pull" ] && pulls="$pulls $off:$pull"
    done
    echo 1 >"$c/live" || fail "gpio-sim chip $spec did not go live"
    sim="/sys/devices/platform/$(cat "$c/dev_name")/$(cat "$c/bank0/chip_name")"
    for p in $pulls; do echo "pull-${p#*:}" >"$sim/sim_gpio${p%%:*}/pull" || fail "cannot set pull $p"; done
    echo "vm-init: gpio-sim chip $(cat "$c/bank0/chip_name") \"$label\" ($nlines lines: $lines)"
}
if [ -n "${VM_GPIO_SIM:-}" ]; then
    setup_gpio_sim
    mount -t configfs configfs "$NEW/sys/kernel/config" || fail "cannot mount configfs in the new root"
fi
stamp root

# Files run.sh staged for the new root (--unit, --udev-rule, --file; with --systemd also the test
# target, its service, masks and default.target): copied over the overlay.
if [ -d "$R/root" ]; then
    cp -a "$R/root/." "$NEW/" || fail "cannot copy the staged files into the new root"
fi
# Devices that no udev will load drivers for in the chroot: ask modprobe there.
if [ "${VM_SYSTEMD:-0}" != 1 ] && [ -n "${VM_MODPROBE:-}" ]; then
    # shellcheck disable=SC2086
    chroot "$NEW" /sbin/modprobe -a $VM_MODPROBE || fail "modprobe $VM_MODPROBE failed"
fi
# run.sh --net: QEMU user-mode networking's fixed addresses (the host's loopback is 10.0.2.2).
if [ "${VM_NET:-0}" = 1 ]; then
    { chroot "$NEW" /sbin/ip link set lo up && chroot "$NEW" /sbin/ip link set eth0 up \
        && chroot "$NEW" /sbin/ip addr add 10.0.2.15/24 dev eth0 \
        && chroot "$NEW" /sbin/ip route add default via 10.0.2.2; } \
        || fail "cannot configure eth0 for --net (is virtio_net loaded?)"
fi

[ -f "$R/command.sh" ] || fail "no command.sh in the results share"
if [ "${VM_SYSTEMD:-0}" = 1 ]; then
    # systemd as PID 1 (run.sh --systemd). The host root's /.dockerenv would make systemd believe
    # it runs in a container (and ignore systemd.unit=); Debian's tmp.conf would wipe /tmp.
    rm -f "$NEW/.dockerenv"
    # (what systemd-tmpfiles-setup, masked for speed, would have made and services expect)
    mkdir -p "$NEW/run/lock" "$NEW/run/user" && chmod 1777 "$NEW/run/lock"
    mkdir -p "$NEW/etc/tmpfiles.d"
    ln -sf /dev/null "$NEW/etc/tmpfiles.d/tmp.conf"
    # (no machine-id on the host root: systemd would run first-boot setup)
    [ -s "$NEW/etc/machine-id" ] || echo 53776966745769676e564d7269670001 >"$NEW/etc/machine-id"
    stamp switch-root
    echo "vm-init: starting systemd"
    # shellcheck disable=SC2093 # exec: systemd must be PID 1; fail only if switch_root fails
    exec switch_root "$NEW" /lib/systemd/systemd   # default.target = swiftwing-vm-test.target
    fail "switch_root to systemd failed"
fi
echo "vm-init: running the command"
stamp command-start
env -i chroot "$NEW" /bin/bash /run/swiftwing-vm/results/command.sh \
    </dev/null >"$R/stdout" 2>"$R/stderr"
rc=$?
stamp command-end
echo "$rc" >"$R/exit-code.tmp" && mv "$R/exit-code.tmp" "$R/exit-code"
echo "vm-init: command exited with $rc; powering off"
halt
