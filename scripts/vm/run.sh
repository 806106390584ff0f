#!/usr/bin/env bash
# Run one command inside a QEMU guest on a real (Debian) kernel with vivid (/dev/video0) and vfb
# (/dev/fb0) loaded, in a chroot of this machine's root (so host-built binaries, host tools and
# the current directory are all there), and exit with the command's exit status.
#
#   scripts/vm/run.sh [--timeout S] [--param MOD.KEY=VALUE]... [--gpio-sim[=SPEC]] [--systemd]
#                     [--unit FILE]... [--udev-rule FILE]... [--file SRC:/DEST]... [--usb] [--net]
#                     [--disk IMG]... [--hook PROGRAM] [--cut-on REGEX] [--cut-after S]
#                     [--out DIR] [-v] [--keep] -- COMMAND [ARG]...
#
# --gpio-sim: also build (cached) and load gpio-sim and create a GPIO chip before the command:
# SPEC = LABEL:NUM_LINES:OFFSET=NAME[:up|down],..., default
# pinctrl-bcm2711:58:17=SHUTTER:up,27=BUZZER,22=LIGHT (a Raspberry Pi 4's header chip, lines as
# wired in Hardware/README.md; SHUTTER's simulated pull starts up = button released). In the
# guest, scripts/vm/gpio-sim-ctl.sh presses buttons and reads output levels. Exits 77 (skipped)
# when gpio-sim cannot be built here.
# --systemd: systemd is PID 1 (with journald and udevd; udev loads drivers by modalias); the
# command runs as swiftwing-vm-test.service after sysinit.target, then the guest powers off.
# --unit FILE / --udev-rule FILE / --file SRC:/DEST: copy a host file into the guest's root
# before it boots (/etc/systemd/system/, /etc/udev/rules.d/, DEST).
# --usb: an xhci USB controller (id xhci) for QMP hot-plug (scripts/vm/qmp.sh qmp_usb_plug).
# --net: a virtio NIC on QEMU user-mode networking: the guest is 10.0.2.15/24 on eth0 and reaches
# the host's loopback at 10.0.2.2 (nothing reaches the guest from outside). Not with --systemd.
# --disk IMG: a raw image as a virtio disk (/dev/vda, then vdb...), QEMU cache=writeback.
# --hook PROGRAM: run PROGRAM on the host while the guest runs, with SWIFTWING_VM_QMP (QMP
# socket), SWIFTWING_VM_OUT (the guest's $SWIFTWING_VM_OUT seen from the host),
# SWIFTWING_VM_RESULTS, SWIFTWING_VM_CONSOLE (console log), SWIFTWING_VM_QEMU_PID; its stdout
# goes to ours; if it fails, run.sh fails (status 1 unless the command failed itself).
# --cut-on REGEX / --cut-after S: a power cut (QMP quit) S seconds (default 0) after REGEX (grep
# -E) appears in the command's stdout or on the console, or S seconds after the command started.
# Then run.sh exits 0 if the power was cut while the command ran, and non-zero (the command's
# status, or 1) if the command ended before the cut.
#
# The guest's root is an overlay: the host root (read-only 9p) under a tmpfs, so the command may
# write anywhere but nothing reaches the host except through $SWIFTWING_VM_OUT (see below).
# The command runs as root, cwd = the host's cwd, no network unless --net, stdin = /dev/null; its stdout and
# stderr are streamed to ours. Inside the guest SWIFTWING_VM_GUEST=1 and SWIFTWING_VM_OUT is a
# writable directory whose files run.sh copies to --out DIR (if given) after the run.
#
# Exit status: the command's own status, or
#   2   usage error
#   77  skipped: QEMU cannot run here (no qemu and cannot install it, no kernel package, or QEMU
#       fails to start with both KVM and TCG); or --gpio-sim and gpio-sim cannot be built here
#   124 timed out (the guest was killed after --timeout seconds, default 120)
#   125 the rig failed: the guest booted (or tried to) but reported no exit status
#       (kernel panic, init error); the console log is printed
#
# Environment: SWIFTWING_VM_CACHE (cache, default ~/.cache/swiftwing-vm), SWIFTWING_VM_ACCEL
# (auto|kvm|tcg, default auto: KVM only if a quick probe boot works; the result is cached),
# SWIFTWING_VM_TIMEOUT (default for --timeout), SWIFTWING_VM_VERBOSE=1 (same as -v: print the
# console log), SWIFTWING_VM_QUIET=1 (no timing line), SWIFTWING_VM_QEMU (the QEMU binary,
# default qemu-system-x86_64), SWIFTWING_VM_CPU (QEMU -cpu model; default: QEMU's, qemu64 under
# TCG, which lacks AVX and SSE4: a binary built for x86-64-v2 or -march=native needs e.g. "max"),
# SWIFTWING_VM_BZIMAGE=1 (boot vmlinuz instead of the PVH vmlinux).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; }

