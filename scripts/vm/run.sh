#!/usr/bin/env bash
# Run one command inside a QEMU guest on a real (Debian) kernel with vivid (/dev/video0) and vfb
# (/dev/fb0) loaded, in a chroot of this machine's root (so host-built binaries, host tools and
# the current directory are all there), and exit with the command's exit status.
#
#   scripts/vm/run.sh [--timeout S] [--param MOD.KEY=VALUE]... [--gpio-sim[=SPEC]] [--out DIR]
#                     [-v] [--keep] -- COMMAND [ARG]...
#
# --gpio-sim: also build (cached) and load gpio-sim and create a GPIO chip before the command:
# SPEC = LABEL:NUM_LINES:OFFSET=NAME[:up|down],..., default
# pinctrl-bcm2711:58:17=SHUTTER:up,27=BUZZER,22=LIGHT (a Raspberry Pi 4's header chip, lines as
# wired in Hardware/README.md; SHUTTER's simulated pull starts up = button released). In the
# guest, scripts/vm/gpio-sim-ctl.sh presses buttons and reads output levels. Exits 77 (skipped)
# when gpio-sim cannot be built here.
#
# The guest's root is an overlay: the host root (read-only 9p) under a tmpfs, so the command may
# write anywhere but nothing reaches the host except through $SWIFTWING_VM_OUT (see below).
# The command runs as root, cwd = the host's cwd, no network, stdin = /dev/null; its stdout and
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
        --gpio-sim=*) gpio_sim="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "run.sh: unknown option $1" >&2; usage; exit 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "run.sh: no command given" >&2; usage; exit 2; }
case "$timeout_s" in ''|*[!0-9]*) echo "run.sh: --timeout needs whole seconds" >&2; exit 2 ;; esac
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
t_ready=$(vm_now)

rundir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-vm.XXXXXX")"
qpid=""
cleanup() {
    [ -n "$qpid" ] && kill "$qpid" 2>/dev/null || true
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
    } >"$res/vm.conf"
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

# boot ACCEL TIMEOUT RESULTSDIR LOG — run QEMU; returns timeout(1)'s / QEMU's status
boot() {
    local accel="$1" t="$2" res="$3" log="$4" st=0
    # shellcheck disable=SC2054 # the commas belong to QEMU option values
    local args=(
        -accel "$accel" ${SWIFTWING_VM_CPU:+-cpu "$SWIFTWING_VM_CPU"} -m 1024 -smp 2 -nographic -nodefaults -no-user-config -no-reboot
        -serial stdio -monitor none
        -kernel "$kernel" -initrd "$initrd"
        -append "console=ttyS0 quiet panic=-1 oops=panic"
        -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap
        -virtfs "local,path=$res,mount_tag=results,security_model=none"
    )
    timeout --kill-after=5 "$t" "$qemu" "${args[@]}" </dev/null >"$log" 2>&1 &
    qpid=$!
    if [ "${5:-}" = stream ]; then
        tail -q -n +1 -s 0.2 -f --pid="$qpid" "$res/stdout" &
        local tout=$!
        tail -q -n +1 -s 0.2 -f --pid="$qpid" "$res/stderr" >&2 &
        local terr=$!
    fi
    wait "$qpid" || st=$?
    qpid=""
    if [ "${5:-}" = stream ]; then wait "$tout" "$terr" 2>/dev/null || true; fi
    return "$st"
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
st=0
boot "$accel" "$timeout_s" "$res" "$log" stream || st=$?
wall="$(vm_since "$t_boot")"

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

if [ "$st" = 124 ] || [ "$st" = 137 ]; then
    [ "$verbose" = 1 ] || show_console
    printf '[vm] error: timed out after %s s (%s); the guest was killed. Raise --timeout if the command is just slow.\n' "$timeout_s" "$accel" >&2
    exit 124
fi
if [ -f "$res/exit-code" ]; then
    rc="$(cat "$res/exit-code")"
    if [ "${SWIFTWING_VM_QUIET:-0}" != 1 ]; then
        awk -v acc="$accel" -v wall="$wall" -v prep="$(awk -v a="$t_start" -v b="$t_ready" 'BEGIN{printf "%.1f", b-a}')" -v rc="$rc" '
            { t[$1] = $2 }
            END { printf "[vm] %s: prepare %s s, boot %.1f s (guest uptime at command), command %.1f s, qemu wall %s s, exit %s\n",
                  acc, prep, t["command-start"], t["command-end"] - t["command-start"], wall, rc }' "$res/timing" >&2
    fi
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
