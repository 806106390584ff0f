#!/usr/bin/env bash
# Installs SwiftWing on this machine in one step: the binary, the systemd units, the udev rules,
# the shelf photos and the licences, the recognizer (swiftwing-recognizer beside the binary, its unit
# installed but not enabled: docs/recognizer.md), then (scripts/swiftwing-setup.sh) the `swiftwing` user and
# its groups, a config file from the example when there is none, and the enabled service.
# Idempotent: running it again replaces the files and keeps the config and the library.
#
# Usage: scripts/install.sh [--binary PATH] [--files-only] [--no-start]
# Environment: PREFIX (/usr/local), DESTDIR (a staging root: files only), UNITDIR
# (/etc/systemd/system), UDEVRULESDIR (/etc/udev/rules.d), SYSCONFDIR (/etc).
set -euo pipefail
cd "$(dirname "$0")/.."

binary=.build/release/swiftwing
files_only=0
setup_flags=()
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --files-only) files_only=1; shift ;;
        --no-start) setup_flags+=(--no-start); shift ;;
        *) echo "usage: $0 [--binary PATH] [--files-only] [--no-start]" >&2; exit 2 ;;
    esac
done

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
UNITDIR=${UNITDIR:-/etc/systemd/system}
UDEVRULESDIR=${UDEVRULESDIR:-/etc/udev/rules.d}
SYSCONFDIR=${SYSCONFDIR:-/etc}

[ -x "$binary" ] || { echo "install: $binary is not built: run \`make release\` first (or pass --binary)" >&2; exit 1; }
if [ -z "$DESTDIR" ] && [ "$files_only" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "install: run as root (sudo make install), or set DESTDIR to stage the files" >&2
    exit 1
fi
recognizer="$(dirname "$binary")/swiftwing-recognizer"
web="$(dirname "$binary")/swiftwing-web"

root="$DESTDIR"
install -D -m 0755 "$binary" "$root$PREFIX/bin/swiftwing"
# The units name /usr/local/bin and /usr/local/share; another PREFIX is written into them.
for unit in systemd/*.service systemd/*.timer; do
    sed -e "s|/usr/local/bin/swiftwing|$PREFIX/bin/swiftwing|g" -e "s|/usr/local/share/|$PREFIX/share/|g" "$unit" |
        install -D -m 0644 /dev/stdin "$root$UNITDIR/$(basename "$unit")"
done
for rule in udev/*.rules; do
    sed "s|/usr/local/bin/swiftwing|$PREFIX/bin/swiftwing|g" "$rule" |
        install -D -m 0644 /dev/stdin "$root$UDEVRULESDIR/$(basename "$rule")"
done
install -D -m 0644 config/swiftwing.example.toml "$root$SYSCONFDIR/swiftwing/swiftwing.toml.example"
install -d "$root$PREFIX/share/swiftwing/shelves"
install -m 0644 Fixtures/shelves/*.jpg Fixtures/shelves/LICENSE Fixtures/shelves/README.md \
    "$root$PREFIX/share/swiftwing/shelves/"
install -D -m 0644 LICENSE "$root$PREFIX/share/doc/swiftwing/LICENSE"
install -D -m 0644 NOTICE "$root$PREFIX/share/doc/swiftwing/NOTICE"
install -D -m 0644 README.md "$root$PREFIX/share/doc/swiftwing/README.md"
install -D -m 0755 scripts/swiftwing-setup.sh "$root$PREFIX/lib/swiftwing/swiftwing-setup"
# The recognizer service: its binary, its page, an example catalogue (the Library Dataset's, MIT). Its unit is
# installed above and not enabled here: a kiosk that uses a remote backend needs none (docs/recognizer.md).
if [ -x "$recognizer" ]; then
    install -D -m 0755 "$recognizer" "$root$PREFIX/bin/swiftwing-recognizer"
else
    echo "install: $recognizer is not built; the recognizer service is left out (make release builds it)" >&2
fi
# The library in a browser: its unit is installed above and never enabled here; it serves only with
# `[web] enabled = true` (README.md, "The library in a browser").
if [ -x "$web" ]; then
    install -D -m 0755 "$web" "$root$PREFIX/bin/swiftwing-web"
else
    echo "install: $web is not built; the library in a browser is left out (make release builds it)" >&2
fi
install -D -m 0644 docs/recognizer.md "$root$PREFIX/share/doc/swiftwing/recognizer.md"
install -d "$root$PREFIX/share/swiftwing/library-dataset"
install -m 0644 Fixtures/library-dataset/catalogue.csv Fixtures/library-dataset/LICENSE \
    Fixtures/library-dataset/README.md "$root$PREFIX/share/swiftwing/library-dataset/"
# The open catalogue the recognizer matches against when the owner has none (goodbooks-10k, CC BY-SA 4.0), with
# its index built here so the service starts without building it (install -p keeps the CSV's time, which the
# index is stamped with; SWIFTWING_INSTALL_CATALOGUE_INDEX=0 leaves it to the first start).
catalogues="$root$PREFIX/share/swiftwing/catalogues"
install -d "$catalogues"
install -p -m 0644 Catalogues/goodbooks-10k/goodbooks-10k.csv Catalogues/goodbooks-10k/LICENSE \
    Catalogues/goodbooks-10k/README.md "$catalogues/"
if [ -x "$recognizer" ] && [ "${SWIFTWING_INSTALL_CATALOGUE_INDEX:-1}" != 0 ]; then
    "$recognizer" match --catalogue "$catalogues/goodbooks-10k.csv" --json </dev/null
    chmod 0644 "$catalogues/goodbooks-10k.csv.index.sqlite"
fi
# The OCR worker and its virtual environment (pinned wheels from PyPI, the PP-OCR models inside them), where the
# recognizer looks for an installed one: installed means working. The checkout's environment (scripts/ocr-venv.sh
# makes or keeps it) is copied; a venv runs from any folder through its bin/python3. Without the tools that make
# the packages (pip, onnx for the model conversion). SWIFTWING_INSTALL_OCR_VENV=0 leaves it out (the VM rig's
# daemon-only package test).
install -D -m 0644 Sources/swiftwing-recognizer-ocr/ocr_worker.py "$root/usr/lib/swiftwing-recognizer/ocr/ocr_worker.py"
if [ "${SWIFTWING_INSTALL_OCR_VENV:-1}" != 0 ]; then
    scripts/ocr-venv.sh >&2 || { echo "install: the OCR worker's environment cannot be made (scripts/ocr-venv.sh needs PyPI)" >&2; exit 1; }
    venv="$root/usr/lib/swiftwing-recognizer/ocr-venv"
    rm -rf "$venv" && install -d "$(dirname "$venv")" && cp -a .ocr-venv "$venv"
    rm -rf "$venv"/bin/pip* "$venv"/lib/python3*/site-packages/pip "$venv"/lib/python3*/site-packages/pip-* \
        "$venv"/lib/python3*/site-packages/onnx "$venv"/lib/python3*/site-packages/onnx-*
    find "$venv" -name __pycache__ -prune -exec rm -rf {} +
fi

if [ -n "$DESTDIR" ] || [ "$files_only" -eq 1 ]; then
    echo "install: files staged under ${DESTDIR:-/};" \
        "the user, config and service are set up by $PREFIX/lib/swiftwing/swiftwing-setup"
    exit 0
fi
SYSCONFDIR="$SYSCONFDIR" "$PREFIX/lib/swiftwing/swiftwing-setup" "${setup_flags[@]}"
