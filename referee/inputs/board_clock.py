"""The serial button board's microsecond clock, mapped onto the daemon's monotonic clock.

The board stamps every edge in its own clock (`t_us`, microseconds since it started); the
arbiter needs times on the daemon's clock (`time.monotonic_ns`). The two clocks differ by an
offset that nobody tells us, and that offset creeps: the board's crystal and the Pi's clock
run apart by tens of ppm (more while NTP slews the Pi's clock).

What we know is one inequality per line: a line is received after its edge happened, so
`received_ns - 1000 * t_us` is the offset plus that line's latency (the board's loop, USB,
the kernel, our thread waking up). Every sample is an upper bound of the offset, and the
smallest one seen is the best estimate. The mapping, in three rules:

1. **The floor.** Keep the smallest sample, but let it age: each sample is worth
   `sample + DRIFT_PPM * (t_us - its t_us)`, because the true offset may have risen at most
   that fast since. A new sample below the aged floor replaces it. This follows drift in
   either direction (a falling offset brings lower samples; a rising one is let in by the
   ageing) while latency jitter, which only ever adds, is filtered out. The mapping takes
   the smallest of the last WINDOW_READS reads' samples, so that a floor which lines no
   longer bear out (a clock the board claimed for a moment) is forgotten within a second
   of the board's T lines; the stamps are judged by the floor of all the timeline's
   samples, which a stall of the daemon cannot raise.
2. **Bursts.** Edges less than QUIET_US apart (on the board's clock) form a burst, and one
   burst is mapped with one fixed offset: `t_ns = 1000 * t_us + offset`. So inside a burst
   the differences are exactly the board's (a photo finish of "P2 by 0.3 ms" is the board's
   0.3 ms, not USB's). The offset is re-anchored to the floor when a burst starts, and also
   after MAX_BURST_US, so that a long busy spell cannot freeze it for ever; but only at a
   gap of REANCHOR_GAP_US, wider than any photo finish, so that no two presses a call
   compares are mapped with different offsets. Re-anchoring never moves an edge to or
   before the one mapped just before it: the mapping is monotonic.
3. **The margin.** The burst's offset is put MARGIN_NS below the floor. Lines of one read
   share one receive time, and the floor takes all of them before any is mapped, so none
   of them maps after its arrival. A later read of the same burst may bring a line that
   travelled faster than the burst's first one (that one waited for the GIL, say, after a
   long quiet spell aged the floor): the margin absorbs such a difference up to its size.
   Beyond that the burst keeps its exact spacing and the line maps after its arrival by the
   excess (exact differences matter more than the daemon's idea of "now"), until the next
   gap of REANCHOR_GAP_US, where the burst is re-anchored: a board that sends T lines
   never falls quiet, and its first line may have been a slow one.

So a mapped time is within about ten milliseconds of the truth, usually a few before it,
ordered exactly as the board ordered the edges and exactly spaced within a burst. A line
reaches the daemon at most its own latency plus the margin after its mapped time.

Who may move the floor is the stream's to say (board_stream.py): a board that sends T lines
moves it with its T lines alone (the board reads a T's time just before it writes the line:
the tightest samples of all, and its own promise), one without them with its edges. Only
believable stamps may reach the floor: `ahead_ns` says how far a stamp lies below it,
beyond what the drift allows, and `leeway_ns` how far it may. A timeline's first second
learns the clock (its first lines may have waited for a daemon busy drawing), so a stamp
up to PLAUSIBLE_NS ahead is believed; after that, everything the floor may still fall for
a better latency is CLOCK_MARGIN_NS in all. So no run of stamps, however they agree, can
drag the mapping faster than the drift allows, nor further than the margin.
"""

from collections import deque
from collections.abc import Sequence

