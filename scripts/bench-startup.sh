#!/usr/bin/env bash
# Daemon start → first frame, beside its floor: starting the same binary at all (`swiftwing
# --version`: exec, dynamic linking, the Swift runtime, argument parsing). Runs are alternated
# (floor, daemon, floor, daemon, …) so load from other processes hits both alike. The daemon's time
# ends when it logs "first frame" (the camera module logs it once per opening, with since_open_ms:
# the camera's own share, from opening the device or the photos to that frame). The state directory
# is made by one unmeasured run first, so each measured start opens an existing database, as on a
# device. Pure bash ($EPOCHREALTIME), so it runs in the VM rig's guest too.
# Usage: scripts/bench-startup.sh [RUNS] [binary] [camera]   (camera: synthetic (default) or /dev/videoN)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
bin=${2:-.build/release/swiftwing}
camera=${3:-synthetic}
work=$(mktemp -d /tmp/swiftwing-startbench.XXXXXX)
trap '[ -z "${daemon:-}" ] || kill -9 "$daemon" 2>/dev/null || true; rm -rf "$work"' EXIT
: > "$work/swiftwing.toml"
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock")

microseconds() { local t=${1/./}; echo $((10#$t)); }

# Prints "total_ms camera_ms cpu_ms": from just before exec to the "first frame" line, its
# since_open_ms, and the daemon's CPU time (user + system) by then, in 10 ms clock ticks.
daemon_run() {
    local began line ended="" opening="" ticks=""
    began=$EPOCHREALTIME
    coproc DAEMON { exec "$bin" run "${args[@]}" --camera "$camera" 2>&1; }
    daemon=$DAEMON_PID
    while IFS= read -r -t 30 line <&"${DAEMON[0]}"; do
        if [[ $line == *"first frame"* ]]; then
            ended=$EPOCHREALTIME
            ticks=$(awk '{print $14 + $15}' "/proc/$daemon/stat")
            opening=$(grep -o 'since_open_ms=[0-9.]*' <<<"$line" | cut -d= -f2)
            break
        fi
    done
    # What the daemon logs while it stops stays in the pipe (a few lines, far below its 64 KiB).
    kill -TERM "$daemon"; wait "$daemon" || true
    daemon=""
    [ -n "$ended" ] || { echo "the daemon logged no 'first frame' within 30 s" >&2; exit 1; }
    awk -v a="$(microseconds "$began")" -v b="$(microseconds "$ended")" -v c="$opening" -v t="$ticks" \
        -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f %s %.0f\n", (b - a) / 1000, c, t * 1000 / hz}'
}

# Prints "wall_ms cpu_ms" of `swiftwing --version`.
floor_run() {
    local began ended cpu
    began=$EPOCHREALTIME
    cpu=$( { TIMEFORMAT='%3U %3S'; time "$bin" --version >/dev/null; } 2>&1 )
    ended=$EPOCHREALTIME
    awk -v a="$(microseconds "$began")" -v b="$(microseconds "$ended")" -v c="$cpu" \
        'BEGIN {split(c, t, " "); printf "%.1f %.0f\n", (b - a) / 1000, (t[1] + t[2]) * 1000}'
}

daemon_run >/dev/null  # creates the state directory and the database
for _ in $(seq 1 "$runs"); do
    floor_run >>"$work/floor"
    daemon_run >>"$work/daemon"
done

# median, p90, min of column $2 of file $1
stats() {
    cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR] = $1} END {
        printf "%.1f | %.1f | %.1f", v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.999)], v[1] }'
}
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "| $runs runs each, alternated, camera $camera | median ms | p90 ms | min ms |"
echo "|---|---:|---:|---:|"
echo "| floor: \`swiftwing --version\` (exec → exit) | $(stats "$work/floor" 1) |"
echo "| floor: its CPU time | $(stats "$work/floor" 2) |"
echo "| daemon: exec → first frame logged | $(stats "$work/daemon" 1) |"
echo "| of it, camera open → first frame (since_open_ms) | $(stats "$work/daemon" 2) |"
echo "| daemon: its CPU time by the first frame (10 ms ticks) | $(stats "$work/daemon" 3) |"
awk -v d="$(median "$work/daemon" 1)" -v f="$(median "$work/floor" 1)" \
    'BEGIN {printf "| daemon minus floor, medians | %.1f | | |\n", d - f}'
