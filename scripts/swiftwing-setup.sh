#!/bin/sh
# The system part of an install, shared by scripts/install.sh and the .deb's postinst (installed
# as $PREFIX/lib/swiftwing/swiftwing-setup): the groups and the `swiftwing` system user, a config
# file from the example when there is none (0640 root:swiftwing), udev and systemd reloaded, the
# service enabled and (re)started. Idempotent; POSIX sh so the maintainer scripts can run it.
#
# Usage: swiftwing-setup [--no-start]
set -eu

start=1
[ "${1:-}" = "--no-start" ] && start=0
sysconfdir=${SYSCONFDIR:-/etc}

# video: cameras and framebuffers (Debian's own); input: key devices (Debian's own); gpio: the
# GPIO chips (Raspberry Pi OS has it; on Debian the udev rule gives the chips to it).
for group in video input gpio; do
    getent group "$group" >/dev/null || groupadd --system "$group"
done
getent group swiftwing >/dev/null || groupadd --system swiftwing
if ! getent passwd swiftwing >/dev/null; then
    useradd --system --gid swiftwing --groups video,input,gpio --home-dir /var/lib/swiftwing --no-create-home \
        --shell /usr/sbin/nologin --comment "SwiftWing kiosk daemon" swiftwing
else
    usermod --append --groups video,input,gpio swiftwing
fi

config="$sysconfdir/swiftwing/swiftwing.toml"
if [ ! -e "$config" ]; then
    install -d -m 0755 "$sysconfdir/swiftwing"
    install -m 0640 -o root -g swiftwing "$sysconfdir/swiftwing/swiftwing.toml.example" "$config"
    echo "swiftwing-setup: wrote $config from the example (every key at its default)"
fi

if command -v udevadm >/dev/null && [ -d /run/udev ]; then
    udevadm control --reload || true
    udevadm trigger --subsystem-match=video4linux --subsystem-match=gpio --subsystem-match=input || true
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable swiftwing.service
    if [ "$start" -eq 1 ]; then
        systemctl restart swiftwing.service || {
            echo "swiftwing-setup: the service did not start: journalctl -u swiftwing -b, then swiftwing doctor" >&2
            exit 1
        }
    fi
else
    # No running systemd (a chroot, an image being built): enabled for the next boot.
    systemctl enable swiftwing.service
fi
