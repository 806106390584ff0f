#!/usr/bin/env bash
# The export onto USB sticks, for real: systemd as PID 1, udevd, the repository's udev rule
# (udev/71-swiftwing-export.rules) and unit (systemd/swiftwing-export@.service) running the real
# `swiftwing export --device`, the real daemon (vivid camera, PNG panel) told over its control
# socket, sticks hot-plugged through QMP. The library: 2,000 known books (ExportBench seed, made on
# the host). Five sticks, one after another:
#   good  (vfat)             both CSVs; on the host mtools reads them back and python3's csv module
#                            checks every book; the daemon logs "exported 2000 books — safe to remove"
#   ro    (read-only image)  "read-only (write-protected)", no final-name file
#   full  (vfat, filled)     "is full", no final-name file
#   slow  (writes throttled by QEMU to 2 KiB/s) while its first file is being written: a shutter
#         press is saved (the scan chain keeps working), a second stick "two" is refused ("another
#         USB stick is being exported to"); then slow is pulled out: "removed during the export",
#         no final-name file on its image.
# Three roles in one file (as usb-stick.sh): host, hook (QMP plug/unplug, reading images back) and
# guest. Needs `swift build --product swiftwing && swift build --product ExportBench` on the host.
# Run alone: Tests/VMRig/usb-export.sh
VM_TEST_TIMEOUT=1200
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export_columns='ISBN-13,ISBN-10,Title,Authors,Format,Publisher,Published Date,Pages,Confidence,Needs Review,Added Date,Cover URL,Scan ID'

if [ -n "${SWIFTWING_VM_QMP:-}" ] && [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- hook: runs on the host next to QEMU ----
    set -uo pipefail
    . "$repo/scripts/vm/qmp.sh"
    dir="$SWIFTWING_EXPORT_DIR"
    out="$SWIFTWING_VM_OUT"
    trap 'rm -rf "$dir"' EXIT
    fail=0
    host_ok() { echo "ok - host: $*"; }
    host_not_ok() { echo "not ok - host: $*"; fail=1; }
    wait_file() {
        local i
        for ((i = 0; i < $2 * 10; i++)); do
            [ -e "$out/$1" ] && return 0
            kill -0 "$SWIFTWING_VM_QEMU_PID" 2>/dev/null || return 1
            sleep 0.1
        done
        return 1
    }
    # plug NAME [ro|slow]: the image $dir/NAME.img as a usb-storage stick with the QMP id NAME
    plug() {
        local id="$1" img="$dir/$1.img" node st=0
        node="{\"driver\":\"raw\",\"node-name\":\"$id-node\",\"file\":{\"driver\":\"file\",\"filename\":\"$img\"}}"
        qmp_open "$SWIFTWING_VM_QMP" || return 1
        case "${2:-}" in
            ro) node="{\"driver\":\"raw\",\"node-name\":\"$id-node\",\"read-only\":true,\"file\":{\"driver\":\"file\",\"filename\":\"$img\",\"read-only\":true}}" ;;
            slow)
                qmp_cmd "{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":\"throttle-group\",\"id\":\"$id-throttle\",\"limits\":{\"bps-write\":2048}}}" >/dev/null || st=1
                node="{\"driver\":\"throttle\",\"node-name\":\"$id-node\",\"throttle-group\":\"$id-throttle\",\"file\":{\"driver\":\"raw\",\"file\":{\"driver\":\"file\",\"filename\":\"$img\"}}}" ;;
        esac
        { [ "$st" = 0 ] && qmp_cmd "{\"execute\":\"blockdev-add\",\"arguments\":$node}" >/dev/null &&
            qmp_cmd "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"usb-storage\",\"bus\":\"xhci.0\",\"drive\":\"$id-node\",\"id\":\"$id\",\"removable\":true}}" >/dev/null; } ||
            { echo "qmp: plugging $img failed: $QMP_REPLY" >&2; st=1; }
        qmp_close
        if [ "$st" = 0 ]; then host_ok "plugged $id${2:+ ($2)}"; else host_not_ok "plug $id through QMP"; fi
        return "$st"
    }
    # unplug NAME: device_del, then blockdev-del once the node is free (retried: usb-storage's inner
    # scsi-disk sends a DEVICE_DELETED of its own, so waiting for the first such event is not enough)
    unplug() {
        local id="$1" i st=1
        if qmp_open "$SWIFTWING_VM_QMP" && qmp_cmd "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$id\"}}" >/dev/null; then
            for ((i = 0; i < 80; i++)); do
                qmp_cmd "{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"$id-node\"}}" >/dev/null && { st=0; break; }
                sleep 0.25
            done
        fi
        qmp_close
        if [ "$st" = 0 ]; then host_ok "unplugged $id"; else host_not_ok "unplug $id through QMP: $QMP_REPLY"; fi
        touch "$out/unplugged-$id"
    }
    # export_files NAME: the SwiftWing_Library_*.csv files (final names) on the stick's image
    export_files() { mdir -b -i "$dir/$1.img@@1M" ::/ 2>/dev/null | sed 's|^::/||' | grep '^SwiftWing_Library_.*\.csv$' || true; }
    no_final_file() {
        local files; files="$(export_files "$1")"
        if [ -z "$files" ]; then host_ok "$1: no SwiftWing_Library_*.csv under its final name on the image"
        else host_not_ok "$1: final-name files on the image: $files"; fi
        host_ok "$1: files on the image: $(mdir -b -i "$dir/$1.img@@1M" ::/ 2>/dev/null | sed 's|^::/||' | tr '\n' ' ')"
    }

    # good: both files, every book checked by python3's csv module against the seeded books
    wait_file plug-good 400 || { host_not_ok "the guest never asked for the first stick"; exit 1; }
    plug good || exit 1
    wait_file done-good 400 || { host_not_ok "the guest never finished with the good stick"; exit 1; }
    unplug good
    files="$(export_files good)"
    sw="$(grep -v _goodreads <<<"$files" | head -1)" gr="$(grep _goodreads <<<"$files" | head -1)"
    if [ -n "$sw" ] && [ -n "$gr" ]; then host_ok "good: both files on the stick: $(tr '\n' ' ' <<<"$files")"
    else host_not_ok "good: expected both CSV files, found: $files"; fi
    mcopy -n -i "$dir/good.img@@1M" "::/$sw" "$dir/swiftwing.csv" 2>/dev/null
    mcopy -n -i "$dir/good.img@@1M" "::/$gr" "$dir/goodreads.csv" 2>/dev/null
    if python3 - "$dir/expected.json" "$dir/swiftwing.csv" "$dir/goodreads.csv" "$export_columns" <<'EOF'; then
