#!/bin/sh
# Installs the referee box: `sudo make install` on Raspberry Pi OS Lite (Bookworm or Trixie).
#
# With DESTDIR set it only writes the box's files under that directory (tests, staging):
# no apt, no user, no systemctl; outside DESTDIR only pip's cache and a temporary folder
# for the build. The venv it makes there runs, but only from there: a venv cannot be moved.
#
# Running it again changes nothing unless the code, the unit or the system's Python did.
# An existing /etc/referee/referee.toml is never overwritten.
set -eu

SRC=$(cd "$(dirname "$0")/.." && pwd)
DESTDIR=${DESTDIR:-}
# The venv sits on the system's Python so that it sees Raspberry Pi OS's python3-lgpio.
PYTHON=${REFEREE_PYTHON:-/usr/bin/python3}
PREFIX=/opt/referee
CONFIG=/etc/referee/referee.toml
UNITS_DIR=/usr/local/lib/systemd/system
# The daemon, and the page on the phones (docs/web.md), which reads the daemon's ledger.
UNITS="referee.service referee-web.service"
# The groups that own what the daemon opens: /dev/gpiochip*, /dev/dri/*, /dev/input/*,
# /dev/snd/*, /dev/ttyACM*. The unit names the same list in SupplementaryGroups=.
DEVICE_GROUPS="gpio video input audio dialout"
# What the wheel is built from: hashed to tell whether the installed code is current, and
# copied out of the clone first so that pip's build/ and referee.egg-info/, owned by root,
# never land in it.
SOURCES="pyproject.toml README.md referee"
# pygame-ce's wheel bundles SDL, which dlopens ALSA from the system for sound. No DRM,
# GBM, EGL or Mesa: the console's screen is KMS dumb buffers by ioctl (referee/outputs/
# kms.py), and a desktop's window comes with the desktop's own libraries. "a|b": the
# first name apt knows; Trixie renamed libasound2 in the 64-bit time_t transition. Over
# two lines: tests/vm/build-image.sh reads the list from its first line to its last.
PACKAGES="python3-venv
libasound2t64|libasound2"
# PyPI's gpiod (libgpiod v2, for the buttons) has wheels for 64-bit Pis only: a 32-bit
# Raspberry Pi OS builds it, with the compiler and Python's headers.
if [ "$(uname -m)" = armv7l ]; then
    PACKAGES="$PACKAGES gcc python3-dev"
fi
# Raspberry Pi OS packages lgpio for its Python; plain Debian does not, and there it comes
# from PyPI into the venv instead (a wheel for the Pi's arm64, else built from source).
LGPIO_PACKAGE=python3-lgpio
# The camera over the table ([camera], `referee look`): OpenCV is the `camera` extra of
# pyproject.toml, from PyPI into the venv on every box (a 36 MB aarch64 wheel, some 170 MB
# installed), whether or not a camera is set: a camera added later, and `referee look`
# to aim it, then need no second install, and nothing of it loads while [camera] source
# is off. Not Debian's python3-opencv: 149 packages and 430 MB (Qt, VTK, GDAL, MPI), every
# one of its libraries loaded by `import cv2`. A Raspberry Pi camera is read through
# picamera2, which only Raspberry Pi OS's apt has (it needs libcamera's Python bindings):
# installed where apt knows it, seen through the venv's system site packages.
PICAMERA_PACKAGE=python3-picamera2
# Debian leaves /dev/gpiochip* to root alone; Raspberry Pi OS gives them to the gpio group
# (raspberrypi-sys-mods). This rule does the same on any Debian, harmless on the Pi.
UDEV_RULE=/etc/udev/rules.d/60-referee-gpio.rules

say() {
    printf 'referee: %s\n' "$*"
}

is_installed() {
    for name in $(echo "$1" | tr '|' ' '); do
        if [ "$(dpkg-query -W -f='${db:Status-Status}' "$name" 2>/dev/null)" = installed ]; then
            return 0
        fi
    done
    return 1
}

