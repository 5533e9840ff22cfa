#!/bin/bash
# make test-rig: run tests/gpio_rig/ inside the project's QEMU guest, whose kernel has
# gpio-sim: a real GPIO character device whose lines the tests drive from outside.
# The guest is built on first use and whenever its inputs change (tests/vm/build-image.sh:
# root, apt and PyPI, about 5 minutes); a run then takes about a minute under emulation.
# Skips with one line and exit status 0 where QEMU cannot run or the guest cannot be
# built; otherwise exits with pytest's status.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NAME=test-rig
# shellcheck source=tests/vm/ready.sh
. "$ROOT/tests/vm/ready.sh"

# In the guest: the buttons are opened exactly as `referee run` opens them (the rig's chip
# carries a Pi 4's label). A board revision in /proc/cpuinfo (a Pi 3B's) makes gpiozero's
# lgpio factory accept the x86 guest too, for what still goes through gpiozero there: the
# older tree that `run.sh bench` (make bench-rig) measures beside this one.
pi='{ cat /proc/cpuinfo; printf "Revision\t: a02082\n"; } > /tmp/cpuinfo &&
mount --bind /tmp/cpuinfo /proc/cpuinfo && export GPIOZERO_PIN_FACTORY=lgpio'
if [ "${1:-}" = bench ]; then
    guest="$pi && python3 bench/idle_gpio.py --old build/old-tree"
else
    guest="$pi && python3 -m pytest -p no:cacheprovider -rP tests/gpio_rig"
fi

start=$(date +%s.%N)
status=0
"$ROOT/tests/vm/rig.sh" "$guest" || status=$?
echo "test-rig: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}") s in all, exit status $status"
exit "$status"
