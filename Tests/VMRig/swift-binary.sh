#!/usr/bin/env bash
# A host-built Swift binary (Foundation + Glibc, linked against /opt/swift's runtime) runs in the
# guest chroot, sees the guest's devices and its exit status comes back through run.sh.
# This is the path for `.build/debug/swiftwing doctor --camera /dev/video0` and test binaries.
# Run alone (builds the binary on the host if needed, then boots a guest): Tests/VMRig/swift-binary.sh
VM_TEST_TIMEOUT=120

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # Host side: compile once into the rig's cache (keyed by the source and the compiler).
    set -euo pipefail
    if ! command -v swiftc >/dev/null 2>&1; then
        echo "skipped: no swiftc on this host"
        exit 77
    fi
    src='import Foundation
#if canImport(Glibc)
import Glibc
#endif
let args = CommandLine.arguments
let env = ProcessInfo.processInfo.environment
var u = utsname()
uname(&u)
let release = withUnsafePointer(to: &u.release) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
print("hello from Swift: kernel \(release), guest=\(env["SWIFTWING_VM_GUEST"] ?? "no")")
let video = FileManager.default.fileExists(atPath: "/dev/video0")
print("video0=\(video) cwd=\(FileManager.default.currentDirectoryPath)")
exit(args.count > 1 ? Int32(args[1])! : 0)
'
    cache="${SWIFTWING_VM_CACHE:-${HOME:-/root}/.cache/swiftwing-vm}/swift-hello"
    key="$( { printf '%s' "$src"; swiftc --version 2>&1; } | sha256sum | cut -c1-16)"
    bin="$cache/$key/hello"
    if [ ! -x "$bin" ]; then
        mkdir -p "$cache/$key"
        printf '%s' "$src" >"$cache/$key/hello.swift"
        echo "# building $bin"
        swiftc -o "$bin.tmp" "$cache/$key/hello.swift"
        mv "$bin.tmp" "$bin"
    fi
    export SWIFTWING_VM_HELLO="$bin"   # SWIFTWING_* variables are passed into the guest
fi
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

vm_note "binary: $SWIFTWING_VM_HELLO"
out="$("$SWIFTWING_VM_HELLO" 2>&1)"; rc=$?
printf '%s\n' "$out" | sed 's/^/#   /'
vm_expect "exit status 0" "$rc" 0
vm_check "runs on the guest kernel ($(uname -r))" grep -q "kernel $(uname -r), guest=1" <<<"$out"
vm_check "sees /dev/video0 and the host's cwd ($PWD)" grep -qx "video0=true cwd=$PWD" <<<"$out"
"$SWIFTWING_VM_HELLO" 3 >/dev/null 2>&1; rc=$?
vm_expect "exit status 3 comes back" "$rc" 3
vm_check "links only libraries the chroot has" sh -c "! ldd '$SWIFTWING_VM_HELLO' | grep -q 'not found'"

vm_finish
