#!/usr/bin/env bash
# A local base image from Debian's packages, for engines that reach no container registry
# (CI): debootstrap --variant=minbase into a directory, then docker import. Node comes from
# the build context (scripts/docker-context.sh), so the base needs only glibc and libstdc++,
# which minbase has.
#   scripts/base-image.sh [NAME] [SUITE] [MIRROR]   default idlegrid-base:bookworm bookworm http://deb.debian.org/debian
# As root, with debootstrap installed (apt-get install debootstrap) and DOCKER_HOST set if the
# engine is not the default one.
set -euo pipefail
name=${1:-idlegrid-base:bookworm}
suite=${2:-bookworm}
mirror=${3:-http://deb.debian.org/debian}
say () { echo "base-image: $*" >&2; }
if docker image inspect "$name" >/dev/null 2>&1; then say "image $name already there"; exit 0; fi
command -v debootstrap >/dev/null 2>&1 || { say "no debootstrap (apt-get install debootstrap)"; exit 1; }
[ "$(id -u)" = 0 ] || { say "debootstrap needs root"; exit 1; }
root=$(mktemp -d /tmp/idlegrid-base.XXXXXX)
trap 'rm -rf "$root" "$root.log"' EXIT
t0=$(date +%s)
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
# mktemp made the directory 700: it becomes the image's /, which every user must traverse
chmod 755 "$root"
tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$name" >/dev/null
say "imported $name from debootstrap $suite in $(( $(date +%s) - t0 )) s"
