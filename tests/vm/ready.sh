# Sourced by tests/gpio_rig/run.sh and tests/system/run.sh, with NAME (the make target) and
# ROOT (the clone) set: the guest built if its inputs changed (tests/vm/build-image.sh),
# or one line saying why the target is skipped, and exit status 0.
VM_DIR=${VM_DIR:-$ROOT/build/vm}
export VM_DIR

skip() {
    echo "$NAME: SKIPPED: $*"
    exit 0
}
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    mkdir -p "$VM_DIR"
    echo "$NAME: the guest, built if its inputs changed (log: $VM_DIR/build.log)"
    "$ROOT/tests/vm/build-image.sh" >"$VM_DIR/build.log" 2>&1 ||
        skip "the guest could not be built: $(tail -1 "$VM_DIR/build.log") (log: $VM_DIR/build.log)"
elif [ ! -f "$VM_DIR/image/rootfs.img" ]; then
    skip "the guest is not built, and building it needs root and apt (sudo make $NAME)"
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