# The kernel slews CLOCK_MONOTONIC by at most 500 ppm (NTP's frequency limit); crystals add
# tens of ppm. The floor ages by this much: a slower ageing could fall behind a real drift.
DRIFT_PPM = 500
# Edges closer than this belong to one burst and keep the board's differences exactly.
QUIET_US = 1_000_000
# A burst is re-anchored after this long even if edges keep coming (a busy game)...
MAX_BURST_US = 10_000_000
# ...at the next gap this wide: two presses closer than this keep the board's spacing.
# Under the idle T lines' 100 ms: a board whose crystal runs a little slow stamps them
# 99.99 ms apart, and at 100 ms it was never re-anchored while idle, so a floor the board
# claimed for a moment held its watermark back until a second's silence (hypothesis).
REANCHOR_GAP_US = 90_000
# Mapped times sit this far below the floor (see rule 3): the spread of latencies, from a
# line that comes straight through to one whose reader waited out Python's 5 ms GIL switch.
MARGIN_NS = 5_000_000
# How far from where the board's clock can be a stamp may lie and still be believed while a
# timeline's clock is learned (LEARN_NS from its first T), and how far a late line may be
# behind the board's watermark: further is not a delay, it is a wrong time.
PLAUSIBLE_NS = 1_000_000_000
LEARN_NS = 1_000_000_000
# ...and from this many reads at least: a daemon stalled through that second (resuming a
# long game, stopped) reads the board's lines in a few late batches, none of them fresh.
LEARN_READS = 5
# The mapping's floor is the best of this many reads: most of a second of idle T lines.
WINDOW_READS = 8
# Once learned, how far below its floor the mapping may still go for a better latency, in
# all: the floor is then the best of ten T lines a second, a millisecond or two above the
# truth, and a stamp further ahead than this is the board's promise broken, not a fast line.
CLOCK_MARGIN_NS = 20_000_000
# The bursts' offsets kept for lines stamped before the last one mapped: twice as far back
# as a late line may be (PLAUSIBLE_NS behind the watermark, board_stream.py).
KEPT_ANCHORS_US = 2 * PLAUSIBLE_NS // 1000


def _ageing_ns(t_us: int) -> int:
    # DRIFT_PPM of t_us microseconds, in nanoseconds: t_us * 1000 * DRIFT_PPM / 1e6.
    return t_us * DRIFT_PPM // 1000


