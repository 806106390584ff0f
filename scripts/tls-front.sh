#!/usr/bin/env bash
# A TLS front for loopback tests: makes a self-signed P-256 certificate for 127.0.0.1/localhost
# and relays TLS on <listen-port> to plain TCP on 127.0.0.1:<backend-port>.
# Usage: scripts/tls-front.sh <dir> <listen-port> <backend-port>   (runs socat in the foreground)
#        scripts/tls-front.sh --cert-only <dir>                      (writes <dir>/cert.pem, <dir>/key.pem)
# With listen-port 0 a free port is chosen; the line "tls-front: listening on <port>" says which.
# Needs the Debian packages openssl and socat (scripts/install-deps.sh test).
set -euo pipefail

cert_only=0
if [ "${1:-}" = "--cert-only" ]; then cert_only=1; shift; fi
dir=${1:?usage: tls-front.sh <dir> <listen-port> <backend-port> | --cert-only <dir>}

command -v openssl >/dev/null || { echo "tls-front: openssl is missing; apt-get install openssl" >&2; exit 1; }
mkdir -p "$dir"
if [ ! -s "$dir/cert.pem" ] || [ ! -s "$dir/key.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
fi
[ "$cert_only" = 1 ] && exit 0

listen_port=${2:?listen port}
backend_port=${3:?backend port}
command -v socat >/dev/null || { echo "tls-front: socat is missing; apt-get install socat" >&2; exit 1; }
if [ "$listen_port" = 0 ]; then
  listen_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
echo "tls-front: listening on $listen_port"
exec socat "OPENSSL-LISTEN:$listen_port,bind=127.0.0.1,reuseaddr,fork,cert=$dir/cert.pem,key=$dir/key.pem,verify=0" \
  "TCP:127.0.0.1:$backend_port"
