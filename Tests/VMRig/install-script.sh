#!/usr/bin/env bash
# `scripts/install.sh` (what `make install` runs) as root on systemd as PID 1, twice: the first run
# creates the user and its groups, writes the config from the example and starts the service;
# the second replaces the files and keeps an edited config, and the service runs on.
# Needs `swift build --product swiftwing` on the host (installed from .build/debug/swiftwing).
# Run alone: Tests/VMRig/install-script.sh
VM_TEST_TIMEOUT=300
VM_TEST_ARGS=(--systemd)
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

# ---- guest ----
export PATH="$PATH:/usr/sbin:/sbin"
bin=.build/debug/swiftwing
vm_require_built "$bin" 'swift build --product swiftwing'
# The daemon's install: the recognizer's 375 MB Python environment and its catalogue index (minutes under
# emulation) are left out here; the host's tests cover them.
export SWIFTWING_INSTALL_OCR_VENV=0 SWIFTWING_INSTALL_CATALOGUE_INDEX=0
vm_check "first install" scripts/install.sh --binary "$bin"
vm_check "the user exists" getent passwd swiftwing
vm_expect "the config: mode, owner" "$(stat -c '%a %U:%G' /etc/swiftwing/swiftwing.toml)" "640 root:swiftwing"
vm_expect "enabled" "$(systemctl is-enabled swiftwing.service)" enabled
vm_check "active" vm_wait_for 60 systemctl is-active --quiet swiftwing.service
vm_check "the shelf photos are installed" test -f /usr/local/share/swiftwing/shelves/one_shelf.jpg
vm_check "LICENSE and NOTICE are installed" test -f /usr/local/share/doc/swiftwing/NOTICE

printf '# kept across installs\n' >>/etc/swiftwing/swiftwing.toml
edited="$(sha256sum </etc/swiftwing/swiftwing.toml)"
vm_check "second install (idempotent)" scripts/install.sh --binary "$bin"
vm_expect "the edited config is kept" "$(sha256sum </etc/swiftwing/swiftwing.toml)" "$edited"
vm_expect "one swiftwing user" "$(getent passwd | grep -c '^swiftwing:')" 1
vm_check "active again" vm_wait_for 60 systemctl is-active --quiet swiftwing.service
answers() { swiftwing status 2>/dev/null | grep -q "^daemon:  running"; }
vm_check "the daemon answers on its socket" vm_wait_for 60 answers
vm_finish