first_known() {
    for name in $(echo "$1" | tr '|' ' '); do
        if apt-cache policy "$name" 2>/dev/null | grep -q 'Candidate: [^(]'; then
            echo "$name"
            return 0
        fi
    done
    say "apt knows none of: $1" >&2
    return 1
}

install_packages() {
    missing=""
    for want in $PACKAGES; do
        is_installed "$want" || missing="$missing $want"
    done
    is_installed "$LGPIO_PACKAGE" || venv_has_lgpio || missing="$missing $LGPIO_PACKAGE"
    # Wanted where apt knows it, or on Raspberry Pi OS (/etc/rpi-issue), whose lists may
    # not be fetched yet: a plain Debian, which never has it, is not sent to update its
    # lists at every install for it.
    if ! is_installed "$PICAMERA_PACKAGE" && { [ -n "$missing" ] || [ -e /etc/rpi-issue ] ||
        first_known "$PICAMERA_PACKAGE" >/dev/null 2>&1; }; then
        missing="$missing $PICAMERA_PACKAGE"
    fi
    [ -n "$missing" ] || return 0
    apt-get update
    names=""
    for want in $missing; do
        if [ "$want" = "$LGPIO_PACKAGE" ] && ! first_known "$want" >/dev/null 2>&1; then
            lgpio_from_pypi=yes
            continue
        fi
        if [ "$want" = "$PICAMERA_PACKAGE" ] && ! first_known "$want" >/dev/null 2>&1; then
            say "apt has no $PICAMERA_PACKAGE (not Raspberry Pi OS): a camera on USB only"
            continue
        fi
        names="$names $(first_known "$want")"
    done
    [ -n "$names" ] || return 0
    say "installing system packages:$names"
    # shellcheck disable=SC2086 # one word per package
    apt-get install --yes --no-install-recommends $names
}

venv_has_lgpio() {
    # find_spec, not import: importing lgpio makes a FIFO in the working directory.
    [ -x "$PREFIX/bin/python" ] &&
        "$PREFIX/bin/python" -c 'import importlib.util as u, sys; sys.exit(not u.find_spec("lgpio"))'
}

install_lgpio() {
    [ -n "$lgpio_from_pypi" ] || return 0
    if ! venv_has_lgpio; then
        "$PREFIX/bin/python" -m pip install --quiet lgpio
        code_changed=yes
    fi
    say "apt has no $LGPIO_PACKAGE (not Raspberry Pi OS): lgpio is in $PREFIX, from PyPI"
}

system_numpy_hold() {
    # Debian's numpy 1.x (Bookworm's, which picamera2 pulls in) is what Raspberry Pi OS's
    # picamera2 and its simplejpeg are built against: a numpy 2 in the venv would come
    # first on their path and break their import. The venv keeps to the system's numpy 1.
    if "$PYTHON" -c 'import importlib.metadata as m, sys; sys.exit(m.version("numpy")[:2] != "1.")' \
        2>/dev/null; then
        echo 'numpy<2'
    fi
}

camera_requirements() {
    "$PREFIX/bin/python" - "$SRC/pyproject.toml" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    print(" ".join(tomllib.load(f)["project"]["optional-dependencies"]["camera"]))
EOF
}

install_camera() {
    # Binary wheels only: where PyPI has none (a 32-bit OS), building OpenCV would take
    # the Pi hours. Requirements already met cost pip no download.
    # shellcheck disable=SC2046,SC2086 # one word per requirement: none has a space
    if "$PREFIX/bin/python" -m pip install --quiet --only-binary=:all: \
        $(camera_requirements) $numpy_hold; then
        return 0
    fi
    if "$PREFIX/bin/python" -c 'import importlib.util as u, sys; sys.exit(not u.find_spec("cv2"))'; then
        say "OpenCV from PyPI is not installed (pip said why, above): the system's serves"
    else
        say "OpenCV is not installed (pip said why, above): 'referee look' and [camera] need it;"
        say "run 'sudo make install' again once PyPI can be reached (a 32-bit OS: sudo apt install python3-opencv)"
    fi
}

install_udev_rule() {
    target=$DESTDIR$UDEV_RULE
    rule='SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"'
    if [ "$(cat "$target" 2>/dev/null)" != "$rule" ]; then
        mkdir -p "$(dirname "$target")"
        echo "$rule" >"$target"
        udev_changed=yes
    fi
}

