#!/bin/bash
# The project's QEMU guest: a Debian bookworm disk image with systemd as init, a Debian
# kernel and the gpio-sim module built from Debian's kernel source, everything made from
# this machine's own apt sources and PyPI. `make test-rig` (tests/gpio_rig/run.sh) and
# `make test-system` (tests/system/run.sh) boot it.
#
#   tests/vm/build-image.sh          build it if its inputs changed (prints where it is)
#   tests/vm/build-image.sh --force  build it again
#
# Needs root, apt and PyPI; about 5 minutes and 2 GB under $VM_DIR (default build/vm of
# the clone). Its inputs are this script, tests/vm/guest/, the system packages in
# systemd/install.sh and the dependencies in pyproject.toml: a change to any of them
# rebuilds it. Downloads are kept in $VM_DIR/cache.
#
# Why a self-built module: Debian's amd64 kernels ship "# CONFIG_GPIO_SIM is not set" and
# no CONFIG_IRQ_SIM, so gpio-sim.c and irq_sim.c from the matching linux-source package are
# built as one out-of-tree module, irq_to_desc() (not exported) replaced by
# generic_handle_irq(), which ends in the same handle_simple_irq().
#
# What the guest holds:
# - the kernel (linux-image-amd64), its initramfs, gpio-sim.ko in /lib/modules/KV/updates;
# - /opt/vm-rig/site-packages: the Python packages the GPIO rig's tests use (gpiozero,
#   lgpio, gpiod 2, pytest, pygame-ce, pyserial, platformdirs), outside the system's
#   Python so that the install under test sees none of them;
# - a local apt repository (/var/local/debs, the only apt source) holding the packages
#   systemd/install.sh installs with all their dependencies, and a wheelhouse
#   (/var/local/wheels, pip's only index) holding the project's dependencies, its camera
#   extra (OpenCV) and lgpio:
#   the guest has no network, and these stand in for Debian's archive and PyPI;
# - tests/vm/guest/: files copied into it as they are (the rig's PID 1).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VM_DIR=${VM_DIR:-$ROOT/build/vm}
IMG=$VM_DIR/image          # what the guest boots: vmlinuz, initrd.img, rootfs.img
CACHE=$VM_DIR/cache        # downloads and built wheels, kept across builds
WORK=$VM_DIR/work          # scratch while building
PY=/usr/bin/python3        # Debian's python3.11: the guest's ABI
IMAGE_SIZE=4G
export DEBIAN_FRONTEND=noninteractive
APT_GET=(apt-get -o DPkg::Lock::Timeout=900 -y -q --no-install-recommends)

# Unmount whatever a failed step left mounted in the scratch tree, then remove it;
# --one-file-system: never into a mount (a host's /proc or /dev bound there).
clean_work() {
    { grep -o " $WORK/[^ ]*" /proc/mounts || true; } | sort -r | xargs -r -n1 umount -l
    rm -rf --one-file-system "$WORK"
}

log() { printf '=== [%s] %s\n' "$(date +%T)" "$*"; }
die() { echo "build-image: $*" >&2; exit 1; }

# The guest's packages besides debootstrap's minbase: systemd as init, what a user's
# `sudo make install` expects to find (sudo, make), the qemu guest agent the system test
# drives the guest with, libgpiod's tools.
GUEST_PACKAGES=systemd,systemd-sysv,udev,dbus,sudo,make,kmod,e2fsprogs,procps,python3,gpiod,qemu-guest-agent,initramfs-tools
RIG_PYTHON="gpiod>=2 gpiozero lgpio pytest pygame-ce pyserial platformdirs"
LGPIO_VERSION=0.2.2.0

# The system packages systemd/install.sh asks apt for (its PACKAGES), "a|b" split.
install_packages() {
    sed -n '/^PACKAGES="/,/"$/p' "$ROOT/systemd/install.sh" | sed 's/^PACKAGES="//; s/"$//' |
        tr ' |' '\n\n' | grep -v '^$'
}

