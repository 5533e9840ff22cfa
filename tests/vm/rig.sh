#!/bin/bash
# tests/vm/rig.sh 'shell commands': boot a fresh GPIO-rig guest from the image that
# tests/vm/build-image.sh made, run the commands in it (in /mnt/host, the clone,
# read-only), print what they print, exit with their status. The disk is a snapshot:
# nothing the commands write outlives the run.
#   VM_DIR (build/vm)  VM_ACCEL=auto|tcg|kvm  VM_SMP=2  VM_MEM=1024  VM_TIMEOUT=600
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VM_DIR=${VM_DIR:-$ROOT/build/vm}
IMG=$VM_DIR/image
# shellcheck source=tests/vm/accel.sh
. "$HERE/accel.sh"

ctl=$(mktemp -d "$VM_DIR/ctl.XXXXXX")
trap 'rm -rf "$ctl"' EXIT
printf '%s\n' "$*" >"$ctl/cmd"
timeout "${VM_TIMEOUT:-600}" qemu-system-x86_64 "${VM_ACCEL_ARGS[@]}" \
    -smp "${VM_SMP:-2}" -m "${VM_MEM:-1024}" \
    -kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
    -append "root=/dev/vda rw init=/usr/local/sbin/vm-rig-init console=ttyS0 quiet panic=-1" \
    -drive file="$IMG/rootfs.img",format=raw,if=virtio,snapshot=on \
    -nographic -no-reboot -nic none \
    -virtfs local,path="$ROOT",mount_tag=host,security_model=none,readonly=on,id=host \
    -virtfs local,path="$ctl",mount_tag=ctl,security_model=none,id=ctl </dev/null |
    tr -d '\r' | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' |
    grep -v -e '^SeaBIOS' -e '^Booting from' -e '^$' -e '^iPXE' || true
exit "$(cat "$ctl/rc" 2>/dev/null || echo 255)"