timeout_s="${SWIFTWING_VM_TIMEOUT:-120}"
verbose="${SWIFTWING_VM_VERBOSE:-0}"
keep=0
outdir=""
params=()
GPIO_SIM_DEFAULT="pinctrl-bcm2711:58:17=SHUTTER:up,27=BUZZER,22=LIGHT"
gpio_sim=""
systemd=0 usb=0 net=0 hook="" cut_on="" cut_after=""
disks=() files=()
# add_file SRC DEST — copy a host file into the guest's root before it boots
add_file() {
    [ -f "$1" ] || { echo "run.sh: $1: no such file" >&2; exit 2; }
    files+=("$(realpath "$1")|$2")
}
while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) [ $# -ge 2 ] || { usage; exit 2; }; timeout_s="$2"; shift 2 ;;
        --timeout=*) timeout_s="${1#*=}"; shift ;;
        --param) [ $# -ge 2 ] || { usage; exit 2; }; params+=("$2"); shift 2 ;;
        --param=*) params+=("${1#*=}"); shift ;;
        --out) [ $# -ge 2 ] || { usage; exit 2; }; outdir="$2"; shift 2 ;;
        --out=*) outdir="${1#*=}"; shift ;;
        -v|--verbose) verbose=1; shift ;;
        --keep) keep=1; shift ;;
        --gpio-sim) gpio_sim="$GPIO_SIM_DEFAULT"; shift ;;
        --systemd) systemd=1; shift ;;
        --unit|--udev-rule|--file|--disk|--hook|--cut-on|--cut-after)
            [ $# -ge 2 ] || { usage; exit 2; }
            case "$1" in
                --unit) add_file "$2" "/etc/systemd/system/$(basename "$2")" ;;
                --udev-rule) add_file "$2" "/etc/udev/rules.d/$(basename "$2")" ;;
                --file) case "$2" in *:/*) add_file "${2%%:/*}" "/${2#*:/}" ;; *) echo "run.sh: --file SRC:/DEST" >&2; exit 2 ;; esac ;;
                --disk) [ -f "$2" ] || { echo "run.sh: --disk $2: no such file" >&2; exit 2; }; disks+=("$(realpath "$2")") ;;
                --hook) hook="$2" ;;
                --cut-on) cut_on="$2" ;;
                --cut-after) cut_after="$2" ;;
            esac
            shift 2 ;;
        --usb) usb=1; shift ;;
        --net) net=1; shift ;;
        --gpio-sim=*) gpio_sim="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "run.sh: unknown option $1" >&2; usage; exit 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "run.sh: no command given" >&2; usage; exit 2; }
[ "$net" = 1 ] && [ "$systemd" = 1 ] && { echo "run.sh: --net works without --systemd only" >&2; exit 2; }
case "$timeout_s" in ''|*[!0-9]*) echo "run.sh: --timeout needs whole seconds" >&2; exit 2 ;; esac
[[ "$cut_after" =~ ^([0-9]+(\.[0-9]*)?)?$ ]] || { echo "run.sh: --cut-after needs seconds (e.g. 2.5)" >&2; exit 2; }
if [ -n "$hook" ]; then
    hook_cmd="$(command -v "$hook" || true)"
    [ -n "$hook_cmd" ] || { echo "run.sh: --hook $hook: not found" >&2; exit 2; }
fi
if [ -n "$gpio_sim" ] && ! [[ "$gpio_sim" =~ ^[A-Za-z0-9_.-]+:[0-9]+:[0-9]+=[A-Za-z0-9_.-]+(:(up|down))?(,[0-9]+=[A-Za-z0-9_.-]+(:(up|down))?)*$ ]]; then
    echo "run.sh: --gpio-sim=LABEL:NUM_LINES:OFFSET=NAME[:up|down],... (got '$gpio_sim')" >&2; exit 2
fi

skip() { printf '[vm] skipped: QEMU cannot run here: %s\n' "$*" >&2; exit 77; }

t_start=$(vm_now)
kdir="$("$here/fetch-kernel.sh")" || skip "could not install the host packages or fetch the kernel package"
initrd="$("$here/build-initramfs.sh" "$kdir")" || vm_die "building the initramfs failed" 125
abi="$(cat "$kdir/.abi")"
kernel="$kdir/vmlinux"  # uncompressed: PVH boot, no decompression under TCG
{ [ -f "$kernel" ] && [ "${SWIFTWING_VM_BZIMAGE:-0}" != 1 ]; } || kernel="$kdir/vmlinuz"
qemu="$(command -v "${SWIFTWING_VM_QEMU:-qemu-system-x86_64}" || true)"
[ -n "$qemu" ] || skip "no ${SWIFTWING_VM_QEMU:-qemu-system-x86_64}"
gpio_sim_dir=""
if [ -n "$gpio_sim" ]; then
    gst=0
    gpio_sim_dir="$("$here/build-gpio-sim.sh" "$kdir")" || gst=$?
    if [ "$gst" = 77 ]; then
        printf '[vm] skipped: gpio-sim unavailable (its kernel sources or headers could not be fetched or built)\n' >&2
        exit 77
    fi
    [ "$gst" = 0 ] || vm_die "building gpio-sim failed" 125
    # gpiodetect, gpioinfo, gpiomon, gpioset for tests (the guest runs the host's binaries)
    [ "${SWIFTWING_VM_NO_INSTALL:-0}" = 1 ] || vm_need_packages gpiod:gpiodetect || vm_log "could not install gpiod (libgpiod tools)"
fi
if [ "${SWIFTWING_VM_NO_INSTALL:-0}" != 1 ]; then
    # systemd-udevd for --systemd (systemd itself is on every Debian root); socat for QMP
    if [ "$systemd" = 1 ]; then
        vm_need_packages systemd:/lib/systemd/systemd udev:/lib/systemd/systemd-udevd || skip "cannot install systemd and udev"
    fi
    if [ -n "$hook$cut_on$cut_after" ] || [ "$usb" = 1 ]; then
        vm_need_packages socat:socat || skip "cannot install socat (the QMP client)"
    fi
fi
[ "$systemd" = 0 ] || [ -x /lib/systemd/systemd ] || skip "no /lib/systemd/systemd on this host"
t_ready=$(vm_now)

rundir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-vm.XXXXXX")"
qpid=""
cleanup() {
    if [ -n "$qpid" ]; then kill "$qpid" 2>/dev/null || true; fi
    if [ "$keep" = 1 ]; then vm_log "kept $rundir"; else rm -rf "$rundir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sq() { local s="${1//\'/\'\\\'\'}"; printf "'%s'" "$s"; }  # POSIX single-quoting for busybox ash

# prepare RESULTSDIR COMMAND... — the share's vm.conf (read by the guest's init) and command.sh
prepare() {
    local res="$1"; shift
    mkdir -p "$res/out"
    : >"$res/stdout"; : >"$res/stderr"
    {
        printf 'VM_KMODS=%s\n' "$(sq "$kdir/lib/modules/$abi")"
        local p mod
        declare -A extra=()
        for p in "${params[@]+"${params[@]}"}"; do
            case "$p" in *.*=*) ;; *) echo "run.sh: --param wants MOD.KEY=VALUE, got $p" >&2; exit 2 ;; esac
            mod="${p%%.*}"; mod="${mod//-/_}"
            extra[$mod]="${extra[$mod]:-} ${p#*.}"
        done
        for mod in "${!extra[@]}"; do printf 'VM_PARAM_%s=%s\n' "$mod" "$(sq "${extra[$mod]}")"; done
        if [ -n "$gpio_sim_dir" ]; then
            printf 'VM_GPIO_SIM=%s\nVM_GPIO_SIM_SPEC=%s\n' "$(sq "$gpio_sim_dir")" "$(sq "$gpio_sim")"
        fi
        local mp=""
        [ "$usb" = 1 ] && mp="xhci_pci usb_storage sd_mod"
        [ "${#disks[@]}" -gt 0 ] && mp="$mp virtio_blk"
        [ "$net" = 1 ] && mp="$mp virtio_net" && printf 'VM_NET=1\n'
        [ -n "$mp" ] && printf 'VM_MODPROBE=%s\n' "$(sq "${mp# }")"
        [ "$systemd" = 1 ] && printf 'VM_SYSTEMD=1\n'
    } >"$res/vm.conf"
    local f
    for f in "${files[@]+"${files[@]}"}"; do
        mkdir -p "$res/root$(dirname "${f#*|}")"
        cp "${f%%|*}" "$res/root${f#*|}"
    done
    [ "$systemd" = 1 ] && stage_systemd "$res"
    {
        echo '# generated by scripts/vm/run.sh; run by bash in the guest chroot'
        local v
        for v in PATH HOME LANG LC_ALL TERM TZ USER LOGNAME $(compgen -e | grep -E '^SWIFTWING_' || true); do
            [ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
        done
        echo 'export SWIFTWING_VM_GUEST=1 SWIFTWING_VM_OUT=/run/swiftwing-vm/results/out'
        printf 'export SWIFTWING_VM_KERNEL=%q\n' "$abi"
        printf 'cd %q || { echo "vm: cannot cd to %q in the guest" >&2; exit 125; }\n' "$PWD" "$PWD"
        printf 'exec'; printf ' %q' "$@"; printf '\n'
    } >"$res/command.sh"
}

# Units that a test boot does not need (each costs time under TCG) or that must not run there.
MASKED_UNITS=(
    systemd-timesyncd.service systemd-pstore.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount
    systemd-firstboot.service systemd-machine-id-commit.service systemd-pcrphase-sysinit.service
    systemd-pcrphase.service systemd-random-seed.service systemd-repart.service systemd-update-utmp.service
    systemd-journal-flush.service systemd-journal-catalog-update.service systemd-update-done.service
    systemd-hwdb-update.service ldconfig.service systemd-sysusers.service systemd-remount-fs.service
    systemd-fsck-root.service dev-hugepages.mount dev-mqueue.mount sys-fs-fuse-connections.mount
    sys-kernel-debug.mount sys-kernel-tracing.mount systemd-ask-password-console.path
    systemd-ask-password-wall.path dbus.socket systemd-initctl.socket systemd-journald-audit.socket
    e2scrub_reap.service systemd-tmpfiles-clean.timer getty@tty1.service serial-getty@ttyS0.service
    systemd-modules-load.service systemd-sysctl.service kmod-static-nodes.service
    systemd-tmpfiles-setup-dev.service systemd-tmpfiles-setup.service
)

# stage_systemd RESULTSDIR — the test target and service, masks and default.target (--systemd)
stage_systemd() {
    local res="$1" u d="$1/root/etc/systemd/system"
    mkdir -p "$d"
    for u in "${MASKED_UNITS[@]}"; do ln -sfn /dev/null "$d/$u"; done
    # and every generator (fstab, getty, sysv, gpt-auto...: seconds under TCG, nothing needed)
    mkdir -p "$1/root/etc/systemd/system-generators"
    for u in /lib/systemd/system-generators/*; do
        [ -e "$u" ] && ln -sfn /dev/null "$1/root/etc/systemd/system-generators/${u##*/}"
    done
    ln -sfn swiftwing-vm-test.target "$d/default.target"
    cat >"$d/swiftwing-vm-test.target" <<'UNIT'
