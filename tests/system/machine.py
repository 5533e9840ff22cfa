"""The box as a QEMU machine, driven from the host: boot, run commands, look, cut the power.

One `Machine` is one QEMU process on the system test's disk (a copy of the image
tests/vm/build-image.sh made): systemd boots it as the Pi boots Raspberry Pi OS. The
parts the box uses are QEMU's: virtio-gpu (DRM/KMS), an Intel HDA sound card whose output
QEMU writes to a wav file, a USB serial adapter (FTDI) whose far end is a pty on the host,
and the guest agent's virtio port, through which the test runs commands in the guest.
`kill()` is the power cut: QEMU dies, what the guest had not written is gone.
"""

import base64
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACCEL_SH = ROOT / "tests" / "vm" / "accel.sh"
PR_SET_PDEATHSIG = 1


class GuestError(Exception):
    pass


def accel_args() -> list[str]:
    """tests/vm/accel.sh's choice, so that both guests pick the same accelerator."""
    script = f'. "{ACCEL_SH}"; printf "%s\\n" "${{VM_ACCEL_ARGS[@]}}"'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return out.stdout.split()


def die_with_parent() -> None:
    """In the child before QEMU starts: a test killed (CI's timeout) takes QEMU with it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class JsonSocket:
    """A line-per-message JSON connection: QMP and the guest agent both speak it."""

    def __init__(self, path: Path, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(str(path))
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.buffer = b""

    def send(self, message: dict[str, object]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def receive(self, timeout_s: float) -> dict[str, object]:
        self.sock.settimeout(timeout_s)
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise GuestError("the connection closed")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message = json.loads(line.lstrip(b"\xff"))
        assert isinstance(message, dict)
        return message

    def close(self) -> None:
        self.sock.close()


class Machine:
    # The one screen, the only DRM card as on a Pi (no VGA beside it).
    SCREEN = ("-vga", "none", "-device", "virtio-gpu-pci,xres=1280,yres=720")

    def __init__(self, kernel_dir: Path, disk: Path, out: Path, name: str) -> None:
        self.out = out
        self.name = name
        self.qmp_path = out / f"{name}.qmp"
        self.qga_path = out / f"{name}.qga"
        self.console = out / f"{name}.console.log"
        self.wav = out / f"{name}.wav"
        for path in (self.qmp_path, self.qga_path):
            path.unlink(missing_ok=True)
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [
                "qemu-system-x86_64",
                *accel_args(),
                "-smp", os.environ.get("VM_SMP", "2"),
                "-m", os.environ.get("VM_MEM", "1024"),
                "-kernel", str(kernel_dir / "vmlinuz"),
                "-initrd", str(kernel_dir / "initrd.img"),
                "-append", "root=/dev/vda rw console=ttyS0 console=tty1 quiet",
                "-drive", f"file={disk},format=raw,if=virtio,cache=writeback",
                "-nic", "none",
                "-display", "none",
                *self.SCREEN,
                "-audiodev", f"wav,id=snd0,path={self.wav}",
                "-device", "intel-hda",
                "-device", "hda-output,audiodev=snd0",
                "-device", "qemu-xhci",
                "-chardev", "pty,id=board",
                "-device", "usb-serial,chardev=board",
                "-chardev", f"socket,id=qga0,path={self.qga_path},server=on,wait=off",
                "-device", "virtio-serial",
                "-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0",
                "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
                "-serial", f"file:{self.console}",
                "-virtfs",
                f"local,path={ROOT},mount_tag=host,security_model=none,readonly=on,id=host",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
            stderr=(out / f"{name}.qemu.log").open("wb"),
        )  # fmt: skip
        self.qmp = JsonSocket(self.qmp_path, 30)
        self.qmp.receive(30)  # the greeting
        self.command("qmp_capabilities")
        self.agent: JsonSocket | None = None
        # QEMU attaches its USB serial adapter only while the pty's far end is open: open
        # it now, and the board is plugged in from power on, as a box's board is.
        self.board_fd = os.open(self.board_pty(), os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.board_fd)

    # QMP: the machine itself.
    def command(self, name: str, **arguments: object) -> object:
        self.qmp.send({"execute": name, "arguments": arguments})
        while True:
            reply = self.qmp.receive(60)
            if "event" in reply:
                continue
            if "error" in reply:
                raise GuestError(f"QMP {name}: {reply['error']}")
            return reply.get("return")

    def screendump(self, path: Path) -> Path:
        self.command("screendump", filename=str(path), format="png")
        return path

    def board_pty(self) -> str:
        chardevs = self.command("query-chardev")
        assert isinstance(chardevs, list)
        for chardev in chardevs:
            if chardev["label"] == "board":
                return str(chardev["filename"]).removeprefix("pty:")
        raise GuestError("QEMU has no board chardev")

    def kill(self) -> None:
        """The power cut: no shutdown, no flush, QEMU gone."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.close()

    def close(self) -> None:
        for conn in (self.agent, self.qmp):
            if conn is not None:
                conn.close()
        self.agent = None
        if self.board_fd >= 0:
            os.close(self.board_fd)
            self.board_fd = -1

    def wait_exit(self, timeout_s: float) -> None:
        self.process.wait(timeout_s)
        self.close()

    # The guest agent: commands in the guest.
    def wait_agent(self, timeout_s: float) -> float:
        """Wait until the guest's agent answers; the seconds since QEMU started."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                raise GuestError(f"QEMU exited ({self.process.returncode}) while booting")
            try:
                self._sync(5)
                return time.monotonic() - self.started
            except (OSError, GuestError, TimeoutError, json.JSONDecodeError):
                if self.agent is not None:
                    self.agent.close()
                    self.agent = None
                if time.monotonic() > deadline:
                    raise GuestError(f"the guest agent did not answer in {timeout_s} s") from None
                time.sleep(1)

    def _sync(self, timeout_s: float) -> None:
        if self.agent is None:
            self.agent = JsonSocket(self.qga_path, timeout_s)
        token = int(time.monotonic_ns() % 1_000_000_000)
        # guest-sync-delimited: a 0xff before the reply flushes what an earlier,
        # abandoned exchange left in the channel.
        self.agent.send({"execute": "guest-sync-delimited", "arguments": {"id": token}})
        while True:
            reply = self.agent.receive(timeout_s)
            if reply.get("return") == token:
                return

    def agent_call(self, name: str, timeout_s: float = 60, **arguments: object) -> object:
        if self.agent is None:
            self._sync(10)
        assert self.agent is not None
        self.agent.send({"execute": name, "arguments": arguments})
        reply = self.agent.receive(timeout_s)
        if "error" in reply:
            raise GuestError(f"guest agent {name}: {reply['error']}")
        return reply.get("return")

    def run(
        self, script: str, timeout_s: float = 300, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """A shell script in the guest, as root; its exit status and output."""
        started = self.agent_call(
            "guest-exec", path="/bin/sh", arg=["-c", script], **{"capture-output": True}
        )
        assert isinstance(started, dict)
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.agent_call("guest-exec-status", pid=started["pid"])
            assert isinstance(status, dict)
            if status["exited"]:
                break
            if time.monotonic() > deadline:
                raise GuestError(f"{script!r} still running after {timeout_s} s")
            time.sleep(0.05)
        out = base64.b64decode(status.get("out-data", "")).decode(errors="replace")
        err = base64.b64decode(status.get("err-data", "")).decode(errors="replace")
        result = subprocess.CompletedProcess(script, status.get("exitcode", -1), out, err)
        if check and result.returncode != 0:
            raise GuestError(f"{script!r} exited {result.returncode}:\n{out}{err}")
        return result

    def poweroff(self, timeout_s: float) -> None:
        """Shut the guest down as a user would, and wait for QEMU to exit. The guest agent
        goes down with it, so the command is started, not waited for: waiting, its status
        request met a connection reset once the agent had stopped."""
        with contextlib.suppress(ConnectionError):
            self.agent_call("guest-exec", path="/bin/systemctl", arg=["poweroff"])
        self.wait_exit(timeout_s)

    def guest_time_offset_ns(self, samples: int = 15) -> tuple[int, int]:
        """Guest CLOCK_REALTIME minus the host's, from the quickest of a few round trips,
        and that round trip: the offset is good to half of it."""
        best: tuple[int, int] | None = None
        for _ in range(samples):
            before = time.time_ns()
            guest = self.agent_call("guest-get-time")
            after = time.time_ns()
            assert isinstance(guest, int)
            rtt = after - before
            if best is None or rtt < best[1]:
                best = (guest - (before + after) // 2, rtt)
        assert best is not None
        return best
