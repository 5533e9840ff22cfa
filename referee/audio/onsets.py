"""Voice onsets ("Set!" shouts) in a mono recording, to the sample, with numpy alone.

    find_onsets(signal, sample_rate) -> [Onset(t, sample, strength_db, band, soft), ...]

How (docs/design.md, "Voice onsets", says why):

1. Band levels. Frames of 8 ms every 1 ms, Hann-windowed, FFT; the power in each band of
   BANDS, as dBFS (a full-scale sine is -3 dB), never below QUIETEST_DB:
   - sibilant, 5-10 kHz: the /s/ of "Set". A broadband detector waits for the vowel,
     tens of ms late at 10 dB SNR; the vowels' formants fill 2-5 kHz as loud as the /s/,
     above 5 kHz they are 15-30 dB under it, so a second shout's /s/ shows over the first
     shout's vowel.
   - voiced, 150-1000 Hz: a voiced start (German "Set" is /z/, with little hiss).
   - low, 100-300 Hz, over frames of 16 ms ending where the others end: a real voice's
     low harmonics, where many are first heard over others' talk (the voicing before a
     /b/ or /d/, a low voice under another's vowel).
2. Floor: each band's median level over the last 0.5 s (the first 100 ms of a recording
   are taken as its noise). Recent: its mean level 10-30 ms ago.
3. A frame is active when a band's mean level over the next `hold_s` rises its threshold
   over its reference: the floor; within an onset's sound (until 0.1 s of quiet ends it),
   the recent level where that is higher, so a sound already going on must be outdone.
   Within a sound, each band's rise must outdo the sound's recent level by its threshold:
   a shout's own vowel after its /s/ is not a new shout, another shout's /s/ over it is,
   and so is another voice's start that lifts the voiced band 10 dB over the first's.
   Over the floor, a band with a sustained threshold is also active where its mean level
   over each half of the next `sustained_s` rises that lower threshold, and over the
   hold as well: a quiet start that lasts (a /z/ under pink noise), unless a loud start
   follows within `loud_first_s`, which is then taken (its timing is sharper).
4. An onset is the first active frame at least `refractory_s` after the last onset.
5. Refined to the sample: in each band active at the trigger, the band-passed signal's
   power over the 30 ms before the frame and the 10 ms after it is split in two where
   two constant levels fit it best (maximum likelihood); the earliest split is the onset.
6. Soft: an onset that rose less than SURE_DB over its reference, or started over
   another sound, or rose in the low band alone, is marked soft. On real voices in real
   room noise such an onset may be the noise, or tens of ms off (docs/rules.md, "Replay",
   says what the screen shows).

A recording of any length is taken a piece at a time by OnsetFinder (`referee listen`):
the levels look back 0.6 s at most and ahead 0.2 s, so it decides BLOCK_SAMPLES at a time
from those and that much around them, carrying what the frames before left (the
last onset, the last silence), in the memory of a block whatever the recording's length.
Its onsets are find_onsets' on the whole (tests/test_onsets.py).

A signal that is empty or shorter than a frame has no onsets. One that is not one-
dimensional, or holds NaN or infinity, raises ValueError, as does a sample rate <= 0.
"""

import math
from dataclasses import dataclass

import numpy as np

# numpy loads numpy.fft at its first use: here, with this module. The clips' cutter is
# forked once this module is loaded (referee/audio/early.py): loaded before, numpy.fft is
# shared with the daemon; loaded in the cutter, it would be the cutter's alone, and its
# import would copy pages they share.
import numpy.fft

QUIETEST_DB = -90.0  # dBFS: under 16-bit's own floor, a rise from here is not a sound
# Frames transformed at once: bounded memory for an hour's file, and 0.7 MB at most for
# a 3 s clip at 48 kHz in the clips' cutter (18 MB at once, 6 MB in 512s, 1.2 in 128s;
# bench/memory.py, the microphone), at the same CPU (22 ms here; 32 frames: 27 ms).
CHUNK_FRAMES = 64