[Unit]
Description=SwiftWing VM rig: test target (run.sh --systemd)
Requires=swiftwing-vm-test.service
After=swiftwing-vm-test.service
AllowIsolate=yes
UNIT
    cat >"$d/swiftwing-vm-test.service" <<'UNIT'
[Unit]
Description=SwiftWing VM rig: the test command (run.sh --systemd)
DefaultDependencies=no
Wants=sysinit.target sockets.target
After=sysinit.target sockets.target systemd-udev-trigger.service
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=/bin/bash /run/swiftwing-vm/results/systemd-command.sh
StandardOutput=journal+console
StandardError=journal+console
UNIT
    cat >"$res/systemd-command.sh" <<'SH'
# generated by scripts/vm/run.sh --systemd: runs command.sh as the test service
R=/run/swiftwing-vm/results
read -r up _ </proc/uptime; echo "command-start $up" >>"$R/timing"
env -i /bin/bash "$R/command.sh" </dev/null >"$R/stdout" 2>"$R/stderr"
rc=$?
read -r up _ </proc/uptime; echo "command-end $up" >>"$R/timing"
[ -f "$R/journal-wanted" ] && journalctl -b --no-pager -o short-monotonic >"$R/journal.txt" 2>&1
echo "$rc" >"$R/exit-code.tmp" && mv "$R/exit-code.tmp" "$R/exit-code"
exit 0
SH
    [ "$verbose" = 1 ] || [ "$keep" = 1 ] && : >"$res/journal-wanted"
    return 0
}

