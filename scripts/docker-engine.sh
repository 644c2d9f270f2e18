#!/usr/bin/env bash
# A private Docker engine for idlegrid's Docker runner tests, CI and the demo: its own socket,
# data root and exec root under one short temp dir, no bridge network, no iptables changes,
# and a busybox image imported from Debian's busybox-static (no registry is needed).
#
#   scripts/docker-engine.sh install        apt-get docker.io and busybox-static when absent
#   eval "$(scripts/docker-engine.sh start)"  start dockerd (as root); prints `export DOCKER_HOST=…`
#   scripts/docker-engine.sh image [NAME]   import busybox as NAME (default idlegrid-busybox:ci)
#   scripts/docker-engine.sh stop [DIR]     stop the engine started in DIR (default: from DOCKER_HOST)
#
# Only `start` writes to stdout (the export line); everything else is said on stderr.
set -euo pipefail

DEFAULT_IMAGE=idlegrid-busybox:ci

say () { echo "docker-engine: $*" >&2; }

install_packages () {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  [ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || missing+=(busybox-static)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then say "needs root to install ${missing[*]}"; return 1; fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # the package lists are refreshed only when the plain install fails
  apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; } ||
    { say "apt-get could not install ${missing[*]}"; return 1; }
}

start_engine () {
  command -v dockerd >/dev/null 2>&1 || { say "no dockerd (run: $0 install)"; return 1; }
  [ "$(id -u)" = 0 ] || { say "dockerd needs root here (for rootless Docker start it yourself and export DOCKER_HOST)"; return 1; }
  # a short path: a unix socket path must stay under ~107 characters
  local dir
  dir=$(mktemp -d /tmp/igdk.XXXX)
  dockerd --host "unix://$dir/docker.sock" --data-root "$dir/data" --exec-root "$dir/exec" \
    --pidfile "$dir/docker.pid" --bridge none --iptables=false --ip6tables=false \
    >"$dir/dockerd.log" 2>&1 </dev/null &
  local pid=$!
  local i
  for i in $(seq 1 150); do
    if DOCKER_HOST="unix://$dir/docker.sock" docker version >/dev/null 2>&1; then
      say "engine up at unix://$dir/docker.sock (pid $pid) after ~$((i / 5)) s"
      echo "export DOCKER_HOST=unix://$dir/docker.sock"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.2
  done
  say "dockerd did not come up; the end of its log:"
  tail -n 15 "$dir/dockerd.log" >&2 || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  return 1
}

import_image () {
  local name=${1:-$DEFAULT_IMAGE}
  if docker image inspect "$name" >/dev/null 2>&1; then say "image $name already there"; return 0; fi
  local busybox
  busybox=$(command -v busybox || true)
  [ -n "$busybox" ] || { say "no busybox (run: $0 install)"; return 1; }
  local root
  root=$(mktemp -d /tmp/igbb.XXXX)
  mkdir -p "$root/bin" "$root/tmp" "$root/etc"
  cp "$busybox" "$root/bin/busybox"
  local applet
  for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  tar -C "$root" -c . | docker import -c 'ENV PATH=/bin' - "$name" >/dev/null
  rm -rf "$root"
  say "imported busybox as $name"
}

stop_engine () {
  local dir=${1:-}
  if [ -z "$dir" ]; then
    case "${DOCKER_HOST:-}" in
      unix:///tmp/igdk.*/docker.sock) dir=${DOCKER_HOST#unix://}; dir=${dir%/docker.sock} ;;
      *) say "no engine dir given and DOCKER_HOST is not one of ours"; return 1 ;;
    esac
  fi
  case "$dir" in /tmp/igdk.*) ;; *) say "refusing to stop an engine outside /tmp/igdk.*: $dir"; return 1 ;; esac
  if [ -f "$dir/docker.pid" ]; then
    local pid
    pid=$(cat "$dir/docker.pid")
    # containers first (their shims belong to this engine), then the daemon itself
    DOCKER_HOST="unix://$dir/docker.sock" docker ps -aq 2>/dev/null | xargs -r env DOCKER_HOST="unix://$dir/docker.sock" docker rm -f >/dev/null 2>&1 || true
    kill "$pid" 2>/dev/null || true
    local i
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  # the data root may hold overlay mounts of this engine only
  local m
  for m in $(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$dir"
  say "engine in $dir stopped"
}

case "${1:-}" in
  install) install_packages ;;
  start) start_engine ;;
  image) import_image "${2:-}" ;;
  stop) stop_engine "${2:-}" ;;
  *) echo "usage: $0 install | start | image [NAME] | stop [DIR]" >&2; exit 2 ;;
esac
