#!/usr/bin/env bash
# Drive the gpio-sim chip of a guest booted with `run.sh --gpio-sim` (run it in the guest).
# Lines are named as in the chip's spec (SHUTTER, BUZZER, LIGHT by default) or given by offset.
#
#   gpio-sim-ctl.sh chip                 the chip's device, e.g. /dev/gpiochip0
#   gpio-sim-ctl.sh label                the chip's label, e.g. pinctrl-bcm2711
#   gpio-sim-ctl.sh offset LINE          the line's offset, e.g. 17
#   gpio-sim-ctl.sh sysfs LINE           the line's control directory .../sim_gpioN
#   gpio-sim-ctl.sh pull LINE up|down    set the simulated pull (what the outside world drives)
#   gpio-sim-ctl.sh press LINE           pull down: an active-low button to GND is pressed
#   gpio-sim-ctl.sh release LINE         pull up: the button is released
#   gpio-sim-ctl.sh click LINE [HOLD_S]  press, hold HOLD_S seconds (default 0.1), release
#   gpio-sim-ctl.sh flip LINE N [GAP_S]  N back-to-back pull changes, starting with the opposite
#                                        of the current level (no pause unless GAP_S is given)
#   gpio-sim-ctl.sh bounce LINE [down|up] [MAX_MS]
#                                        a bouncy edge: 4 short (0.2-0.8 ms) reversals, then settles
#                                        down (a bouncy press, default) or up (a bouncy release);
#                                        exit 3 when a released step in it took MAX_MS or more
#   gpio-sim-ctl.sh seq LINE STEP...     STEP = up | down | a pause in seconds (e.g. 0.002)
#   gpio-sim-ctl.sh value LINE           the line's level, 0 or 1 (an output's level while a
#                                        program holds it; otherwise the pull)
#   gpio-sim-ctl.sh sample LINE SECONDS [INTERVAL_S]
#                                        print "<seconds since the start> <level>" at the start and
#                                        at every change, polling every INTERVAL_S (default 0.002)
#
# Note (gpio-sim): a consumer's bias (e.g. a pull-up in the line request) overrides the simulated
# pull when the line is requested; press after the program has requested the line. On release of
# an output line gpio-sim resets its level to the pull.
set -euo pipefail

cfg=/sys/kernel/config/gpio-sim/swiftwing
die() { echo "gpio-sim-ctl: $*" >&2; exit 2; }
[ -d "$cfg" ] || die "no gpio-sim chip (boot the guest with scripts/vm/run.sh --gpio-sim; configfs on /sys/kernel/config)"
# (no forks where a builtin will do: every fork+exec costs milliseconds under TCG)
read -r dev_name <"$cfg/dev_name"; read -r chip_name <"$cfg/bank0/chip_name"
sim="/sys/devices/platform/$dev_name/$chip_name"

# offset LINE — sets $off to LINE's offset (LINE = a name or a number)
offset() {
    local l="$1" d n
    case "$l" in ''|*[!0-9]*) ;; *) off="$l"; return ;; esac
    for d in "$cfg"/bank0/line*; do
        n=""; read -r n <"$d/name" 2>/dev/null || true
        [ "$n" = "$l" ] && { off="${d##*/line}"; return; }
    done
    die "no line named $l"
}
# ctl LINE — sets $d to the line's sysfs control directory
ctl() { offset "$1"; d="$sim/sim_gpio$off"; }
# With SWIFTWING_GPIOSIM_STAMPS=FILE every pull change is also appended to FILE as
# "<CLOCK_REALTIME seconds> up|down" (kept in memory until the command ends: no file I/O between steps).
stamps=""
setpull() { echo "pull-$2" >"$1/pull"; [ -z "${SWIFTWING_GPIOSIM_STAMPS:-}" ] || stamps+="$EPOCHREALTIME $2"$'\n'; }
save_stamps() { [ -z "${SWIFTWING_GPIOSIM_STAMPS:-}" ] || printf '%s' "$stamps" >>"$SWIFTWING_GPIOSIM_STAMPS"; }
trap save_stamps EXIT
# pause SECONDS — sleep without forking (a fork+exec of sleep costs milliseconds under TCG)
exec {_pause_fd}<> <(:)
pause() { read -r -t "$1" -u "$_pause_fd" _ || true; }