# boot ACCEL TIMEOUT RESULTSDIR LOG — run QEMU; returns timeout(1)'s / QEMU's status
boot() {
    local accel="$1" t="$2" res="$3" log="$4" main="${5:-}" st=0
    local qmp
    qmp="$rundir/qmp-$(basename "$res").sock"
    # shellcheck disable=SC2054 # the commas belong to QEMU option values
    local args=(
        -accel "$accel" ${SWIFTWING_VM_CPU:+-cpu "$SWIFTWING_VM_CPU"} -m 1024 -smp 2 -nographic -nodefaults -no-user-config -no-reboot
        -serial stdio -monitor none
        -kernel "$kernel" -initrd "$initrd"
        -append "console=ttyS0 quiet panic=-1 oops=panic cryptomgr.notests=1"
        -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap
        -virtfs "local,path=$res,mount_tag=results,security_model=none"
        -qmp "unix:$qmp,server=on,wait=off"
    )
    if [ "$main" = stream ]; then
        # shellcheck disable=SC2054 # QEMU option values
        [ "$usb" = 1 ] && args+=(-device qemu-xhci,id=xhci)
        # shellcheck disable=SC2054 # QEMU option values
        [ "$net" = 1 ] && args+=(-nic user,model=virtio-net-pci)
        local i=0 img
        for img in "${disks[@]+"${disks[@]}"}"; do
            args+=(-drive "file=$img,if=none,id=disk$i,format=raw,cache=writeback"
                   -device "virtio-blk-pci,drive=disk$i,serial=swiftwing-disk$i")
            i=$((i + 1))
        done
    fi
    timeout --kill-after=5 "$t" "$qemu" "${args[@]}" </dev/null >"$log" 2>&1 &
    qpid=$!
    local tout="" terr="" hpid="" cpid=""
    if [ "$main" = stream ]; then
        tail -q -n +1 -s 0.2 -f --pid="$qpid" "$res/stdout" &
        tout=$!
        tail -q -n +1 -s 0.2 -f --pid="$qpid" "$res/stderr" >&2 &
        terr=$!
        if [ -n "$hook" ]; then
            local n=0   # (QEMU makes its QMP socket a moment after it starts)
            while [ ! -S "$qmp" ] && kill -0 "$qpid" 2>/dev/null && [ "$n" -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
            SWIFTWING_VM_QMP="$qmp" SWIFTWING_VM_RESULTS="$res" SWIFTWING_VM_OUT="$res/out" \
                SWIFTWING_VM_CONSOLE="$log" SWIFTWING_VM_QEMU_PID="$qpid" "$hook_cmd" &
            hpid=$!
        fi
        if [ -n "$cut_on$cut_after" ]; then
            cut_watch "$qmp" "$res" "$log" "$qpid" &
            cpid=$!
        fi
    fi
    wait "$qpid" || st=$?
    qpid=""
    if [ -n "$cpid" ]; then kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null || true; fi
    if [ -n "$hpid" ]; then
        # the hook may still be reading back what the guest left (it sees QEMU gone)
        local n=0
        while kill -0 "$hpid" 2>/dev/null && [ "$n" -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
        kill "$hpid" 2>/dev/null && vm_log "the --hook program was still running 30 s after QEMU exited: killed"
        hook_st=0; wait "$hpid" || hook_st=$?
    fi
    if [ "$main" = stream ]; then wait "$tout" "$terr" 2>/dev/null || true; fi
    return "$st"
}

# cut_watch QMP RESULTS LOG QEMU_PID — the power cut (--cut-on / --cut-after): wait for the
# marker (an extended regex) in the command's stdout or the console, or for the command to start,
# then --cut-after seconds, then QMP "quit". Records the moment in RUNDIR/power-cut.
cut_watch() {
    local qmp="$1" res="$2" log="$3" q="$4"
    while kill -0 "$q" 2>/dev/null; do
        if [ -n "$cut_on" ]; then
            grep -qE -- "$cut_on" "$res/stdout" "$log" 2>/dev/null && break
        else
            grep -q '^command-start ' "$res/timing" 2>/dev/null && break
        fi
        sleep 0.02
    done
    kill -0 "$q" 2>/dev/null || return 0
    [ -z "$cut_after" ] || sleep "$cut_after"
    [ -f "$res/exit-code" ] && return 0   # the command finished first: nothing to cut
    # shellcheck source=qmp.sh
    . "$here/qmp.sh"
    date +%s.%N >"$rundir/power-cut"
    qmp_quit "$qmp" >/dev/null 2>&1 || true
}

choose_accel() {
    local a="${SWIFTWING_VM_ACCEL:-auto}"
    case "$a" in kvm|tcg) echo "$a"; return ;; auto) ;; *) vm_die "SWIFTWING_VM_ACCEL must be auto, kvm or tcg" 2 ;; esac
    if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then echo tcg; return; fi
    local key f
    key="$( { uname -r; grep -m1 '^model name' /proc/cpuinfo || true; "$qemu" --version | head -n1; } | sha256sum | cut -c1-16)"
    f="$VM_CACHE/accel/$key"
    if [ -f "$f" ]; then cat "$f"; return; fi
    mkdir -p "$VM_CACHE/accel"
    local res="$rundir/probe" t0 result=tcg
    t0=$(vm_now)
    prepare "$res" true
    # A working KVM guest is at its command in ~1 s; nested KVM here has been seen to hang.
    if boot kvm 10 "$res" "$rundir/probe.log" && [ "$(cat "$res/exit-code" 2>/dev/null)" = 0 ]; then
        result=kvm
    fi
    vm_log "KVM probe: using $result ($(vm_since "$t0") s; cached in $f)"
    echo "$result" >"$f"
    echo "$result"
}

