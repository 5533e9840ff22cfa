# Sourced by the scripts that boot the guest: VM_ACCEL_ARGS, QEMU's accelerator.
# KVM where it can boot a stock kernel; else TCG (software emulation), several times
# slower. /dev/kvm of a kvm_pvm host only runs PVM-patched guest kernels: a stock Debian
# kernel hangs right after "Probing EDD" there.
case "${VM_ACCEL:-auto}" in
kvm) VM_ACCEL_ARGS=(-enable-kvm -cpu host) ;;
tcg) VM_ACCEL_ARGS=(-accel tcg,thread=multi -cpu max) ;;
*)
    if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then
        VM_ACCEL_ARGS=(-enable-kvm -cpu host)
    else
        VM_ACCEL_ARGS=(-accel tcg,thread=multi -cpu max)
    fi
    ;;
esac
