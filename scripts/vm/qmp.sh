#!/usr/bin/env bash
# A small QMP (QEMU Machine Protocol) client for host-side hooks of the VM rig, over socat.
# run.sh gives every guest a QMP socket; a --hook program finds it in $SWIFTWING_VM_QMP.
#
# As a command: send each JSON command in turn, print each reply line ({"return": ...} or
# {"error": ...}); exit 1 at the first error reply.
#   scripts/vm/qmp.sh "$SWIFTWING_VM_QMP" '{"execute":"query-status"}'
#
# As a library (one connection, events kept):
#   . scripts/vm/qmp.sh
#   qmp_open "$SWIFTWING_VM_QMP"                 # connects (waits up to 5 s for the socket)
#   qmp_cmd '{"execute":"device_del","arguments":{"id":"stick"}}'   # reply in $QMP_REPLY
#   qmp_wait_event DEVICE_DELETED 10            # 0 once the event came (also if it came earlier)
#   qmp_close
#
# Helpers built on it: qmp_usb_plug SOCKET ID IMAGE and qmp_usb_unplug SOCKET ID (a usb-storage
# stick on the rig's xhci controller, run.sh --usb), qmp_quit SOCKET (a power cut).

QMP_EVENTS=""
QMP_REPLY=""

qmp_open() {
    local sock="$1" i line
    for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && break; sleep 0.05; done
    [ -S "$sock" ] || { echo "qmp: no socket $sock" >&2; return 1; }
    coproc QMP { exec socat - "UNIX-CONNECT:$sock" 2>/dev/null; }
    IFS= read -r -t 5 -u "${QMP[0]}" line || { echo "qmp: no greeting from $sock" >&2; return 1; }
    qmp_cmd '{"execute":"qmp_capabilities"}' >/dev/null
}

# qmp_cmd JSON — send one command; the reply line goes to $QMP_REPLY and stdout; status 1 on an
# error reply or when QEMU closed the connection (as after "quit").
qmp_cmd() {
    local line
    printf '%s\n' "$1" >&"${QMP[1]}" || return 1
    while IFS= read -r -t 30 -u "${QMP[0]}" line; do
        case "$line" in
            *'"event"'*) QMP_EVENTS+="$line"$'\n' ;;
            *'"return"'*) QMP_REPLY="$line"; printf '%s\n' "$line"; return 0 ;;
            *'"error"'*) QMP_REPLY="$line"; printf '%s\n' "$line"; return 1 ;;
        esac
    done
    QMP_REPLY=""
    return 1
}

# qmp_wait_event NAME [TIMEOUT_S] — wait for an event (already received ones count)
qmp_wait_event() {
    local name="$1" t="${2:-10}" line end=$((SECONDS + ${2:-10}))
    case "$QMP_EVENTS" in *"\"event\": \"$name\""*|*"\"event\":\"$name\""*) return 0 ;; esac
    while [ "$SECONDS" -le "$end" ] && IFS= read -r -t "$t" -u "${QMP[0]}" line; do
        QMP_EVENTS+="$line"$'\n'
        case "$line" in *"\"event\": \"$name\""*|*"\"event\":\"$name\""*) return 0 ;; esac
    done
    return 1
}

qmp_close() {
    [ -n "${QMP_PID:-}" ] || return 0
    [ -n "${QMP[1]:-}" ] && eval "exec ${QMP[1]}>&-" 2>/dev/null
    kill "$QMP_PID" 2>/dev/null || true
    wait "$QMP_PID" 2>/dev/null || true
}

# qmp_usb_plug SOCKET ID IMAGE — hot-plug IMAGE (raw) as a removable usb-storage stick
qmp_usb_plug() {
    local sock="$1" id="$2" img="$3" st=0
    qmp_open "$sock" || return 1
    { qmp_cmd "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"$id-node\",\"file\":{\"driver\":\"file\",\"filename\":\"$img\"}}}" >/dev/null &&
        qmp_cmd "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"usb-storage\",\"bus\":\"xhci.0\",\"drive\":\"$id-node\",\"id\":\"$id\",\"removable\":true}}" >/dev/null; } ||
        { echo "qmp: plugging $img failed: $QMP_REPLY" >&2; st=1; }
    qmp_close
    return "$st"
}

# qmp_usb_unplug SOCKET ID — pull the stick out (waits for the guest to let go of it)
qmp_usb_unplug() {
    local sock="$1" id="$2" st=0
    qmp_open "$sock" || return 1
    if qmp_cmd "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$id\"}}" >/dev/null &&
        qmp_wait_event DEVICE_DELETED 10; then
        qmp_cmd "{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"$id-node\"}}" >/dev/null ||
            { echo "qmp: blockdev-del $id-node failed: $QMP_REPLY" >&2; st=1; }
    else
        echo "qmp: unplugging $id failed: ${QMP_REPLY:-no DEVICE_DELETED event}" >&2; st=1
    fi
    qmp_close
    return "$st"
}

# qmp_quit SOCKET — stop the guest at once, as a power cut: no flush of the guest's page cache
qmp_quit() {
    qmp_open "$1" || return 1
    qmp_cmd '{"execute":"quit"}' >/dev/null || true
    qmp_close
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    [ $# -ge 1 ] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
    qmp_open "$1" || exit 1
    shift
    rc=0
    for c in "$@"; do qmp_cmd "$c" || { rc=1; break; }; done
    qmp_close
    exit "$rc"
fi