accel="$(choose_accel)"
res="$rundir/results"
prepare "$res" "$@"
log="$rundir/console.log"
t_boot=$(vm_now)
st=0 hook_st=0
boot "$accel" "$timeout_s" "$res" "$log" stream || st=$?
wall="$(vm_since "$t_boot")"
[ -n "$hook" ] && [ "$hook_st" != 0 ] && vm_log "error: the --hook program exited with status $hook_st"

show_console() {
    echo "----- guest console ($accel) -----" >&2
    # (without SeaBIOS's terminal escapes and the serial line's carriage returns)
    if [ "$verbose" = 1 ]; then cat "$log"; else tail -n 60 "$log"; fi |
        sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g; s/\r$//' >&2
    echo "----- end of guest console -----" >&2
}
[ "$verbose" = 1 ] && show_console

if [ -n "$outdir" ] && [ -d "$res/out" ]; then
    mkdir -p "$outdir" && cp -a "$res/out/." "$outdir/"
fi

# timing_line EXIT — the one line of times on stderr
timing_line() {
    [ "${SWIFTWING_VM_QUIET:-0}" != 1 ] || return 0
    awk -v acc="$accel" -v wall="$wall" -v prep="$(awk -v a="$t_start" -v b="$t_ready" 'BEGIN{printf "%.1f", b-a}')" -v rc="$1" '
        { t[$1] = $2 }
        END { end = ("command-end" in t) ? sprintf("%.1f s", t["command-end"] - t["command-start"]) : "cut";
              printf "[vm] %s: prepare %s s, boot %.1f s (guest uptime at command), command %s, qemu wall %s s, exit %s\n",
                     acc, prep, t["command-start"], end, wall, rc }' "$res/timing" >&2
}

