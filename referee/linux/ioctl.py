"""Linux's ioctl request numbers (<asm-generic/ioctl.h>, as on x86 and arm), for the
devices read by ioctl without a C library of theirs: the DRM card, the input devices."""

NONE, WRITE, READ = 0, 1, 2


def ioc(direction: int, kind: str, nr: int, size: int) -> int:
    """_IOC(dir, type, nr, size): direction 2 bits, size 14, type 8, number 8."""
    return (direction << 30) | (size << 16) | (ord(kind) << 8) | nr
