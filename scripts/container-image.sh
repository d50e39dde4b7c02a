#!/usr/bin/env bash
# Builds the sandbox image of the `container` environment provider (docs/sandbox.md, "The
# container provider") from this checkout's built binaries, with `podman import` (no
# registry needed), and prints its image id (`sha256:<64 hex>`, the value of
# `environment.settings.image`) on stdout.
#
# The rootfs holds /usr/local/bin/fabric-agent-ctl (the container's process: `serve`), the
# scripted reference adapter at /opt/fabric/adapters/scripted/ (binary, descriptor, launch.sh,
# which sources /opt/fabric/adapters/lib/find-binary.sh: a config in the container discovers `fabric.scripted` through discovery.local_paths
# ["/opt/fabric/adapters/scripted/scripted.fabric-adapter.json"]), /bin/sh, the shared
# libraries `ldd` lists for each binary, /tmp and /sandbox.
#
# Binaries: $FABRIC_AGENT_CTL_BIN and $FABRIC_ADAPTER_SCRIPTED_BIN, else
# ${CARGO_TARGET_DIR:-target}/debug/ (run `cargo build -p fabric-cli -p fabric-adapter-scripted`).
# The image is tagged localhost/fabric-sandbox:<first 16 hex of the inputs' sha256>; when that
# tag exists, its id is printed and nothing is rebuilt (re-runs are cheap). After a build, the
# other localhost/fabric-sandbox:* tags are removed unless a container uses them (`podman rmi`
# without -f refuses those), so rebuilt binaries do not pile up images.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${CARGO_TARGET_DIR:-$PWD/target}
agent_ctl=${FABRIC_AGENT_CTL_BIN:-$target/debug/fabric-agent-ctl}
scripted=${FABRIC_ADAPTER_SCRIPTED_BIN:-$target/debug/fabric-adapter-scripted}
shell=$(command -v sh)
for binary in "$agent_ctl" "$scripted"; do
  if [ ! -x "$binary" ]; then
    echo "container-image.sh: $binary not found; run 'cargo build -p fabric-cli -p fabric-adapter-scripted'" >&2
    exit 2
  fi
done
command -v podman >/dev/null 2>&1 || { echo "container-image.sh: podman is not installed" >&2; exit 2; }

inputs=("$agent_ctl" "$scripted" "$shell" adapters/scripted/launch.sh adapters/lib/find-binary.sh
  adapters/scripted/scripted.fabric-adapter.json "$0")
tag=localhost/fabric-sandbox:$(cat "${inputs[@]}" | sha256sum | cut -c1-16)
if id=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null); then
  echo "sha256:${id#sha256:}"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"/{bin,tmp,sandbox,usr/local/bin,opt/fabric/adapters/scripted,opt/fabric/adapters/lib}
chmod 1777 "$root/tmp"
install -m 0755 "$agent_ctl" "$root/usr/local/bin/fabric-agent-ctl"
install -m 0755 "$scripted" "$root/opt/fabric/adapters/scripted/fabric-adapter-scripted"
install -m 0644 adapters/scripted/launch.sh adapters/scripted/scripted.fabric-adapter.json \
  "$root/opt/fabric/adapters/scripted/"
install -m 0644 adapters/lib/find-binary.sh "$root/opt/fabric/adapters/lib/"
install -m 0755 "$shell" "$root/bin/sh"
# Shared libraries (and the dynamic loader) at their paths on this machine.
for binary in "$agent_ctl" "$scripted" "$shell"; do
  ldd "$binary" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$work/rootfs.tar" .
id=$(podman import -q "$work/rootfs.tar" "$tag")
podman images --format '{{.Repository}}:{{.Tag}}' localhost/fabric-sandbox | while read -r old; do
  if [ "$old" != "$tag" ]; then
    podman rmi "$old" >/dev/null 2>&1 || true
  fi
done
echo "sha256:${id#sha256:}"
