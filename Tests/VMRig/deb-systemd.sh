#!/usr/bin/env bash
# The .deb on systemd as PID 1: `dpkg -i` in the guest's overlay creates the swiftwing user, writes
# the config from the example and starts the hardened unit on a fresh install (no API key: it runs
# and says why; no config file: the defaults). Then, on the synthetic camera (a drop-in), presses
# through `swiftwing shutter`; `systemctl kill -s KILL` → systemd restarts it and every
# acknowledged scan is still in the queue; `systemctl stop` ends within TimeoutStopSec as a clean
# stop; `systemd-analyze security` on the live unit; `dpkg -r` keeps the library, `dpkg -P`
# deletes it with the user.
# Needs `swift build --product swiftwing` on the host (the .deb is made from .build/debug/swiftwing;
# the guest sees the host's /opt/swift, which the package does not carry).
# Run alone: Tests/VMRig/deb-systemd.sh
VM_TEST_TIMEOUT=420
here="$(cd "$(dirname "$0")" && pwd)"

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- host: the package, into the rig's cache ----
    set -euo pipefail
    repo="$here/../.."
    if [ ! -x "$repo/.build/debug/swiftwing" ]; then
        echo "not ok 1 - .build/debug/swiftwing is missing: run 'swift build --product swiftwing' on the host first"
        exit 1
    fi
    cache="${SWIFTWING_VM_CACHE:-${HOME:-/root}/.cache/swiftwing-vm}/deb"
    rm -rf "$cache" && mkdir -p "$cache"
    deb="$(SWIFTWING_DEB_ALLOW_UNPACKAGED=1 "$repo/scripts/build-deb.sh" \
        --binary "$repo/.build/debug/swiftwing" --out "$cache")"
    VM_TEST_ARGS=(--systemd --file "$deb:/root/swiftwing.deb")
fi
. "$here/../../scripts/vm/testlib.sh"

# ---- guest ----
export PATH="$PATH:/usr/sbin:/sbin"
wait_for() {  # wait_for SECONDS CMD... — poll every 0.2 s
    local n=$(( $1 * 5 )) i; shift
    for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.2; done
    return 1
}
show() { systemctl show -P "$1" swiftwing.service; }
diagnose() {  # the daemon's view and its journal, on a failure
    swiftwing status 2>&1 | sed 's/^/#   status: /'
    journalctl -u swiftwing.service --no-pager -o short-monotonic | tail -n 40 | sed 's/^/#   journal: /'
}
vm_expect "PID 1 is systemd" "$(cat /proc/1/comm)" systemd
vm_check "no config file before the install" test ! -e /etc/swiftwing/swiftwing.toml

# Fresh install: no key, config from the example (camera /dev/video0: the rig's vivid).
vm_check "dpkg -i installs the package and its postinst starts the service" dpkg -i /root/swiftwing.deb
groups="$(id -nG swiftwing | tr ' ' '\n' | sort | paste -sd' ')"
vm_expect "the swiftwing user's groups" "$groups" "gpio input swiftwing video"
vm_expect "the config from the example: mode, owner" \
    "$(stat -c '%a %U:%G' /etc/swiftwing/swiftwing.toml)" "640 root:swiftwing"
vm_check "the config is the example" cmp /etc/swiftwing/swiftwing.toml /etc/swiftwing/swiftwing.toml.example
vm_expect "enabled" "$(systemctl is-enabled swiftwing.service)" enabled
vm_check "active (READY=1 received) without an API key" wait_for 60 systemctl is-active --quiet swiftwing.service
vm_expect "runs as" "$(show User)" swiftwing
vm_check "the daemon sent a STATUS= text" sh -c '[ -n "$(systemctl show -P StatusText swiftwing.service)" ]'
vm_note "StatusText: $(show StatusText)"

