#!/usr/bin/env bash
# The power-cut harness, demonstrated with a shell writer (the appliance's own power-cut test,
# power-cut-daemon.sh, builds on it): an ext4 image on a virtio disk (run.sh --disk) is the state
# directory; boot 1 writes 64 KiB files of random data (made on the host beforehand), fsyncs
# each (dd conv=fsync, then the directory) and only then prints "fsynced N"; the host cuts the
# power (QMP quit, run.sh --cut-on/--cut-after) at a random moment 0-1.5 s after the 10th;
# boot 2 mounts (journal replay), checks that every acknowledged file is there with its exact
# bytes, unmounts and runs e2fsck -fn: clean. Unsynced files written alongside are reported, not
# checked: the cut may lose them.
# Run alone (two boots): Tests/VMRig/power-cut.sh
VM_TEST_TIMEOUT=150
here="$(cd "$(dirname "$0")" && pwd)"
sd="$here/../../scripts/vm/state-disk.sh"

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- host: two boots ----
    set -uo pipefail
    run="$here/../../scripts/vm/run.sh"
    export PATH="$PATH:/usr/sbin:/sbin"
    command -v mkfs.ext4 >/dev/null || { echo "skipped: no mkfs.ext4 on the host (e2fsprogs)"; exit 77; }
    dir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-powercut.XXXXXX")"
    trap 'rm -rf "$dir"' EXIT
    "$sd" create "$dir/state.img" 64M
    # the files' contents, made here (forks are cheap on the host, dear under TCG)
    mkdir "$dir/data"
    for ((i = 1; i <= 200; i++)); do head -c 65536 /dev/urandom >"$dir/data/$i"; done
    (cd "$dir/data" && sha256sum -- *) >"$dir/sums"
    export SWIFTWING_POWERCUT_DATA="$dir/data" SWIFTWING_POWERCUT_SUMS="$dir/sums"
    delay="$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", r / 32767 * 1.5 }')"  # 0-1.5 s after the 10th
    echo "# boot 1: writer; power cut ${delay} s after the 10th fsynced file"
    st=0
    # shellcheck disable=SC2209 # an environment assignment for the command, not a string
    SWIFTWING_POWERCUT_PHASE=write "$run" --timeout "$VM_TEST_TIMEOUT" --disk "$dir/state.img" \
        --cut-on '^fsynced 10$' --cut-after "$delay" -- "$here/power-cut.sh" >"$dir/acked" 2>"$dir/boot1.err" || st=$?
    grep '^\[vm\]' "$dir/boot1.err" | sed 's/^/# /'
    if [ "$st" = 77 ]; then cat "$dir/boot1.err"; exit 77; fi
    if [ "$st" != 0 ]; then
        echo "not ok - boot 1 ended with status $st instead of a power cut"
        sed 's/^/#   /' "$dir/acked" "$dir/boot1.err" | tail -n 40
        exit 1
    fi
    echo "ok - boot 1: power cut while writing, after $(grep -c '^fsynced ' "$dir/acked") acknowledged files"
    echo "# boot 2: check"
    SWIFTWING_POWERCUT_PHASE=check SWIFTWING_POWERCUT_ACKED="$dir/acked" \
        "$run" --timeout "$VM_TEST_TIMEOUT" --disk "$dir/state.img" -- "$here/power-cut.sh"
    exit $?
fi

. "$here/../../scripts/vm/testlib.sh"
state=/var/lib/swiftwing-vm-state

if [ "${SWIFTWING_POWERCUT_PHASE:-}" = write ]; then
    # ---- guest, boot 1: the writer (never ends on its own; the host cuts the power) ----
    "$sd" mount /dev/vda "$state" || exit 1
    mkdir -p "$state/synced" "$state/unsynced"
    for ((i = 1; i <= 200; i++)); do
        dd if="$SWIFTWING_POWERCUT_DATA/$i" of="$state/synced/$i" bs=65536 conv=fsync status=none || exit 1
        sync "$state/synced"            # the directory entry too
        echo "fsynced $i"
        # alongside, the same data without any fsync
        dd if="$SWIFTWING_POWERCUT_DATA/$i" of="$state/unsynced/$i" bs=65536 status=none || exit 1
        echo "unsynced $i"
    done
    echo "the writer ran out of data before the power cut" >&2
    exit 1
fi

# ---- guest, boot 2: the check ----
acked="${SWIFTWING_POWERCUT_ACKED:?}"
n_acked="$(grep -c '^fsynced ' "$acked")"
modprobe ext4
mkdir -p "$state"
before="$(dmesg | wc -l)"
vm_check "mount /dev/vda after the cut" mount -t ext4 /dev/vda "$state"
replay="$(dmesg | tail -n +"$((before + 1))" | grep -E 'EXT4-fs|recovery' | tr '\n' ' ')"
vm_note "kernel: $replay"
vm_check "the journal was replayed at mount" grep -q 'recovery complete' <<<"$replay"
# one sha256sum over everything on the disk, compared with the host's sums in awk
(cd "$state" && sha256sum -- synced/* unsynced/* 2>/dev/null) >/tmp/got
verdict="$(awk -v acked="$acked" '
    FILENAME == ARGV[1] { want[$2] = $1; next }            # host: SUM N
    FILENAME == ARGV[2] { split($2, p, "/"); got[p[1], p[2]] = $1; seen[p[1], p[2]] = 1; next }
    $1 == "fsynced" { n++; if (got["synced", $2] != want[$2]) { bad++; print "# synced/" $2 ": " (seen["synced", $2] ? "damaged" : "missing") } }
    $1 == "unsynced" { u++; k = "unsynced" SUBSEP $2
        if (!seen[k]) um++; else if (got[k] == want[$2]) ui++; else if (got[k] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") ue++; else up++ }
    END { printf "bad %d\n# unsynced files: %d intact, %d empty, %d missing, %d partial (of %d; not checked)\n", bad, ui, ue, um, up, u }
' "$SWIFTWING_POWERCUT_SUMS" /tmp/got "$acked")"
printf '%s\n' "$verdict" | grep '^#'
vm_expect "acknowledged (fsynced) files missing or damaged, of $n_acked" "$(sed -n 's/^bad //p' <<<"$verdict")" 0
vm_note "synced/ holds $(( $(grep -c '^[0-9a-f]* *synced/' /tmp/got) - n_acked )) file(s) beyond the acknowledged ones (in flight at the cut)"
vm_check "unmount" umount "$state"
fsck="$(e2fsck -fn /dev/vda 2>&1)"; st=$?
printf '%s\n' "$fsck" | tail -n 2 | sed 's/^/# e2fsck: /'
vm_expect "e2fsck -fn after the replay finds nothing" "$st" 0
vm_finish