@dataclass(frozen=True)
class Band:
    name: str
    low_hz: float
    high_hz: float
    starts_over_sound: bool  # may start an onset while another sound goes on
    # The rise over the reference that is a sound: noise's level in a frame wanders by
    # about 4.3 dB / sqrt(the band's width x the frame's length), so a narrow band needs more.
    threshold_db: float
    # The rise that is a sound when it lasts (Settings.sustained_s), or None: averaged over
    # 15 frames, not 4, noise wanders far less, so a quiet start shows.
    sustained_db: float | None = None
    # Its own frame, longer than Settings.frame_s, ending where those end; or None. A band of
    # a few of the short frame's bins has a level that wanders too far.
    frame_s: float | None = None
    # Whether an onset that rose in this band alone may be sharp; if not, it is soft.
    sure: bool = True


SIBILANT = Band("sibilant", 5000.0, 10000.0, starts_over_sound=True, threshold_db=6.0)
# A voiced /z/ under pink noise at 10 dB SNR lifts this band by 5-7 dB; noise alone (white
# or pink) starts false onsets from a sustained threshold of 3 dB down. Over a sound: a
# second real voice that starts with no /s/ (or whose /s/ a 16 kHz recording cuts) shows
# here only; pairs of recorded people went from 3-5 to 5-8 of 24 (bench/onsets.py).
VOICED = Band("voiced", 150.0, 1000.0, starts_over_sound=True, threshold_db=10.0, sustained_db=4.5)
# A voice's low harmonics: the voicing before a /b/ or /d/, a low voice's start under
# another's vowel. Of the 384 recorded voices of the benchmark's pairs, 67 are first heard
# over the rest of their clip in 100-300 Hz alone (tests/voices.py, "heard"). 8 ms frames
# give it two bins, whose level wandered so that pink noise alone started 7 onsets a
# minute; 16 ms give it four. At 10 dB, 2 of 240 shouts' clips had a false onset before
# the shout, at 11 dB 1, for one held-out pair less found of 288. A rise here alone may be
# a rumble (a chair, the table knocked) as well as a voice: never sharp (with it sharp,
# 3 of the tuned clips' 10 sharp onsets were within 20 ms of a voice; without it, 3 of 6).
LOW = Band(
    "low", 100.0, 300.0, starts_over_sound=True, threshold_db=11.0, frame_s=0.016, sure=False
)
BROADBAND = Band("broadband", 0.0, math.inf, starts_over_sound=True, threshold_db=6.0)


@dataclass(frozen=True)
class Settings:
    bands: tuple[Band, ...] = (SIBILANT, VOICED, LOW)
    frame_s: float = 0.008
    hop_s: float = 0.001
    floor_s: float = 0.5
    floor_step_s: float = 0.01  # the floor moves this often: a median a frame costs 10x
    first_noise_s: float = 0.1
    recent_s: tuple[float, float] = (0.03, 0.01)  # from, to: before the frame
    hold_s: float = 0.004
    sustained_s: float = 0.03  # both halves of it must rise a band's sustained_db
    loud_first_s: float = 0.01  # a loud start this soon after a quiet one is taken instead
    refractory_s: float = 0.05
    silence_s: float = 0.1
    refine_before_s: float = 0.03
    refine_after_s: float = 0.01
    refine_edge_s: float = 0.002  # the least of each level a split may leave


DEFAULT = Settings()
# An onset this far over its reference, from no other sound, is a sharp start; under it, or
# over another sound, a soft one: espeak-ng's shouts at 20 dB rise 20-40 dB, a quiet
# voiced start 4.5-10 dB, and a second voice over a first's vowel a few dB.
SURE_DB = 12.0


@dataclass(frozen=True)
class Onset:
    t: float  # seconds from the signal's first sample
    sample: int
    strength_db: float  # its band's mean rise over its reference over the hold
    band: str
    soft: bool = False  # a weak rise, or one over another sound: its place is less sure


def find_onsets(
    signal: np.ndarray, sample_rate: float, settings: Settings = DEFAULT
) -> list[Onset]:
    """The voice onsets in a mono signal (floats, full scale +-1; or 16-bit samples, full
    scale 32768), sorted by time."""
    x, scale = _checked(signal, sample_rate)
    scan = _Scan(sample_rate, settings)
    if len(x) < scan.frame or not scan.works:
        return []
    count = (len(x) - scan.frame) // scan.hop + 1
    return scan.onsets(x, scale, 0, 0, count, count, _Since())