class BoardClock:
    """Maps one board's t_us stamps to the daemon's clock; `reset` when the board restarts."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._floor: int | None = None  # min over samples of (sample - ageing at its t_us)
        self._floor_ns = 0  # when the sample that set the floor was received
        # The best sample of each of the last reads, as (received at, sample - ageing).
        self._recent: deque[tuple[int, int]] = deque(maxlen=WINDOW_READS)
        self._learned_at: int | None = None  # when the clock is learned (learn() began it)
        self._reads = 0  # reads the floor has seen lines of since learn()
        self._read_ns: int | None = None  # the last of them
        self._spent_ns = 0  # how far the floor fell beyond the drift since it was learned
        self._offset = 0
        self._burst_start_us = 0
        self._last_us: int | None = None
        # The bursts' offsets, as (first stamp, offset), oldest first, over the last
        # KEPT_ANCHORS_US of stamps: a line stamped before the last one mapped is mapped
        # with the offset of the burst its stamp falls in, as its neighbours were.
        self._anchors: deque[tuple[int, int]] = deque()

    def learn(self, received_ns: int) -> None:
        """The board's promise starts now (its first T line): learn its clock for LEARN_NS."""
        self._learned_at = received_ns + LEARN_NS
        self._spent_ns = 0
        self._reads = 0
        self._read_ns = None

    def relearn(self, t_us: int, received_ns: int) -> None:
        """The floor was learned from lines that all came late (a link or a board that
        held them through the learning), and fresher lines agree on an earlier one, the
        last stamped t_us and received at received_ns: learn the clock again from it,
        keeping the mapping's last offset so that it stays monotonic (rule 2) and
        re-anchors at the next gap."""
        self._floor = None
        self._recent.clear()
        self.learn(received_ns)
        self.observe(t_us, received_ns)

    def learning(self, received_ns: int) -> bool:
        learned_at = self._learned_at
        # The reads before this one: a read's lines came together, so they are judged
        # alike. Counted with it, the read that ended the learning judged its first line
        # learning and the rest learned: after a start held late (a link or a board that
        # held its lines), its fresher lines were called impossible (hypothesis, 4149).
        reads = self._reads - (received_ns == self._read_ns)
        return learned_at is None or received_ns < learned_at or reads < LEARN_READS

    def leeway_ns(self, received_ns: int) -> int:
        """How far ahead (ahead_ns) a stamp received at received_ns may be and still be
        observed: PLAUSIBLE_NS while the clock is learned, then what is left of the margin."""
        if self.learning(received_ns):
            return PLAUSIBLE_NS
        return max(0, CLOCK_MARGIN_NS - self._spent_ns)

    def observe(self, t_us: int, received_ns: int) -> None:
        """Learn from a line stamped t_us that arrived at received_ns (rule 1). Only a
        believable stamp may be observed (within leeway_ns): one far ahead would drag the
        floor down for good."""
        ahead = self.ahead_ns(t_us, received_ns)
        # Judged as the clock was when the line came: the read that ends the learning was
        # believed with the learning's leeway. Counted after it, that read's fall (a daemon
        # stalled through its first second: its floor tens of ms late) spent the margin at
        # once, and every fresher honest line after it was called impossible (hypothesis).
        learning = self.learning(received_ns)
        sample = received_ns - 1000 * t_us - _ageing_ns(t_us)
        recent = self._recent
        if recent and recent[-1][0] == received_ns:
            recent[-1] = (received_ns, min(recent[-1][1], sample))
        else:
            recent.append((received_ns, sample))
        if received_ns != self._read_ns:
            self._reads += 1
            self._read_ns = received_ns
        if self._floor is None or sample < self._floor:
            if not learning:
                self._spent_ns += ahead
            self._floor = sample
            self._floor_ns = received_ns

    def ahead_ns(self, t_us: int, received_ns: int) -> int:
        """How far t_us lies ahead of the latest time the board's clock can show at
        received_ns, as far as the lines observed tell (0: not ahead, or nothing known).
        The board's clock may run DRIFT_PPM fast, and the floor ages DRIFT_PPM up: an
        honest stamp can seem ahead by twice the drift since the floor's sample, and
        beyond that by as much as the floor's own latency."""
        if self._floor is None:
            return 0
        sample = received_ns - 1000 * t_us - _ageing_ns(t_us)
        # A line judged again after a later one set the floor: no drift to allow for.
        drift = 2 * max(0, received_ns - self._floor_ns) * DRIFT_PPM // 1_000_000
        return max(0, self._floor - sample - drift)

    def map(self, board_us: Sequence[int]) -> list[int]:
        """Daemon times (ns) of edges stamped board_us, by the lines observed so far.

        In stamp order, the mapping is monotonic (rule 2). A stamp before the last one
        mapped (a line that broke the board's promise of order) is mapped with the offset
        of the burst its stamp falls in, and moves nothing: it lands among the edges
        stamped around it, in the board's order.
        """
        if not self._recent:
            if board_us:
                raise ValueError("no line observed yet to map by")
            return []
        floor = min(sample for _, sample in self._recent)
        return [self._map_one(t_us, floor) for t_us in board_us]

    def _map_one(self, t_us: int, floor: int) -> int:
        last = self._last_us
        if last is not None and t_us < last:
            return self._late(t_us)
        gap = QUIET_US if last is None else t_us - last
        long_burst = t_us - self._burst_start_us >= MAX_BURST_US
        # Mapping lines at the floor after their arrival (rule 3's excess): not for long.
        fast = self._offset > floor + _ageing_ns(t_us)
        # Nor far before it, by a floor the last reads no longer bear out (rule 1).
        slow = self._offset < floor + _ageing_ns(t_us) - MARGIN_NS - CLOCK_MARGIN_NS
        if gap >= QUIET_US or ((long_burst or fast or slow) and gap >= REANCHOR_GAP_US):
            offset = floor + _ageing_ns(t_us) - MARGIN_NS
            if last is not None:
                # Keep the mapping strictly increasing across the re-anchoring.
                offset = max(offset, self._offset - 1000 * (t_us - last) + 1)
            self._offset = offset
            self._burst_start_us = t_us
            anchors = self._anchors
            anchors.append((t_us, offset))
            while len(anchors) > 1 and anchors[1][0] <= t_us - KEPT_ANCHORS_US:
                anchors.popleft()
        self._last_us = t_us
        return 1000 * t_us + self._offset

    def _late(self, t_us: int) -> int:
        """The time of a stamp before the last one mapped: by the offset of the burst it
        falls in, as its neighbours were, and before the next burst's first edge. With the
        current offset instead, a burst re-anchored later put the late line after edges
        stamped after it (hypothesis, seed 2861772104). A mapping that caught up with a
        falling floor keeps its bursts but a nanosecond apart: the late line then ties
        with the edges stamped before it, never passes the ones after."""
        anchors = self._anchors
        t_ns = 1000 * t_us + anchors[0][1]
        for start_us, offset in anchors:
            if start_us > t_us:
                return min(t_ns, 1000 * start_us + offset - 1)
            t_ns = 1000 * t_us + offset
        return t_ns
