#!/bin/bash
# make test-system: the box installed with `sudo make install` on a booted Debian bookworm
# (systemd, the guest of tests/vm/build-image.sh) and played through QEMU's parts, then its
# power cut 20 times, its microphone on a loopback card and a camera on vivid's V4L2 device,
# then a table of cards looped through vivid's output to its capture
# (tests/system/test_box.py).
# About 40 minutes under emulation, after
# the guest is built (about 5 minutes, once). Prints one line 'test-system: N passed, M
# failed'; skips with one line and exit status 0 where QEMU cannot run or the guest cannot
# be built. What it leaves for a person to look at is in build/system/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NAME=test-system
# shellcheck source=tests/vm/ready.sh
. "$ROOT/tests/vm/ready.sh"
[ "$(id -u)" -eq 0 ] || skip "the guest's 9p share and QEMU's pty need root here"

REFEREE_SYSTEM_TEST=1 exec "$ROOT/.venv/bin/pytest" -p no:cacheprovider -rA -s \
    "$ROOT/tests/system" "$@"