import csv, json, sys
expected, sw_path, gr_path, columns = sys.argv[1:5]
books = json.load(open(expected, encoding="utf-8"))
def neutral(v):
    return "'" + v if v[:1] in ("=", "+", "-", "@", "\t", "\r") else v
def opt(b, k):
    return "" if b.get(k) is None else str(b[k])
problems = []
raw = open(sw_path, "rb").read()
if not raw.endswith(b"\r\n") or not raw.startswith(columns.encode() + b"\r\n"):
    problems.append("swiftwing: header or last line end is not CRLF")
rows = list(csv.reader(open(sw_path, newline="", encoding="utf-8"), strict=True))
if rows[0] != columns.split(","):
    problems.append(f"swiftwing header {rows[0]}")
if len(rows) - 1 != len(books):
    problems.append(f"swiftwing: {len(rows) - 1} rows for {len(books)} books")
for b, r in zip(books, rows[1:]):
    conf = b.get("confidence")
    review = (conf is not None and conf < 0.8) or b.get("enrichmentStatus") == "review_needed"
    want = [opt(b, "isbn13"), opt(b, "isbn10"), neutral(b["title"]), neutral("; ".join(b["authors"])),
            opt(b, "format"), neutral(opt(b, "publisher")), opt(b, "publishedDate"), opt(b, "pageCount"),
            r[8], "true" if review else "false", b["addedAt"], opt(b, "coverUrl"), opt(b, "scanId")]
    if r != want or (conf is None) != (r[8] == "") or (conf is not None and float(r[8]) != conf):
        problems.append(f"swiftwing row for book {b['id']}: {r} != {want}")
grows = list(csv.reader(open(gr_path, newline="", encoding="utf-8"), strict=True))
header = grows[0]
if ",".join(header) != ("Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Publisher,"
        "Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,"
        "Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Owned Copies"):
    problems.append(f"goodreads header {header}")
if len(grows) - 1 != len(books):
    problems.append(f"goodreads: {len(grows) - 1} rows for {len(books)} books")
