#!/bin/bash
# make test-system: the box installed with `sudo make install` on a booted Debian bookworm
# (systemd, the guest of tests/vm/build-image.sh) and played through QEMU's parts, then its
# power cut 20 times (tests/system/test_box.py). About 30 minutes under emulation, after
# the guest is built (about 5 minutes, once). Prints one line 'test-system: N passed, M
# failed'; skips with one line and exit status 0 where QEMU cannot run or the guest cannot
# be built. What it leaves for a person to look at is in build/system/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_DIR=${VM_DIR:-$ROOT/build/vm}
export VM_DIR

skip() {
    echo "test-system: SKIPPED: $*"
    exit 0
}
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    mkdir -p "$VM_DIR"
    echo "test-system: the guest, built if its inputs changed (log: $VM_DIR/build.log)"
    "$ROOT/tests/vm/build-image.sh" >"$VM_DIR/build.log" 2>&1 ||
        skip "the guest could not be built: $(tail -1 "$VM_DIR/build.log") (log: $VM_DIR/build.log)"
elif [ ! -f "$VM_DIR/image/rootfs.img" ]; then
    skip "the guest is not built, and building it needs root and apt (sudo make test-system)"
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
[ "$(id -u)" -eq 0 ] || skip "the guest's 9p share and QEMU's pty need root here"

REFEREE_SYSTEM_TEST=1 exec "$ROOT/.venv/bin/pytest" -p no:cacheprovider -rA -s \
    "$ROOT/tests/system" "$@"