cmd="${1:-}"; shift || true
case "$cmd" in
    chip) echo "/dev/$chip_name" ;;
    label) read -r l <"$cfg/bank0/label"; echo "$l" ;;
    offset) offset "${1:?LINE}"; echo "$off" ;;
    sysfs) ctl "${1:?LINE}"; echo "$d" ;;
    pull) case "${2:-}" in up|down) ctl "${1:?LINE}"; setpull "$d" "$2" ;; *) die "pull LINE up|down" ;; esac ;;
    press) ctl "${1:?LINE}"; setpull "$d" down ;;
    release) ctl "${1:?LINE}"; setpull "$d" up ;;
    click) ctl "${1:?LINE}"; setpull "$d" down; pause "${2:-0.1}"; setpull "$d" up ;;
    flip)
        ctl "${1:?LINE}"; n="${2:?N}"; gap="${3:-}"
        read -r v <"$d/value"
        if [ "$v" = 1 ]; then next=down; else next=up; fi
        for ((i = 0; i < n; i++)); do
            setpull "$d" "$next"
            if [ "$next" = up ]; then next=down; else next=up; fi
            [ -z "$gap" ] || pause "$gap"
        done ;;
    bounce)
        ctl "${1:?LINE}"; to="${2:-down}"; max_ms="${3:-}"
        if [ "$to" = down ]; then a=down b=up; else a=up b=down; fi
        # Each released spell (an "up" until the next "down") is timed from before the one write to
        # after the other: an upper bound. Under MAX_MS, none can have been a release and a new press.
        longest=0 up_at=""
        step() {
            local before="${EPOCHREALTIME/[.,]/}"
            setpull "$d" "$1"
            if [ "$1" = up ]; then up_at="$before"
            elif [ -n "$up_at" ]; then
                local spell=$(( ${EPOCHREALTIME/[.,]/} - up_at )); up_at=""
                if [ "$spell" -gt "$longest" ]; then longest="$spell"; fi
            fi
        }
        for s in 0.0002 0.0005 0.0002 0.0008; do step "$a"; pause "$s"; step "$b"; pause 0.0002; done
        step "$a"
        if [ -n "$max_ms" ] && [ "$longest" -ge $(( max_ms * 1000 )) ]; then
            echo "gpio-sim-ctl: a released step of the bounce took up to $(( longest / 1000 )) ms, not under" \
                "$max_ms ms: a starved vCPU stretched it, so it may really have been a release and a new press" >&2
            exit 3
        fi ;;
    seq)
        ctl "${1:?LINE}"; shift
        for s in "$@"; do
            case "$s" in up|down) setpull "$d" "$s" ;; *) pause "$s" ;; esac
        done ;;
    value) ctl "${1:?LINE}"; read -r v <"$d/value"; echo "$v" ;;
    sample)
        ctl "${1:?LINE}"; secs="${2:?SECONDS}"; iv="${3:-0.002}"
        case "$secs" in *.*) ;; *) secs="$secs.0" ;; esac
        f="${secs#*.}000000"; len=$(( 10#${secs%.*} * 1000000 + 10#${f:0:6} ))
        last=""; t0="${EPOCHREALTIME/[.,]/}"; end=$(( t0 + len ))
        while now="${EPOCHREALTIME/[.,]/}"; [ "$now" -lt "$end" ]; do
            read -r v <"$d/value"
            if [ "$v" != "$last" ]; then
                printf '%d.%06d %s\n' $(( (now - t0) / 1000000 )) $(( (now - t0) % 1000000 )) "$v"; last="$v"
            fi
            pause "$iv"
        done ;;
    *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