# Without a config file, with a backend but no key: it starts and `status` says why.
rm /etc/swiftwing/swiftwing.toml
mkdir -p /etc/systemd/system/swiftwing.service.d
cat >/etc/systemd/system/swiftwing.service.d/test.conf <<'EOF'
[Service]
Environment=SWIFTWING_CAMERA_DEVICE=synthetic SWIFTWING_BACKEND_URL=https://talaria.invalid/
EOF
systemctl daemon-reload
vm_check "restarts without a config file, on the synthetic camera" systemctl restart swiftwing.service
vm_check "and is active" wait_for 60 systemctl is-active --quiet swiftwing.service
status="$(swiftwing status 2>&1)"
vm_check "swiftwing status says no API key is installed" grep -q "no API key is installed" <<<"$status"
grep -q "no API key is installed" <<<"$status" || printf '%s\n' "$status" | sed 's/^/#   /'
vm_check "and nothing of a key in the journal" sh -c '! journalctl -u swiftwing --no-pager | grep -qi "bearer"'

# Presses, then SIGKILL: systemd restarts it and no acknowledged scan is lost.
streaming() { swiftwing status 2>/dev/null | grep -q "streaming"; }
if wait_for 120 streaming; then vm_ok "the synthetic camera streams"; else vm_not_ok "the synthetic camera streams"; diagnose; fi
ids=()
for i in 1 2 3; do
    id="$(swiftwing shutter 2>&1)" && ids+=("$id") || vm_not_ok "press $i: $id"
done
vm_expect "three presses acknowledged" "${#ids[@]}" 3
[ "${#ids[@]}" = 3 ] || diagnose
pid_before="$(show MainPID)"
restarts_before="$(show NRestarts)"
systemctl kill -s KILL swiftwing.service
restarted() {
    [ "$(show NRestarts)" -gt "$restarts_before" ] && systemctl is-active --quiet swiftwing.service
}
vm_check "systemd restarts it after SIGKILL (Restart=on-failure)" wait_for 90 restarted
vm_check "with a new main pid" sh -c '[ "$(systemctl show -P MainPID swiftwing.service)" != '"$pid_before"' ]'
queue="$(swiftwing queue --json 2>&1)"
for id in "${ids[@]}"; do
    vm_check "scan $id is in the queue after the restart" grep -q "\"$id\"" <<<"$queue"
done
wait_for 120 streaming
id="$(swiftwing shutter 2>&1)"
vm_check "the restarted daemon takes presses" grep -Eq '^[0-9A-Fa-f-]{36}$' <<<"$id"

# A clean stop within the bound.
limit_us="$(show TimeoutStopUSec)"
t0=$(date +%s.%N)
systemctl stop swiftwing.service
took="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
vm_note "systemctl stop took $took s (TimeoutStopSec=$limit_us)"
vm_check "stop ends well within TimeoutStopSec=15 s" awk -v t="$took" 'BEGIN { exit !(t < 15) }'
vm_expect "stopped cleanly (not killed at the timeout)" "$(show Result)" success
[ "$(show Result)" = success ] || diagnose

security="$(systemd-analyze security --no-pager swiftwing.service 2>&1)"
score="$(sed -n 's/.*Overall exposure level for swiftwing.service: \([0-9.]*\).*/\1/p' <<<"$security")"
vm_check "systemd-analyze security on the live unit: $score <= 2.5" awk -v s="${score:-99}" 'BEGIN { exit !(s <= 2.5) }'

# remove keeps the library; purge deletes it, the config and the user.
vm_check "dpkg -r" dpkg -r swiftwing
vm_check "after remove the library is still there" test -f /var/lib/swiftwing/swiftwing.sqlite
vm_check "and the service is gone" sh -c '! systemctl is-active --quiet swiftwing.service'
vm_check "dpkg -P" dpkg -P swiftwing
vm_check "after purge /var/lib/swiftwing is gone" test ! -e /var/lib/swiftwing
vm_check "and the swiftwing user" sh -c '! getent passwd swiftwing'
vm_finish