# Samples OnsetFinder decides on at a time (and their margins, 0.8 s more): 10 s at
# 48 kHz, 4 MB of floats; at least a block's margins at the highest rates.
BLOCK_SAMPLES = 480_000


class OnsetFinder:
    """find_onsets over a recording given a piece at a time (floats at full scale +-1),
    in the memory of a block of BLOCK_SAMPLES and its margins whatever its length: `feed`
    each piece, then `end`; each returns the onsets it decided, in order."""

    def __init__(
        self, sample_rate: float, settings: Settings = DEFAULT, block_frames: int | None = None
    ) -> None:
        _checked(np.zeros(0), sample_rate)
        self._scan = scan = _Scan(sample_rate, settings)
        least = scan.before + scan.first  # a block's margin, and the first noise
        if block_frames is None:
            block_frames = max(least, BLOCK_SAMPLES // scan.hop)
        if block_frames < least:
            raise ValueError(f"a block of {block_frames} frames is shorter than its margin")
        self._block = block_frames
        self._x = np.zeros(0)
        self._x0 = 0  # the recording's sample that self._x begins with
        self._decided = 0  # the frames decided (from the first)
        self._since = _Since()

    def feed(self, piece: np.ndarray) -> list[Onset]:
        x, _ = _checked(np.asarray(piece, dtype=np.float64), 1.0)
        self._x = np.concatenate((self._x, x))
        scan, found = self._scan, []
        while scan.works:
            a, b = self._decided, self._decided + self._block
            needed = (b + scan.after - 1) * scan.hop + scan.frame  # a sample past the last
            if self._x0 + len(self._x) < needed:
                break
            start = max(0, a - scan.before)
            x = self._x[start * scan.hop - self._x0 : needed - self._x0]
            found += scan.onsets(x, 1.0, start, a, b, None, self._since)
            self._decided = b
            # What the next block looks back to is kept, the rest let go (a copy: a view
            # would keep the whole buffer).
            keep = (b - scan.before) * scan.hop
            self._x, self._x0 = self._x[keep - self._x0 :].copy(), keep
        return found

    def end(self) -> list[Onset]:
        """The onsets of the frames not decided yet, once the recording has ended."""
        scan = self._scan
        samples = self._x0 + len(self._x)
        if samples < scan.frame or not scan.works:
            return []
        count = (samples - scan.frame) // scan.hop + 1
        if count <= self._decided:
            return []
        start = max(0, self._decided - scan.before)
        x = self._x[start * scan.hop - self._x0 :]
        return scan.onsets(x, 1.0, start, self._decided, count, count, self._since)


@dataclass
class _Since:
    """What the frames decided so far leave the next ones."""

    last: int | None = None  # the frame of the last trigger
    ended: int | None = None  # the last frame where quiet ended a sound
    sample: int | None = None  # the last onset's sample


class _Scan:
    """The detector at one rate: frames, bands, and how far its levels look around."""

    def __init__(self, sample_rate: float, settings: Settings) -> None:
        self.rate, self.settings = sample_rate, settings
        self.frame = round(settings.frame_s * sample_rate)
        self.hop = max(1, round(settings.hop_s * sample_rate))
        # A rate so low that a frame is no sample has no band (rfftfreq of 0 divides by 0).
        self.bands = [
            b
            for b in settings.bands
            if self.frame and _bins(b, _frame_of(b, self.frame, sample_rate), sample_rate).any()
        ]
        # Frames a band's longer frame reaches back before the short one's.
        longest = max((_frame_of(b, self.frame, sample_rate) for b in self.bands), default=0)
        reach = math.ceil(max(0, longest - self.frame) / self.hop)
        self.works = self.frame >= 2 and bool(self.bands)
        floor, silence, recent, sustained, loud, hold = (
            math.ceil(seconds / settings.hop_s)
            for seconds in (
                settings.floor_s + settings.floor_step_s,
                settings.silence_s,
                settings.recent_s[0],
                settings.sustained_s,
                settings.loud_first_s,
                settings.hold_s,
            )
        )
        # The refinement's piece is in samples, a hop a frame rounded from hop_s.
        refine_before, refine_after = (
            math.ceil(seconds * sample_rate / self.hop)
            for seconds in (settings.refine_before_s, settings.refine_after_s)
        )
        # Frames of levels a block needs before its first and after its last: the floor
        # (its median over the last floor_s), the recent level, the quiet that ended a
        # sound and the refinement look back; the holds, the quiet up to silence_s after
        # a trigger and the refinement look ahead.
        # A longer frame's reach too: where it begins before a block, the first whole one's
        # level stands in, in frames that no decided one looks back to.
        self.before = floor + silence + recent + refine_before + reach + 2
        self.after = silence + sustained + loud + hold + refine_after + 2
        self.first = math.ceil(settings.first_noise_s / settings.hop_s)

    def onsets(
        self,
        x: np.ndarray,
        scale: float,
        start: int,
        a: int,
        b: int,
        total: int | None,
        since: _Since,
    ) -> list[Onset]:
        """The onsets that trigger in frames a to b, x the samples of frames from `start`
        on (those before a and after b are the margins; total: the recording's frames,
        None if it goes on past x); since is carried on to the next block."""
        frame, hop, rate = self.frame, self.hop, self.rate
        levels = band_levels(x, rate, frame, hop, self.bands, scale)
        onsets: list[Onset] = []
        for index, strength, active, over_sound in _triggers(
            levels, self.bands, self.settings, start, a, b, total, since
        ):
            active_bands = [self.bands[i] for i in active]
            begin = (index - start) * hop + frame
            at = _refined(x, scale, rate, begin, active_bands, self.settings) + start * hop
            if since.sample is not None and at <= since.sample:
                at = index * hop + frame // 2  # the refinement went back past the last one
            unsure = not any(b.sure for b in active_bands)
            soft = over_sound or strength < SURE_DB or unsure
            onsets.append(Onset(at / rate, at, strength, self.bands[active[0]].name, soft))
            since.sample = at
        return onsets


def _checked(signal: np.ndarray, sample_rate: float) -> tuple[np.ndarray, float]:
    """The signal, and what its values are multiplied by to be at full scale +-1.

    16-bit samples stay as they are, each piece of them made floats and scaled only
    when it is used: 1.2 MB less at once for a 3 s clip in the clips' cutter (its memory
    is the microphone's cost). The result is the same to the bit: the scale is a power
    of two, which no rounding of a product or a sum sees."""
    if not sample_rate > 0 or not math.isfinite(sample_rate):
        raise ValueError(f"the sample rate must be a positive number, not {sample_rate}")
    if isinstance(signal, np.ndarray) and signal.dtype == np.int16:
        x, scale = signal, 2.0**-15
    else:
        x, scale = np.asarray(signal, dtype=np.float64), 1.0
        if x.ndim == 1 and not np.isfinite(x).all():
            raise ValueError("the signal holds NaN or infinity")
    if x.ndim != 1:
        raise ValueError(f"a mono signal has one dimension, this one has {x.ndim}")
    return x, scale


def _frame_of(band: Band, frame: int, sample_rate: float) -> int:
    """The samples of a band's frame: its own where it has one, and never under frame."""
    return frame if band.frame_s is None else max(frame, round(band.frame_s * sample_rate))


def _bins(band: Band, frame: int, sample_rate: float) -> np.ndarray:
    hz = np.fft.rfftfreq(frame, 1 / sample_rate)
    return (hz >= band.low_hz) & (hz <= band.high_hz)


def band_levels(
    x: np.ndarray,
    sample_rate: float,
    frame: int,
    hop: int,
    bands: list[Band],
    scale: float = 1.0,
) -> np.ndarray:
    """Each band's level in each frame, dBFS: shape (bands, frames); x times scale is at
    full scale +-1. A band with a frame of its own is measured over it, ending where the
    frames end; where it would begin before x, x's first whole one's level stands in."""
    count = (len(x) - frame) // hop + 1
    levels = np.empty((len(bands), count))
    lengths = [_frame_of(b, frame, sample_rate) for b in bands]
    for length in sorted(set(lengths)):
        rows = [i for i, n in enumerate(lengths) if n == length]
        # The first frame whose longer one is whole (x shorter than one: the last, with
        # zeros before x's start).
        first = min(math.ceil((length - frame) / hop), count - 1)
        begin = first * hop + frame - length
        piece = x[max(0, begin) :]
        if begin < 0:
            piece = np.concatenate((np.zeros(-begin, dtype=x.dtype), piece))
        # The same memory a chunk of frames whatever their length.
        chunk = max(1, CHUNK_FRAMES * frame // length)
        picked = [bands[i] for i in rows]
        measured = _levels(piece, sample_rate, length, hop, picked, scale, chunk)
        levels[rows, first:] = measured[:, : count - first]
        levels[rows, :first] = measured[:, :1]
    return levels


def _levels(
    x: np.ndarray,
    sample_rate: float,
    frame: int,
    hop: int,
    bands: list[Band],
    scale: float,
    chunk: int,
) -> np.ndarray:
    """band_levels of frames of one length from x's first sample on, chunk at a time."""
    window = np.hanning(frame) * scale
    # sum |X|^2 over a band, so scaled, is the band's mean square (Parseval, one-sided).
    to_power = 2.0 / (frame * np.sum(np.hanning(frame) ** 2))
    masks = np.array([_bins(b, frame, sample_rate) for b in bands], dtype=np.float64)
    frames = np.lib.stride_tricks.sliding_window_view(x, frame)[::hop]
    power = np.empty((len(bands), len(frames)))
    for at in range(0, len(frames), chunk):
        spectra = np.fft.rfft(frames[at : at + chunk] * window, axis=1)
        power[:, at : at + chunk] = masks @ (np.abs(spectra) ** 2).T * to_power
    levels: np.ndarray = np.maximum(10 * np.log10(np.maximum(power, 1e-30)), QUIETEST_DB)
    return levels


def _triggers(
    levels: np.ndarray,
    bands: list[Band],
    settings: Settings,
    start: int = 0,
    a: int = 0,
    b: int | None = None,
    total: int | None = None,
    since: _Since | None = None,
) -> list[tuple[int, float, list[int], bool]]:
    """(frame, strength dB, the bands active in it, whether it started over another
    sound) where each onset triggers, among the frames from a to b (all, by default);
    levels' first column is frame `start`'s."""
    since = since or _Since()
    b = start + levels.shape[1] if b is None else b
    hop_s = settings.hop_s
    floor = _floor(levels, settings, start, total)
    threshold = np.array([[b.threshold_db] for b in bands])
    back, until = (round(s / hop_s) for s in settings.recent_s)
    recent = _recent(levels, back, until)
    recent = np.where(np.isnan(recent), floor, recent)
    # A sound ends after silence_s of quiet: not in a stop's closure, nor in the frames
    # after an onset that the recent level has not reached yet.
    quiet = (recent - floor < threshold).all(axis=0)
    silence = max(1, round(settings.silence_s / hop_s))
    ended = np.flatnonzero(_means(quiet[None, ::-1].astype(np.float64), silence)[0, ::-1] == 1)
    ended = ended[ended >= a - start] + start  # those before a: the blocks before's
    over_floor = levels - floor
    over_sound = np.where(
        np.array([[b.starts_over_sound] for b in bands]),
        levels - np.maximum(floor, recent),
        -np.inf,
    )
    hold = max(1, round(settings.hold_s / hop_s))
    refractory = round(settings.refractory_s / hop_s)
    count = levels.shape[1] - hold + 1
    # The mean rise over the hold from each frame: one frame's fluctuation is not a sound.
    mean_floor = _means(over_floor, hold)[:, :count]
    mean_sound = _means(over_sound, hold)[:, :count]
    held_floor = _held(over_floor, mean_floor, threshold, bands, settings)
    held_sound = mean_sound >= threshold
    triggers: list[tuple[int, float, list[int], bool]] = []
    active = np.asarray((held_floor | held_sound).any(axis=0))[a - start : b - start]
    for frame in np.flatnonzero(active) + a:
        if since.last is not None and frame - since.last < refractory:
            continue
        # Still in the last onset's sound while no silence_s of quiet came between it
        # and this frame (or this frame and silence_s after the last onset).
        in_sound = False
        if since.last is not None:
            lo, hi = sorted((int(frame), since.last + silence))
            quiet_between = np.searchsorted(ended, hi, side="right") > np.searchsorted(
                ended, lo, side="right"
            )
            in_sound = not quiet_between and not (since.ended is not None and since.ended > lo)
        rise, held = (mean_sound, held_sound) if in_sound else (mean_floor, held_floor)
        which = [int(i) for i in np.flatnonzero(held[:, frame - start])]
        if which:
            strength = float(rise[which, frame - start].max())
            triggers.append((int(frame), strength, which, bool(in_sound)))
            since.last = int(frame)
    decided = ended[ended < b]
    if len(decided):
        since.ended = int(decided[-1])
    return triggers


def _held(
    rise: np.ndarray, mean: np.ndarray, threshold: np.ndarray, bands: list[Band], settings: Settings
) -> np.ndarray:
    """Where a sound starts over the floor: the mean rise over the hold reaches the band's
    threshold (loud), or it and the mean rise over each half of sustained_s reach the
    band's sustained_db (quiet), with no loud start within loud_first_s."""
    loud: np.ndarray = mean >= threshold
    sustained = np.array([[np.inf if b.sustained_db is None else b.sustained_db] for b in bands])
    if not np.isfinite(sustained).any():
        return loud
    count = mean.shape[1]
    half = max(1, round(settings.sustained_s / settings.hop_s / 2))
    # A rise counts here up to the loud threshold: a click's few frames, tens of dB up,
    # would otherwise lift both halves' means from up to 20 ms before it (a white-noise
    # click was placed 16 ms early so), and a loud sound is the loud test's to take.
    first = _means(np.minimum(rise, threshold), half)
    # Each half on its own: a loud sound late in sustained_s would lift a single mean over
    # the low threshold for the noise before it, placing the onset tens of ms early.
    second = np.full_like(first, -np.inf)
    second[:, :-half] = first[:, half:]
    quiet: np.ndarray = (first >= sustained) & (second >= sustained)
    quiet = quiet[:, :count] & (mean >= sustained)
    soon = max(1, round(settings.loud_first_s / settings.hop_s))
    any_loud = np.asarray(loud.any(axis=0), dtype=np.float64)
    loud_soon = _means(any_loud[None], soon)[0] > 0
    held: np.ndarray = loud | (quiet & ~loud_soon)
    return held


def _means(values: np.ndarray, width: int) -> np.ndarray:
    """The mean of each row over `width` values from each column on (fewer at the end)."""
    total = np.concatenate((np.zeros((values.shape[0], 1)), np.cumsum(values, axis=1)), axis=1)
    index = np.arange(values.shape[1])
    stop = np.minimum(index + width, values.shape[1])
    with np.errstate(invalid="ignore"):
        means: np.ndarray = (total[:, stop] - total[:, index]) / (stop - index)
    return means


def _floor(
    levels: np.ndarray, settings: Settings, start: int = 0, total: int | None = None
) -> np.ndarray:
    """Each band's running median over the last floor_s, moved every floor_step_s, from
    the recording's first frame: levels' first column is frame `start`'s, of `total`
    (None: no fewer than levels hold). A column whose floor_s begins before `start` takes
    the levels there are: a block's margin, which is never decided on."""
    count = levels.shape[1]
    total = start + count if total is None else total
    span = max(1, round(settings.floor_s / settings.hop_s))
    step = max(1, round(settings.floor_step_s / settings.hop_s))
    first = max(1, round(settings.first_noise_s / settings.hop_s))
    floor = np.empty_like(levels)
    for at in range(start - start % step, start + count, step):
        lo = max(0, at - span, start)
        hi = max(at, min(first, total), lo + 1)
        history = levels[:, lo - start : hi - start]
        floor[:, max(at, start) - start : at + step - start] = _medians(history)
    return floor


def _medians(values: np.ndarray) -> np.ndarray:
    """Each row's median, as a column: np.median(values, axis=1, keepdims=True) to the
    bit, without its check for masked arrays, which imports numpy.ma (1.3 MB in the clips'
    cutter, for a kind of array never given here)."""
    half = values.shape[1] // 2
    if values.shape[1] % 2:
        return np.partition(values, half, axis=1)[:, half : half + 1]
    middle = np.partition(values, (half - 1, half), axis=1)[:, half - 1 : half + 1]
    medians: np.ndarray = middle.mean(axis=1, keepdims=True)
    return medians


def _recent(levels: np.ndarray, back: int, until: int) -> np.ndarray:
    """Each band's mean level over the frames from `back` to `until` before each frame;
    NaN where there are none yet."""
    total = np.concatenate((np.zeros((levels.shape[0], 1)), np.cumsum(levels, axis=1)), axis=1)
    index = np.arange(levels.shape[1])
    lo = np.maximum(index - back, 0)
    hi = np.maximum(index - until, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means: np.ndarray = (total[:, hi] - total[:, lo]) / (hi - lo)
    return means


def _refined(
    x: np.ndarray,
    scale: float,
    sample_rate: float,
    frame_end: int,
    bands: list[Band],
    settings: Settings,
) -> int:
    """The sample where the onset that triggered in the frame ending at frame_end starts:
    the earliest best split of its active bands' power into two levels."""
    begin = max(0, frame_end - round(settings.refine_before_s * sample_rate))
    end = min(len(x), frame_end + round(settings.refine_after_s * sample_rate))
    edge = max(1, round(settings.refine_edge_s * sample_rate))
    if end - begin < 2 * edge + 1:
        return begin
    piece = x[begin:end] * scale  # floats, at full scale +-1
    return min(_split(_band_passed(piece, sample_rate, b), edge) + begin for b in bands)


def _band_passed(piece: np.ndarray, sample_rate: float, band: Band) -> np.ndarray:
    """The piece through the band: its edges tapered over 500 Hz (a brick wall rings for
    milliseconds), a low edge under 500 Hz a first-order high-pass instead (a taper would
    reach down to 0 Hz and keep pink noise's loudest part, under the band: at 10 dB SNR it
    moved a /z/'s split by tens of ms). Minimum phase, so causal: a zero-phase filter rings
    as long before a click as after it, and the split took that ringing's start for the
    onset (a lone click in white noise placed 1-3 ms early). Zero-padded to twice the
    piece, so its end does not wrap round onto its start."""
    size = 1 << (2 * len(piece) - 1).bit_length()
    hz = np.fft.rfftfreq(size, 1 / sample_rate)
    taper = 500.0
    gain = np.sqrt(np.clip((band.high_hz + taper - hz) / taper, 0, 1))
    if band.low_hz >= taper:
        gain *= np.sqrt(np.clip((hz - band.low_hz + taper) / taper, 0, 1))
    elif band.low_hz > 0:
        gain *= hz / np.hypot(band.low_hz, hz)
    passed = np.fft.irfft(np.fft.rfft(piece, size) * _minimum_phase(gain), size)
    return passed[: len(piece)]


def _minimum_phase(gain: np.ndarray) -> np.ndarray:
    """The causal filter of least delay with this gain (one-sided, as rfft gives): the
    real cepstrum folded onto positive time. The stop band is held at -100 dB, where the
    logarithm of 0 would be."""
    size = 2 * (len(gain) - 1)
    cepstrum = np.fft.irfft(np.log(np.maximum(gain, 1e-5)), size)
    cepstrum[1 : size // 2] *= 2
    cepstrum[size // 2 + 1 :] = 0
    response: np.ndarray = np.exp(np.fft.rfft(cepstrum, size))
    return response


def _split(y: np.ndarray, edge: int) -> int:
    """Where y's power rises: the k at which y[:k] and y[k:] as two zero-mean Gaussian
    levels are likeliest."""
    total = np.concatenate(([0.0], np.cumsum(y**2)))
    k = np.arange(edge, len(y) - edge + 1)
    tiny = 1e-30
    before = np.maximum(total[k] / k, tiny)
    after = np.maximum((total[-1] - total[k]) / (len(y) - k), tiny)
    likelihood = -k * np.log(before) - (len(y) - k) * np.log(after)
    likelihood[after <= before] = -np.inf  # an onset is where the power rises
    return int(k[np.argmax(likelihood)])
