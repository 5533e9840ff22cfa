#!/bin/sh
# Removes the referee box: `sudo make uninstall`.
#
# Like Debian's "remove" (not "purge") it keeps what holds your data: the ledger in
# /var/lib/referee, the settings in /etc/referee, and the referee user that owns the
# ledger (so its uid is never handed to someone else while those files exist).
# With DESTDIR set it only removes the files under that directory: no systemctl.
set -eu

DESTDIR=${DESTDIR:-}
PREFIX=/opt/referee
UNITS_DIR=/usr/local/lib/systemd/system
UNITS="referee-web.service referee.service"
UDEV_RULE=/etc/udev/rules.d/60-referee-gpio.rules

say() {
    printf 'referee: %s\n' "$*"
}

if [ -z "$DESTDIR" ] && [ "$(id -u)" -ne 0 ]; then
    say "uninstalling from this machine needs root: run 'sudo make uninstall'" >&2
    exit 1
fi

for unit in $UNITS; do
    if [ -z "$DESTDIR" ] && [ -e "$UNITS_DIR/$unit" ]; then
        systemctl disable --now --quiet "$unit"
    fi
    rm -f "$DESTDIR$UNITS_DIR/$unit"
done
rm -f "$DESTDIR$UDEV_RULE"
rm -rf "$DESTDIR$PREFIX"

if [ -z "$DESTDIR" ]; then
    systemctl daemon-reload
    # The referee took tty1 from its login prompt (Conflicts=getty@tty1.service): give it back.
    if systemctl is-enabled --quiet getty@tty1.service; then
        systemctl start getty@tty1.service
    fi
fi
say "removed; kept the ledger in /var/lib/referee and the settings in /etc/referee"
say "(delete them, and the user with 'userdel referee', if you want them gone)"
