"""The main loop's thread and the sound's thread ahead of the box's other work on the CPU:
SCHED_FIFO at a low real-time priority, where the system allows it (docs/design.md, "Who
runs first").

A press's edge is stamped by the kernel whatever runs; the loop that decides it and the
thread that beeps it wait for a CPU like any other. On 2 cores kept busy by other work
(load 3.7), bench/latency.py's presses were decided at p99 4.2 to 5.9 ms from their edges
at normal priority, 1.3 to 1.4 ms with the loop at SCHED_FIFO (2026-11-26). Both threads
sleep until an input or a deadline, so they take a CPU only for their work. What they
start, a thread or a process (the clips' writer, a replay, the page), is reset to normal
priority by the kernel (SCHED_RESET_ON_FORK), so the heavy work stays behind them; the
kernel's real-time throttling (95 % of each second) keeps even a runaway loop from taking
a CPU whole.
"""

import os

# Under the kernel's threaded interrupts (priority 50, the GPIO's among them), over every
# normal task. systemd/referee.service allows it: LimitRTPRIO= this.
PRIORITY = 10


def run_first(*threads: int | None) -> str:
    """SCHED_FIFO at PRIORITY for these native thread ids (0: the calling thread; None: no
    thread, as a speaker that has none says); what came of it, for the log. Refused (no
    CAP_SYS_NICE and an RLIMIT_RTPRIO under PRIORITY, a sandbox's RestrictRealtime=), they
    run at normal priority as before."""
    param = os.sched_param(PRIORITY)
    try:
        for thread in (t for t in threads if t is not None):
            os.sched_setscheduler(thread, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, param)
    except OSError as err:
        return (
            f"the loop and the sound at normal priority: SCHED_FIFO {PRIORITY} refused "
            f"({err.strerror}); a press may wait for a busy CPU (systemd: LimitRTPRIO={PRIORITY})"
        )
    return f"the loop and the sound run first (SCHED_FIFO {PRIORITY})"