if [ -f "$rundir/power-cut" ] && [ ! -f "$res/exit-code" ]; then
    # A power cut (--cut-on/--cut-after) while the command ran: that is success for run.sh.
    timing_line 0
    vm_log "power cut (QMP quit) $(awk -v a="$t_boot" -v b="$(cat "$rundir/power-cut")" 'BEGIN { printf "%.1f", b - a }') s after QEMU started${cut_on:+, ${cut_after:-0} s after /$cut_on/}"
    [ "$hook_st" = 0 ] || exit 1
    exit 0
fi
if [ "$st" = 124 ] || [ "$st" = 137 ]; then
    [ "$verbose" = 1 ] || show_console
    printf '[vm] error: timed out after %s s (%s); the guest was killed. Raise --timeout if the command is just slow.\n' "$timeout_s" "$accel" >&2
    exit 124
fi
if [ -f "$res/exit-code" ]; then
    rc="$(cat "$res/exit-code")"
    timing_line "$rc"
    if [ -n "$cut_on$cut_after" ]; then
        vm_log "error: the command exited ($rc) before the power cut${cut_on:+ (marker /$cut_on/ $(grep -qE -- "$cut_on" "$res/stdout" "$log" 2>/dev/null && echo seen || echo "never seen"))}"
        [ "$rc" != 0 ] || rc=1
    fi
    if [ "$rc" = 0 ] && [ "$hook_st" != 0 ]; then rc=1; fi
    exit "$rc"
fi
if [ "$st" != 0 ] && [ ! -f "$res/timing" ]; then
    show_console
    if [ "$accel" = kvm ]; then
        vm_log "QEMU failed with KVM; retry with SWIFTWING_VM_ACCEL=tcg"
        exit 125
    fi
    # Tell "QEMU cannot run here" from "the rig gave QEMU something it rejects" (a rig bug must
    # fail, not skip): a bare paused TCG machine that stays up for 3 s means QEMU itself works.
    bare=0
    timeout 3 "$qemu" -accel tcg -machine pc -nodefaults -display none -monitor none -S \
        </dev/null >/dev/null 2>&1 || bare=$?
    if [ "$bare" = 124 ]; then
        printf '[vm] error: QEMU runs here but rejected the rig'"'"'s machine (status %s; see the console above)\n' "$st" >&2
        exit 125
    fi
    skip "QEMU exited with status $st before the guest started (TCG), and a bare TCG machine fails too"
fi
show_console
[ -f "$res/init-error" ] && printf '[vm] guest init error: %s\n' "$(cat "$res/init-error")" >&2
printf '[vm] error: the guest reported no exit status (QEMU status %s): kernel panic or init failure\n' "$st" >&2
exit 125