create_user() {
    for group in $DEVICE_GROUPS; do
        # input comes with udev and gpio with Raspberry Pi OS; make any that is
        # missing, or systemd refuses to start a unit whose SupplementaryGroups= names it.
        getent group "$group" >/dev/null || groupadd --system "$group"
    done
    if ! getent passwd referee >/dev/null; then
        useradd --system --user-group --home-dir /var/lib/referee --no-create-home \
            --shell /usr/sbin/nologin --comment "SET referee daemon" referee
    fi
    for group in $DEVICE_GROUPS; do
        # Membership lets `sudo -u referee referee check-buttons` reach the devices too.
        id -nG referee | tr ' ' '\n' | grep -qx "$group" || usermod --append --groups "$group" referee
    done
}

source_digest() {
    # shellcheck disable=SC2086 # SOURCES is a list of paths without spaces
    # -L: referee/pinmap.toml is a link to hardware/pinmap.toml, and its content counts.
    (cd "$SRC" && find -L $SOURCES -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 |
        LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

install_venv() {
    venv=$DESTDIR$PREFIX
    site=$venv/lib/python$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if [ ! -d "$site" ]; then
        # First install, or the system's Python moved on (Bookworm's 3.11 to Trixie's 3.13):
        # a venv only works with the Python it was made from.
        "$PYTHON" -m venv --clear --system-site-packages "$venv"
    fi
    digest=$(source_digest)
    stamp=$venv/.source-sha256
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
        return 0
    fi
    stage=$(mktemp -d)
    # shellcheck disable=SC2086 # SOURCES is a list of paths without spaces
    # -L: the stage has no hardware/ for referee/pinmap.toml's link to point into.
    (cd "$SRC" && cp -RL $SOURCES "$stage")
    # shellcheck disable=SC2086 # empty, or one requirement without a space
    "$venv/bin/python" -m pip install --quiet "$stage" $numpy_hold
    echo "$digest" >"$stamp"
    code_changed=yes
}

install_config() {
    target=$DESTDIR$CONFIG
    example=$SRC/referee.example.toml
    if [ ! -e "$target" ]; then
        install -D -m 0644 "$example" "$target"
    elif ! cmp -s "$example" "$target"; then
        say "kept your $CONFIG; see $example for settings it may lack"
    fi
}

install_units() {
    for unit in $UNITS; do
        target=$DESTDIR$UNITS_DIR/$unit
        if ! cmp -s "$SRC/systemd/$unit" "$target"; then
            install -D -m 0644 "$SRC/systemd/$unit" "$target"
            unit_changed=yes
        fi
    done
}

if [ -z "$DESTDIR" ] && [ "$(id -u)" -ne 0 ]; then
    say "installing on this machine needs root: run 'sudo make install'" >&2
    say "(or 'make install DESTDIR=/some/dir' to write the files into a directory)" >&2
    exit 1
fi

code_changed=""
unit_changed=""
udev_changed=""
lgpio_from_pypi=""
stage=""
trap 'rm -rf "$stage"' EXIT
if [ -z "$DESTDIR" ]; then
    install_packages
    create_user
fi
numpy_hold=$(system_numpy_hold)
install_venv
install_config
install_units
install_udev_rule

if [ -n "$DESTDIR" ]; then
    say "installed into $DESTDIR"
    exit 0
fi
install_lgpio
install_camera
if [ -n "$udev_changed" ]; then
    udevadm control --reload-rules
    udevadm trigger --subsystem-match=gpio
fi
if [ -n "$unit_changed" ]; then
    systemctl daemon-reload
fi
# shellcheck disable=SC2086 # one word per unit
systemctl enable --quiet $UNITS
if [ -n "$code_changed$unit_changed" ]; then
    # shellcheck disable=SC2086
    systemctl restart $UNITS
    say "installed and (re)started: journalctl -u referee -u referee-web -f"
else
    # shellcheck disable=SC2086
    systemctl start $UNITS
    say "already up to date"
fi