col = {name: i for i, name in enumerate(header)}
for b, r in zip(books, grows[1:]):
    got = (r[col["Title"]], r[col["Author"]], r[col["ISBN13"]], r[col["Date Added"]])
    want = (neutral(b["title"]), neutral(b["authors"][0] if b["authors"] else ""),
            '="%s"' % opt(b, "isbn13"), b["addedAt"][:10].replace("-", "/"))
    if got != want:
        problems.append(f"goodreads row for book {b['id']}: {got} != {want}")
for p in problems[:10]:
    print("#", p)
print(f"# python3 csv: {len(rows) - 1} + {len(grows) - 1} rows checked against {len(books)} seeded books, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
EOF
        host_ok "good: python3's csv module reads every one of the seeded books back from both files"
    else
        host_not_ok "good: the CSV files do not match the seeded books"
    fi
    dd if="$dir/good.img" of="$dir/good.part" bs=1M skip=1 status=none
    if fsck.vfat -n "$dir/good.part" >/dev/null 2>&1; then host_ok "good: the file system is clean (fsck.vfat -n)"
    else host_not_ok "good: fsck.vfat -n reports problems"; fi

    for stick in ro full; do
        wait_file "plug-$stick" 300 || { host_not_ok "the guest never asked for the $stick stick"; exit 1; }
        if [ "$stick" = ro ]; then plug ro ro || exit 1; else plug full || exit 1; fi
        wait_file "done-$stick" 300 || { host_not_ok "the guest never finished with the $stick stick"; exit 1; }
        unplug "$stick"
        no_final_file "$stick"
    done

    if [ "${SWIFTWING_USB_EXPORT_SLOW:-1}" != 1 ]; then
        wait_file finished 300
        exit "$fail"
    fi
    wait_file plug-slow 300 || { host_not_ok "the guest never asked for the slow stick"; exit 1; }
    plug slow slow || exit 1
    # a throttled stick is slow from the start: its export may need minutes to reach its first write
    wait_file plug-two 900 || { host_not_ok "the guest never asked for the second stick"; exit 1; }
    plug two || exit 1
    wait_file pull-slow 600 || { host_not_ok "the guest never asked to pull the slow stick"; exit 1; }
    unplug slow
    wait_file done-two 300 || { host_not_ok "the guest never finished with the second stick"; exit 1; }
    unplug two
    no_final_file slow
    no_final_file two
    wait_file finished 300
    exit "$fail"
fi

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- host: the library and five 32 MiB sticks (MBR, one vfat partition at 1 MiB) ----
    set -euo pipefail
    export PATH="$PATH:/usr/sbin:/sbin"
    for t in mkfs.vfat mcopy mdir sfdisk socat python3 fsck.vfat; do
        command -v "$t" >/dev/null || { echo "skipped: no $t on the host (scripts/install-deps.sh vm)"; exit 77; }
    done
    for b in swiftwing ExportBench; do
        [ -x "$repo/.build/debug/$b" ] || { echo "not ok - .build/debug/$b is missing: swift build --product $b"; exit 1; }
    done
    dir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-export.XXXXXX")"
    chmod 0755 "$dir"
    "$repo/.build/debug/ExportBench" seed "$dir/state" 2000 "$dir/expected.json" >/dev/null
    for stick in good ro full slow two; do
        img="$dir/$stick.img"
        truncate -s 32M "$img"
        echo 'start=2048, type=c' | sfdisk -q "$img"
        mkfs.vfat -n "SW$(tr '[:lower:]' '[:upper:]' <<<"$stick")" --offset 2048 "$img" $((31 * 1024)) >/dev/null
    done
    # full: a file takes all but 256 KiB of the space; the export needs about 750 KiB
    free="$(mdir -i "$dir/full.img@@1M" ::/ | sed -n 's/^ *\([0-9 ]*[0-9]\) bytes free.*/\1/p' | tr -d ' ')"
    head -c $((free - 262144)) /dev/zero >"$dir/filler.bin"
    mcopy -i "$dir/full.img@@1M" "$dir/filler.bin" ::/FILLER.BIN
    rm "$dir/filler.bin"
    export SWIFTWING_EXPORT_DIR="$dir"
    VM_TEST_ARGS=(--systemd --usb --udev-rule "$repo/udev/71-swiftwing-export.rules"
        --unit "$repo/systemd/swiftwing-export@.service" --hook "$here/usb-export.sh")
fi
. "$here/../../scripts/vm/testlib.sh"

# ---- guest ----
out="$SWIFTWING_VM_OUT"
bin="$PWD/.build/debug/swiftwing"
t0="$(date +%s.%N)"
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
vm_expect "PID 1 is systemd" "$(cat /proc/1/comm)" systemd

# The appliance's user, its state directory with the seeded library, the binary where the unit runs it.
getent passwd swiftwing >/dev/null || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin swiftwing
mkdir -p /var/lib/swiftwing /usr/local/bin
cp -a "$SWIFTWING_EXPORT_DIR/state/." /var/lib/swiftwing/
chown -R swiftwing:swiftwing /var/lib/swiftwing
chmod 0750 /var/lib/swiftwing
# A copy, not a link: the export unit's PrivateTmp= and ProtectHome= hide a checkout under /tmp or /home.
install -m 0755 "$bin" /usr/local/bin/swiftwing
cp /etc/systemd/system/swiftwing-export@.service /tmp/swiftwing-export@sda1.service
vm_check "systemd-analyze verify: swiftwing-export@sda1.service" systemd-analyze verify /tmp/swiftwing-export@sda1.service
vm_note "systemd-analyze security: $(systemd-analyze security --no-pager swiftwing-export@sda1.service 2>/dev/null | tail -1)"

# The daemon, as the appliance's user, told of each export over /run/swiftwing/control.sock.
systemd-run --quiet --unit=swiftwing-under-test -p User=swiftwing -p Group=swiftwing -p SupplementaryGroups=video \
    -p RuntimeDirectory=swiftwing --setenv=SWIFTWING_CAMERA_WIDTH=640 --setenv=SWIFTWING_CAMERA_HEIGHT=480 \
    /usr/local/bin/swiftwing run --camera /dev/video0 --panel png:/run/swiftwing/panel.png
running() { "$bin" status --json 2>/dev/null | grep -q '"running" : true'; }
vm_check "the daemon answers on /run/swiftwing/control.sock" vm_wait_for 120 running
vm_note "daemon up after $(elapsed) s"
daemon_log() { journalctl -u swiftwing-under-test -o cat --no-pager; }

# export_unit LABEL: waits for the stick labelled LABEL, then for its export unit to end; sets $unit, $dev
prev_ids=" "
export_unit() {
    dev=""
    vm_wait_for 90 test -e "/dev/disk/by-label/$1" && dev="$(basename "$(readlink -f "/dev/disk/by-label/$1")")"
    unit="swiftwing-export@$dev.service"
    [ -n "$dev" ] || { vm_not_ok "the stick $1 appeared"; return 1; }
    ended() {
        local id state
        id="$(systemctl show -P InvocationID "$unit")" state="$(systemctl show -P ActiveState "$unit")"
        [ -n "$id" ] && [[ "$prev_ids" != *" $id "* ]] && { [ "$state" = inactive ] || [ "$state" = failed ]; }
    }
    vm_check "$1 ($dev): udev started $unit and it ended" vm_wait_for 300 ended
    prev_ids+="$(systemctl show -P InvocationID "$unit") "
}
unit_log() { journalctl -o cat --no-pager _SYSTEMD_INVOCATION_ID="$(systemctl show -P InvocationID "$unit")"; }
# expect_failure STICK TEXT PANEL: the unit failed with TEXT in its journal; the daemon logged PANEL
expect_failure() {
    vm_expect "$1: the unit's result" "$(systemctl show -P Result "$unit")" exit-code
    vm_check "$1: the journal says why: '$2'" grep -qF "$2" <<<"$(unit_log)"
    vm_check "$1: the daemon shows it: '$3'" vm_wait_for 20 sh -c "journalctl -u swiftwing-under-test -o cat --no-pager | grep -qF \"$3\""
    vm_note "$1: $(unit_log | grep -m1 -F "$2")"
}

# 1. a good stick: both files, "safe to remove"
t1="$(date +%s.%N)"
touch "$out/plug-good"
export_unit SWGOOD
vm_expect "good: the unit's result" "$(systemctl show -P Result "$unit")" success
day="$(date +%F)"
vm_check "good: the journal names both files and says safe to remove" grep -qF \
    "exported 2000 books to $dev: SwiftWing_Library_$day.csv, SwiftWing_Library_${day}_goodreads.csv — safe to remove" <<<"$(unit_log)"
vm_check "good: the daemon got exportFinished (panel 'Exported 2000 books — safe to remove', buzzer export-done)" \
    vm_wait_for 20 sh -c 'journalctl -u swiftwing-under-test -o cat --no-pager | grep -qF "exported 2000 books — safe to remove the USB stick"'
vm_check "good: the stick is not left mounted anywhere" sh -c "! grep -q '^/dev/$dev ' /proc/mounts"
vm_note "good: plug to unit end $(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
cp /run/swiftwing/panel.png "$out/panel-good.png" 2>/dev/null
touch "$out/done-good"
vm_wait_for 60 test -e "$out/unplugged-good"

# 2. a write-protected stick; 3. a full one
touch "$out/plug-ro"
export_unit SWRO
expect_failure ro "is read-only (write-protected)" "The stick is write-protected"
touch "$out/done-ro"
vm_wait_for 60 test -e "$out/unplugged-ro"
touch "$out/plug-full"
export_unit SWFULL
expect_failure full "is full: the export needs" "The stick is full"
cp /run/swiftwing/panel.png "$out/panel-full.png" 2>/dev/null
touch "$out/done-full"
vm_wait_for 60 test -e "$out/unplugged-full"

if [ "${SWIFTWING_USB_EXPORT_SLOW:-1}" != 1 ]; then
    # Part 4 (4-15 minutes under TCG) is in the default run; SWIFTWING_USB_EXPORT_SLOW=0 leaves it out while working.
    vm_note "the slow stick, the second stick and the mid-write pull were not run (SWIFTWING_USB_EXPORT_SLOW=0 left them out)"
    vm_check "the daemon is still running after all of it" running
    touch "$out/finished"
    vm_finish
fi

# 4. a slow stick (writes throttled by QEMU to 2 KiB/s: its first file alone takes ~160 s). Once
# its writes have begun, a second stick is plugged in and refused, a press is saved, and the slow
# stick is pulled out well before its first file is complete. (The test only watches the disk's
# counters: anything that looked into the stick's file system would queue behind the slow writes.)
touch "$out/plug-slow"
vm_wait_for 90 test -e /dev/disk/by-label/SWSLOW
slow="$(basename "$(readlink -f /dev/disk/by-label/SWSLOW)")"
slow_disk="${slow%%[0-9]*}"
slow_unit="swiftwing-export@$slow.service"
writing() { [ "$(awk '{ print $7 }' "/sys/block/$slow_disk/stat")" -gt 32 ]; }
vm_check "slow ($slow): the export is writing to it" vm_wait_for 600 writing
t_writing="$(date +%s.%N)"
touch "$out/plug-two"
scan="$("$bin" shutter 2>&1)"
vm_check "slow: a shutter press during the export is saved (scan $scan)" grep -Eq '^[0-9a-fA-F-]{36}$' <<<"$scan"
export_unit SWTWO
expect_failure two "another USB stick is being exported to" "Already exporting to another stick"
vm_expect "slow: the first export is still running after the second stick was refused" \
    "$(systemctl show -P ActiveState "$slow_unit")" activating
vm_note "slow: $(awk '{ print $7 / 2 }' "/sys/block/$slow_disk/stat") KiB written when it is pulled, $(awk -v a="$t_writing" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s after the writes began"
touch "$out/pull-slow"
vm_check "slow: the host pulled it out" vm_wait_for 60 test -e "$out/unplugged-slow"
unit="$slow_unit"
slow_ended() { state="$(systemctl show -P ActiveState "$slow_unit")"; [ "$state" = inactive ] || [ "$state" = failed ]; }
vm_check "slow: pulled out mid-write, the export ends" vm_wait_for 240 slow_ended
expect_failure slow "was removed during the export" "The stick was removed too early"
cp /run/swiftwing/panel.png "$out/panel-removed.png" 2>/dev/null
touch "$out/done-two"
vm_check "the daemon is still running after all of it" running
vm_check "the daemon logged no crash or restart" sh -c '! journalctl -u swiftwing-under-test -o cat --no-pager | grep -qiE "fatal|crash|core dump"'
vm_wait_for 60 test -e "$out/unplugged-two"
touch "$out/finished"
vm_finish
