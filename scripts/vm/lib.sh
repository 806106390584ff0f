# shellcheck shell=bash
# Shared helpers for the SwiftWing VM rig (sourced, not executed).

# shellcheck disable=SC2034 # used by the scripts that source this file
VM_CACHE="${SWIFTWING_VM_CACHE:-${HOME:-/root}/.cache/swiftwing-vm}"

vm_log() { printf '[vm] %s\n' "$*" >&2; }
vm_die() { printf '[vm] error: %s\n' "$*" >&2; exit "${2:-1}"; }

# Run a command as root: directly when we are root, else through sudo -n.
vm_as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
    else return 1
    fi
}

# vm_need_packages pkg:command ... — install the Debian packages whose command is missing.
vm_need_packages() {
    local missing=() spec pkg cmd
    for spec in "$@"; do
        pkg="${spec%%:*}"; cmd="${spec#*:}"
        if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 && [ ! -x "$cmd" ]; then
            missing+=("$pkg")
        fi
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    vm_log "installing host packages: ${missing[*]}"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}")
    if ! vm_as_root "${apt[@]}" >&2; then
        vm_log "install failed; running apt-get update once and retrying"
        vm_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || return 1
        vm_as_root "${apt[@]}" >&2 || return 1
    fi
}

# Print the 32-hex sha256 prefix of the given files' contents.
vm_hash_files() { cat "$@" | sha256sum | cut -c1-16; }

# vm_now: seconds since the epoch with fractions; vm_since T0: elapsed seconds, one decimal.
vm_now() { date +%s.%N; }
vm_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
