#!/bin/bash
# make test-rig: run tests/gpio_rig/ inside the gpio-sim guest of ../shared/gpio-rig
# (a QEMU guest with a real kernel's GPIO character device; see its README.md).
# Skips, with exit status 0, where the rig cannot run; otherwise exits with pytest's status.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)   # shared into the guest as /mnt/host
RIG_SRC=${RIG_SRC:-$(dirname "$ROOT")/shared/gpio-rig}
export RIG=${RIG:-${TMPDIR:-/tmp}/gpio-rig}

skip() { echo "test-rig: SKIPPED: $*"; exit 0; }
command -v qemu-system-x86_64 >/dev/null ||
  skip "qemu-system-x86_64 is missing: install qemu-system-x86 (apt-get), then build the rig with $RIG_SRC/run-rig.sh"
[ -x "$RIG_SRC/vm-run.sh" ] || skip "the rig's scripts are not at $RIG_SRC (set RIG_SRC)"
[ -f "$RIG/build/initrd.img" ] ||
  skip "the rig is not built at $RIG: build it once with $RIG_SRC/run-rig.sh (root, apt and pip, about 90 s)"

# In the guest: a board revision in /proc/cpuinfo (a Pi 3B's) makes gpiozero's lgpio
# factory accept the x86 guest, and GPIOZERO_PIN_FACTORY picks it the way a Pi's
# environment would; the buttons are then opened exactly as `referee run` opens them.
guest='{ cat /proc/cpuinfo; printf "Revision\t: a02082\n"; } > /tmp/cpuinfo &&
mount --bind /tmp/cpuinfo /proc/cpuinfo &&
GPIOZERO_PIN_FACTORY=lgpio python3 -m pytest -p no:cacheprovider -rP tests/gpio_rig'

start=$(date +%s.%N)
status=0
RIG_SHARE=$ROOT "$RIG_SRC/vm-run.sh" "$guest" || status=$?
echo "test-rig: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}") s in all, exit status $status"
exit "$status"