# The project's runtime dependencies (pyproject.toml), one a line, markers and all: pip
# evaluates them here, on an x86_64 Linux like the guest, so the Pi-only ones drop out and
# the Linux-only ones (gpiod) stay. With them its camera extra (OpenCV), which install.sh
# installs on every box: the system test reads a V4L2 camera (vivid's) through it.
project_dependencies() {
    "$PY" - "$ROOT/pyproject.toml" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f)["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["camera"]))
EOF
}

inputs_digest() {
    {
        cat "$HERE/build-image.sh"
        find "$HERE/guest" -type f -print0 | LC_ALL=C sort -z | xargs -0 cat
        install_packages
        project_dependencies
    } | sha256sum | cut -d' ' -f1
}

debian_mirror() {
    { sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null
      sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' /etc/apt/sources.list 2>/dev/null
    } | grep -v -- '-security' | grep -m1 debian
}

host_tools() {
    local KV=$1 want=() pkg
    for pkg in qemu-system-x86 debootstrap e2fsprogs kmod gcc make swig dpkg-dev \
        python3-dev python3-pip python3-setuptools python3-wheel "linux-headers-$KV"; do
        dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed || want+=("$pkg")
    done
    [ ${#want[@]} -eq 0 ] && return 0
    log "apt: host tools: ${want[*]}"
    "${APT_GET[@]}" install "${want[@]}" >/dev/null ||
        { apt-get -q update >/dev/null && "${APT_GET[@]}" install "${want[@]}" >/dev/null; }
}

build_module() {
    local KV=$1 KVER=$2 src
    log "gpio-sim.ko for $KV, from linux-source-6.1 $KVER"
    mkdir -p "$CACHE/debs"
    src=$CACHE/debs/linux-source-6.1_${KVER}_all.deb
    if [ ! -f "$src" ]; then
        (cd "$CACHE/debs" && apt-get download -q "linux-source-6.1=$KVER" 2>&1 |
            grep -v 'unsandboxed' || true)
    fi
    [ -f "$src" ] || die "could not download linux-source-6.1=$KVER"
    rm -rf "$WORK/mod" "$WORK/src" && mkdir -p "$WORK/mod" "$WORK/src"
    dpkg-deb --fsys-tarfile "$src" | tar -xO ./usr/src/linux-source-6.1.tar.xz | xz -dc -T0 |
        tar -x -C "$WORK/src" linux-source-6.1/drivers/gpio/gpio-sim.c \
            linux-source-6.1/drivers/gpio/gpiolib.h linux-source-6.1/kernel/irq/irq_sim.c
    cp "$WORK/src/linux-source-6.1/drivers/gpio/gpio-sim.c" "$WORK/mod/gpio-sim-main.c"
    cp "$WORK/src/linux-source-6.1/drivers/gpio/gpiolib.h" "$WORK/src/linux-source-6.1/kernel/irq/irq_sim.c" "$WORK/mod/"
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$WORK/mod/irq_sim.c"
    grep -q 'generic_handle_irq(irqnum);' "$WORK/mod/irq_sim.c" || die "irq_sim.c changed: patch it anew"
    printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' >"$WORK/mod/Kbuild"
    make -s -C "/lib/modules/$KV/build" M="$WORK/mod" modules 2>&1 | grep -v 'Skipping BTF' || true
    [ -f "$WORK/mod/gpio-sim.ko" ] || die "gpio-sim.ko did not build"
}

PIP_TARGET_ARGS=(--only-binary=:all: --platform linux_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311)

build_wheels() {
    log "Python wheels for the guest (cp311)"
    local wheels=$CACHE/wheels
    mkdir -p "$wheels" "$CACHE/sdist"
    # lgpio has no x86_64 wheel: build it from its sdist, liblgpio compiled in (PYPI=1).
    if ! ls "$wheels"/lgpio-$LGPIO_VERSION-*.whl >/dev/null 2>&1; then
        "$PY" -m pip download -q --no-cache-dir --no-deps --no-binary=:all: --dest "$CACHE/sdist" \
            "lgpio==$LGPIO_VERSION"
        PYPI=1 "$PY" -m pip wheel -q --no-cache-dir --no-deps --no-build-isolation \
            --wheel-dir "$wheels" "$CACHE/sdist/lgpio-$LGPIO_VERSION.tar.gz"
    fi
    local deps
    mapfile -t deps < <(project_dependencies)
    # shellcheck disable=SC2086 # one word per requirement
    "$PY" -m pip download -q --dest "$wheels" "${PIP_TARGET_ARGS[@]}" \
        $RIG_PYTHON 'setuptools>=68' wheel "${deps[@]}"
    rm -f "$wheels"/lgpio-0.0.*.whl # a placeholder some resolvers pull in for gpiozero
}

debootstrap_rootfs() {
    local KV=$1 R=$WORK/rootfs base
    # The slow part, kept until the packages or the kernel change.
    base=$CACHE/rootfs-$(echo "$GUEST_PACKAGES $KV" | sha256sum | cut -c1-16).tar
    rm -rf "$R" && mkdir -p "$R"
    if [ -f "$base" ]; then
        log "the guest's base system, from $base"
        tar -C "$R" -xf "$base"
        return 0
    fi
    log "debootstrap bookworm (minbase, systemd), then linux-image-$KV"
    debootstrap --variant=minbase --include="$GUEST_PACKAGES" bookworm "$R" \
        "$(debian_mirror)" >"$WORK/debootstrap.log" 2>&1 ||
        { tail -20 "$WORK/debootstrap.log"; die "debootstrap failed (log: $WORK/debootstrap.log)"; }
    # The kernel may come from bookworm-security: the guest's apt gets this machine's
    # Debian sources (not its others) while the image is built.
    grep -l 'debian' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        xargs -r cp -t "$R/etc/apt/sources.list.d/"
    grep '^deb .*debian' /etc/apt/sources.list >"$R/etc/apt/sources.list" 2>/dev/null || true
    in_chroot "$R" apt-get -q update >/dev/null
    in_chroot "$R" apt-get -q -y --no-install-recommends install "linux-image-$KV" >>"$WORK/debootstrap.log" 2>&1 ||
        die "the kernel did not install (log: $WORK/debootstrap.log)"
    [ -f "$R/boot/initrd.img-$KV" ] || die "no initramfs was made for $KV"
    rm -f "$CACHE"/rootfs-*.tar
    tar -C "$R" -cf "$base" .
}

# A command in the guest's tree, with /proc and /dev that apt and its scripts expect.
in_chroot() {
    local R=$1 status=0
    shift
    mount --bind /proc "$R/proc"
    mount --bind /dev "$R/dev"
    chroot "$R" "$@" || status=$?
    umount "$R/dev" "$R/proc"
    return "$status"
}

# The packages install.sh will ask for, with everything they pull in that the image lacks,
# downloaded by the guest's own apt into a repository that becomes its only source.
local_apt_repository() {
    local R=$1 repo=/var/local/debs available=()
    log "local apt repository: $(install_packages | tr '\n' ' ')"
    for pkg in $(install_packages); do
        # Not `| grep -q`: with pipefail, apt-cache's SIGPIPE would fail the test.
        [[ $(chroot "$R" apt-cache policy "$pkg") == *"Candidate: "[^\(]* ]] && available+=("$pkg")
    done
    [ ${#available[@]} -gt 0 ] || die "apt knows none of install.sh's packages"
    mkdir -p "$R$repo"
    in_chroot "$R" apt-get -q -y --no-install-recommends -o Dir::Cache::archives="$repo" \
        install --download-only "${available[@]}" >/dev/null
    rm -rf "$R$repo/partial" "$R$repo/lock"
    (cd "$R$repo" && dpkg-scanpackages --multiversion . 2>/dev/null >Packages)
    [ -s "$R$repo/Packages" ] || die "the local apt repository came out empty"
    rm -f "$R"/etc/apt/sources.list.d/* "$R"/var/lib/apt/lists/*_*
    echo "deb [trusted=yes] file:$repo ./" >"$R/etc/apt/sources.list"
    in_chroot "$R" apt-get -q update >/dev/null
}

assemble() {
    local KV=$1 R=$WORK/rootfs site=/opt/vm-rig/site-packages
    log "assemble the guest"
    install -D -m 0644 "$WORK/mod/gpio-sim.ko" "$R/lib/modules/$KV/updates/gpio-sim.ko"
    depmod -b "$R" "$KV"

    "$PY" -m pip install -q --no-cache-dir --root-user-action=ignore --no-index \
        --find-links "$CACHE/wheels" --no-compile --target "$R$site" $RIG_PYTHON
    chroot "$R" python3 -m compileall -q "$site" >/dev/null || true

    local_apt_repository "$R"
    mkdir -p "$R/var/local/wheels"
    local deps
    mapfile -t deps < <(project_dependencies)
    "$PY" -m pip download -q --no-index --find-links "$CACHE/wheels" --dest "$R/var/local/wheels" \
        "${PIP_TARGET_ARGS[@]}" "lgpio==$LGPIO_VERSION" 'setuptools>=68' wheel "${deps[@]}"
    printf '[global]\nno-index = true\nfind-links = /var/local/wheels\n' >"$R/etc/pip.conf"

    echo referee-box >"$R/etc/hostname"
    printf '127.0.0.1 localhost\n127.0.1.1 referee-box\n' >"$R/etc/hosts"
    printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$R/etc/fstab"
    chroot "$R" passwd -d root >/dev/null
    # An initramfs with only what finds the root disk: under emulation each megabyte of
    # it, and each module udev loads there, costs boot time (55 s instead of 20 s to ready).
    echo MODULES=list >"$R/etc/initramfs-tools/conf.d/vm.conf"
    printf '%s\n' virtio_pci virtio_blk ext4 >"$R/etc/initramfs-tools/modules"
    in_chroot "$R" update-initramfs -u -k "$KV" >/dev/null 2>&1 || die "update-initramfs failed"
    cp -r "$HERE/guest/." "$R/"
    chmod 0755 "$R"/usr/local/sbin/*
    # No timers that run apt or scrub disks in the middle of a test.
    for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer; do
        ln -sf /dev/null "$R/etc/systemd/system/$unit"
    done
    rm -rf "$R"/usr/share/{doc,man,info,locale}/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb

    log "rootfs.img ($IMAGE_SIZE, ext4)"
    mkdir -p "$IMG.new"
    cp "$R/boot/vmlinuz-$KV" "$IMG.new/vmlinuz"
    cp "$R/boot/initrd.img-$KV" "$IMG.new/initrd.img"
    mkfs.ext4 -q -L referee-box -d "$R" "$IMG.new/rootfs.img" "$IMAGE_SIZE"
    echo "$KV" >"$IMG.new/KV"
}

main() {
    [ "$(id -u)" -eq 0 ] || die "building the guest needs root (debootstrap, chroot)"
    command -v apt-get >/dev/null || die "building the guest needs apt (Debian bookworm)"
    local digest KPKG KV KVER T0=$SECONDS
    digest=$(inputs_digest)
    if [ "${1:-}" != --force ] && [ -f "$IMG/inputs.sha256" ] &&
        [ "$(cat "$IMG/inputs.sha256")" = "$digest" ]; then
        echo "$IMG"
        return 0
    fi
    mkdir -p "$CACHE"
    trap clean_work EXIT
    clean_work
    rm -rf "$IMG.new"
    mkdir -p "$WORK"
    # The kernel the guest runs: whatever linux-image-amd64 points to now.
    KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
    [ -n "$KPKG" ] || { apt-get -q update >/dev/null; KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}'); }
    KV=${KPKG#linux-image-}
    KVER=$(apt-cache show "$KPKG" | awk '/^Version:/{print $2; exit}')
    [ -n "$KV" ] && [ -n "$KVER" ] || die "apt does not know linux-image-amd64"
    host_tools "$KV"
    build_module "$KV" "$KVER"
    build_wheels
    debootstrap_rootfs "$KV"
    assemble "$KV"
    echo "$digest" >"$IMG.new/inputs.sha256"
    rm -rf "$IMG" && mv "$IMG.new" "$IMG"
    log "guest built in $((SECONDS - T0)) s: $(du -sh "$IMG" | cut -f1) in $IMG"
    echo "$IMG"
}

main "$@"
