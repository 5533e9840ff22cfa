# Sourced by tests/gpio_rig/run.sh and tests/system/run.sh: `ready NAME` makes sure the
# guest is there (built, or rebuilt when its inputs changed, by tests/vm/build-image.sh
# where this machine lets us: root and apt), or skips with one line naming NAME and exit
# status 0. Needs ROOT; sets VM_DIR.
VM_DIR=${VM_DIR:-$ROOT/build/vm}
export VM_DIR

skip() {
    echo "$NAME: SKIPPED: $*"
    exit 0
}

ready() {
    NAME=$1
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        mkdir -p "$VM_DIR"
        echo "$NAME: the guest, built if its inputs changed (log: $VM_DIR/build.log)"
        "$ROOT/tests/vm/build-image.sh" >"$VM_DIR/build.log" 2>&1 ||
            skip "the guest could not be built: $(tail -1 "$VM_DIR/build.log") (log: $VM_DIR/build.log)"
    elif [ ! -f "$VM_DIR/image/rootfs.img" ]; then
        skip "the guest is not built, and building it needs root and apt (sudo make $NAME)"
    fi
    command -v qemu-system-x86_64 >/dev/null ||
        skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
}
