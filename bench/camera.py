"""The camera's process at its frame rate: its share of a core, what the box loses to it in
memory, where that memory is, and the daemon's end.

    .venv/bin/python bench/camera.py [--seconds 30] [--snapshots] [--baseline REV] [--as-installed]

The real camera's process (referee/camera/watch.py, started by camera/process.py as the
daemon starts it, reading FRAMES_PER_S frames a second) on a folder, the fake camera. First
the camera off: this process alone, standing for the daemon's end (the reader thread and
the wire's parse; neither OpenCV nor numpy, which it never imports), its memory and the
files it maps the baseline. Then on, in phases
of --seconds each:

  still    the folder unchanged: the process looks for a new frame each time and finds
           none (a table nobody touches).
  moving   a new frame put in the folder five times a second, so that every frame the
           process reads is a new one it reads whole: rendered tables of 12 to 18 cards,
           1280 x 960 JPEGs, as a USB camera gives them (bench/vision.py's).
  loaded   moving, with a busy process on every core (bench/machine.py's Hogs).

With --snapshots the process keeps its frames for each call's snapshot (camera/snapshot.py)
and is asked for one every 3 s of the moving phases, written to a clips folder under
/var/tmp. With --baseline REV the phases run first with the camera's process of revision
REV (`git archive`), then with this tree's, in the same run. Before each, the libraries
under site-packages are dropped from the page cache (posix_fadvise), so that the process
loads them from the disk as after a boot; with --as-installed, they are written again
instead (the same bytes, as pip writes them), so that the page cache holds them as on a box
whose camera starts after `make install`.

What the box loses, for each phase (the camera's process's pages, /proc/PID/smaps, its
counters reset as the phase starts through /proc/PID/clear_refs):

  anonymous   its anonymous pages at their most (the heap, Python's objects, OpenCV's
              buffers, the libraries' relocated data): at most VmHWM less the fewest
              file pages it held over the phase (VmHWM is reset as the phase starts, so
              a frame's peak between two samples is counted); the highest Pss_Anon
              sampled every SAMPLE_S is printed beside, a floor.
  touched     the pages of files it read over the phase (Referenced, the anonymous pages
              of those mappings left out: they are counted above), of the files the
              camera-off box does not map (OpenCV's, numpy's, their bundled libraries,
              the model); the pages of those it shares with the daemon (libpython, libc)
              are printed beside, not added: the daemon keeps them with the camera off.
              Pages mapped and not read (loaded once, or mapped around a page read,
              fault-around) are not counted: the kernel takes them back when it needs
              them. A kernel that caches a file in large folios (Linux 6.16's ext4, and
              this machine's) keeps a folio whole for one page of it read, and counts
              it so; the share of its file pages in large folios is printed
              (/proc/kpageflags, as root), where the Pi's kernel caches ext4 a page at a
              time. A page is counted as read when any process that maps it reads it:
              `others` is how many other processes mapped its files under site-packages
              at the phase's end (this venv's OpenCV loaded elsewhere: `referee look`, a
              test, a benchmark), and should be 0; the system's libraries it maps that
              the daemon's end does not (libstdc++) are read by the machine's other
              programs too, and counted whole.
  daemon      what this process's anonymous memory grew with the camera on.

The camera on costs anonymous + touched + daemon, against the target (issue 32: at most
60 MB more); its resident pages (VmRSS: every page mapped, read or not) are printed too.
Then each mapping of the moving phase, by what it is: resident, anonymous, touched.
The exit status is 1 when the target is missed.
"""

import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import Hogs, header, load, store_dir  # noqa: E402

from referee.audio.clips import clip_name  # noqa: E402
from referee.camera.process import CameraProcess  # noqa: E402
from referee.inbox import Seen  # noqa: E402
from referee.units import NS_PER_S  # noqa: E402

MEMORY_MB = 60
SAMPLE_S = 0.5
WARM_S = 10.0
FEED_HZ = 5
POOL = 16  # frames rendered, put in the folder in turn
TICK_S = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL = 15, 16
PHASES = ("still", "moving", "loaded")
PLATLIB = sysconfig.get_paths()["platlib"]

RENDER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import cv2, numpy as np
from referee.vision.card import all_faces
from tools.vision.render import render_table
rng = np.random.default_rng(32)
deck = all_faces()
for i in range({POOL}):
    n = (12, 15, 18)[i % 3]
    faces = [deck[j] for j in rng.choice(81, n, replace=False)]
    table = render_table(faces, rng, size=(1280, 960))
    cv2.imwrite(f"{{sys.argv[1]}}/{{i:02d}}.jpg", table.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
"""

# A mapping's file, by what it is: the breakdown's rows.
KINDS = (
    ("cv2.", "OpenCV (cv2)"),
    ("libopenblas", "OpenCV's OpenBLAS"),
    ("libscipy_openblas", "numpy's OpenBLAS"),
    ("libav", "ffmpeg in OpenCV (libav*, libsw*)"),
    ("libsw", "ffmpeg in OpenCV (libav*, libsw*)"),
    ("libaom", "codecs in OpenCV (aom, dav1d, vpx, avif)"),
    ("libdav1d", "codecs in OpenCV (aom, dav1d, vpx, avif)"),
    ("libvpx", "codecs in OpenCV (aom, dav1d, vpx, avif)"),
    ("libavif", "codecs in OpenCV (aom, dav1d, vpx, avif)"),
    ("libgfortran", "libgfortran, libquadmath (OpenBLAS's)"),
    ("libquadmath", "libgfortran, libquadmath (OpenBLAS's)"),
    ("_multiarray_umath", "numpy's core"),
    ("libpython", "libpython"),
    ("cards.onnx", "the model"),
)


def kind(name: str) -> str:
    if not name:
        return "anonymous mappings (malloc's, Python's arenas)"
    if name.startswith("["):
        return name if name in ("[heap]", "[stack]") else "[vdso, vvar]"
    base = name.rsplit("/", 1)[-1]
    for key, label in KINDS:
        if base.startswith(key) or key in base:
            return label
    if "/numpy" in name:
        return "numpy's other modules"
    if "site-packages" in name or "dist-packages" in name:
        return "other Python packages' libraries"
    if re.search(r"python3[.\d]*$", base):
        return "the python executable"
    if base.startswith(("libc.", "libm.", "libstdc++", "libgcc_s", "ld-linux")):
        return "libc, libm, libstdc++"
    return "other system files"


def mappings(pid: int | str) -> list[dict]:
    """Each mapping of /proc/PID/smaps: its file ('' when anonymous), Rss, Anonymous and
    Referenced in kB."""
    out: list[dict] = []
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else ""
            out.append({"name": name, "start": start, "end": end})
        elif fields[0] in ("Rss:", "Anonymous:", "Referenced:") and out:
            out[-1][fields[0][:-1]] = int(fields[1])
    return out


def files_mapped(pid: int | str) -> set[str]:
    return {m["name"] for m in mappings(pid) if m["name"].startswith("/")}


def touched_kb(m: dict) -> int:
    """The file pages of a mapping read since its counters were cleared: Referenced, at
    most its pages that are not anonymous (those are counted as anonymous)."""
    if not m["name"].startswith("/"):
        return 0
    return min(m.get("Referenced", 0), m.get("Rss", 0) - m.get("Anonymous", 0))


def large_folio_share(pid: int, names: set[str]) -> float | None:
    """The share of the resident pages of these files' mappings that lie in large folios
    (/proc/kpageflags: root only); None where it cannot be read."""
    try:
        with (
            Path(f"/proc/{pid}/pagemap").open("rb") as pagemap,
            Path("/proc/kpageflags").open("rb") as kpf,
        ):
            pages = large = 0
            for m in mappings(pid):
                if m["name"] not in names:
                    continue
                pagemap.seek(m["start"] // (PAGE_KB * 1024) * 8)
                entries = pagemap.read((m["end"] - m["start"]) // (PAGE_KB * 1024) * 8)
                for (entry,) in struct.iter_unpack("<Q", entries):
                    pfn = entry & ((1 << 55) - 1)
                    if not entry >> 63 or not pfn:
                        continue
                    kpf.seek(pfn * 8)
                    (flags,) = struct.unpack("<Q", kpf.read(8))
                    pages += 1
                    large += bool(flags >> KPF_COMPOUND_HEAD & 1 or flags >> KPF_COMPOUND_TAIL & 1)
    except OSError:
        return None
    return large / pages if pages else 0.0


def others_mapping(names: set[str], pid: int) -> int:
    """How many other processes map any of these files now: a page one of them reads is
    counted as read in every process that maps it (its folio's referenced flag)."""
    others = 0
    for maps in Path("/proc").glob("[0-9]*/maps"):
        if maps.parent.name in (str(pid), str(os.getpid())):
            continue
        try:
            text = maps.read_text()
        except OSError:  # gone, or not ours to read
            continue
        others += any(name in text for name in names)
    return others


def status(pid: int | str) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon, RssFile in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile")}


def pss_anon(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss_Anon:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(path: str) -> float:
    """utime + stime of a process or a thread, in seconds."""
    fields = Path(path).read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK_S


def phase(
    camera: CameraProcess,
    seen: list[int],
    seconds: float,
    feed: list[Path],
    folder: Path,
    off_files: set[str],
    calls: bool = False,
) -> dict:
    assert camera.process is not None
    pid = camera.process.pid
    reader = next(t.native_id for t in threading.enumerate() if t.name == "camera")
    clear = Path(f"/proc/{pid}/clear_refs")
    clear.write_text("5")  # VmHWM from now
    clear.write_text("1")  # Referenced from now
    start_cpu, start_reader = cpu_s(f"/proc/{pid}/stat"), cpu_s(f"/proc/self/task/{reader}/stat")
    start_seen, started = seen[0], time.monotonic()
    fewest_file, most_pss_anon = status(pid)["RssFile"], pss_anon(pid)
    n = 0
    stop = threading.Event()
    while (left := started + seconds - time.monotonic()) > 0:
        if feed:
            # Written aside and renamed in: the camera's process never sees half a frame.
            aside = folder / ".next.part"
            shutil.copyfile(feed[n % len(feed)], aside)
            stamp = time.time_ns()
            os.utime(aside, ns=(stamp, stamp))
            aside.rename(folder / f"frame{n % 2}.jpg")
            if calls and n % (3 * FEED_HZ) == 0:  # a call every 3 s
                camera.snap(clip_name(1, (n + 1) * NS_PER_S), time.monotonic_ns())
            n += 1
        stop.wait(min(left, 1 / FEED_HZ if feed else SAMPLE_S))
        fewest_file = min(fewest_file, status(pid)["RssFile"])
        most_pss_anon = max(most_pss_anon, pss_anon(pid))
    took = time.monotonic() - started
    end = status(pid)
    maps = mappings(pid)
    own = {m["name"] for m in maps if m["name"].startswith("/")} - off_files
    groups: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for m in maps:
        g = groups[kind(m["name"])]
        g["rss"] += m.get("Rss", 0)
        g["anon"] += m.get("Anonymous", 0)
        g["touched"] += touched_kb(m)
    return {
        "frames/s": (seen[0] - start_seen) / took,
        "cpu": (cpu_s(f"/proc/{pid}/stat") - start_cpu) / took,
        "reader cpu": (cpu_s(f"/proc/self/task/{reader}/stat") - start_reader) / took,
        "anon most": end["VmHWM"] - min(fewest_file, end["RssFile"]),
        "pss_anon most": most_pss_anon,
        "touched own": sum(touched_kb(m) for m in maps if m["name"] in own) / 1024,
        "touched shared": sum(touched_kb(m) for m in maps if m["name"] in off_files) / 1024,
        "large folios": large_folio_share(pid, own),
        "others": others_mapping({n for n in own if n.startswith(PLATLIB)}, pid),
        "groups": groups,
        **end,
    }


def baseline_code(rev: str, work: Path) -> Path:
    """The code of revision rev in a directory of its own."""
    root = work / f"baseline-{rev}"
    root.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "referee"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root


def libraries() -> list[Path]:
    """The compiled libraries under this Python's site-packages: OpenCV's, numpy's, theirs."""
    found = Path(PLATLIB).rglob("*.so*")
    return [path for path in found if path.is_file() and not path.is_symlink()]


def evict_libraries() -> None:
    """The libraries dropped from the page cache, where no process maps them: the camera's
    process then loads them from the disk, as after a boot, whatever ran before (how the
    kernel caches them, a page or a large folio at a time, depends on how they were read)."""
    for path in libraries():
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def write_libraries() -> None:
    """The libraries written again, the same bytes, as pip writes them when it installs
    them (a copy renamed over each): the page cache then holds what was written, in large
    folios where the kernel caches a file's writes so (Linux 6.16's ext4), as on a box
    whose camera starts after `make install`."""
    for path in libraries():
        aside = path.with_name(path.name + ".bench")
        aside.write_bytes(path.read_bytes())
        shutil.copystat(path, aside)
        aside.replace(path)


def camera_on(
    code: Path | None, folder: Path, feed: list[Path], args: argparse.Namespace, off: set[str]
) -> tuple[dict[str, dict], dict[str, float], int]:
    """The phases with the camera's process of `code` (this tree's when None); and this
    process's memory before and after, and the snapshots written."""
    seen = [0]  # readings counted, not kept: the daemon keeps none
    got = threading.Event()

    def put(item: object) -> None:
        if isinstance(item, Seen):
            seen[0] += 1
            got.set()

    shutil.copyfile(feed[0], folder / "first.jpg")
    for old in folder.glob("frame*.jpg"):
        old.unlink()
    clips = store_dir()
    snapshots = (Path(clips.name), 200 * 2**20) if args.snapshots else None
    command = None
    if code is not None:  # the baseline's code first on the path
        command = ["env", f"PYTHONPATH={code}", sys.executable, "-P", "-m", "referee.camera.watch"]
        command.append(str(folder))
    if args.as_installed:
        write_libraries()
    else:
        evict_libraries()
    before = status("self")
    camera = CameraProcess(str(folder), put, snapshots=snapshots, command=command)  # type: ignore[arg-type]
    try:
        assert got.wait(60), "no reading from the camera's process"
        # Frames read before the phases: the pages the frames read are in again after the
        # process gave its libraries' back (watch.py), and each phase's counters see its
        # steady state, not their coming in.
        phase(camera, seen, WARM_S, feed, folder, off)
        results = {}
        for name in PHASES:
            with Hogs() if name == "loaded" else _Nothing():
                feeding = feed if name != "still" else []
                calls = args.snapshots and name != "still"
                results[name] = phase(camera, seen, args.seconds, feeding, folder, off, calls)
        after = status("self")
    finally:
        camera.close()
        written = len(list(Path(clips.name).glob("*.jpg")))
        clips.cleanup()
    grown = {"before": before["RssAnon"], "after": after["RssAnon"]}
    return results, grown, written


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def report(title: str, results: dict[str, dict], grown: dict[str, float]) -> float:
    """The phases' lines; the camera's cost at its most (MB)."""
    print(title)
    print(
        f"  {'phase':<8}{'frames/s':>9}{'CPU':>8}{'reader':>8}{'VmRSS':>8}{'VmHWM':>8}"
        f"{'anonymous':>11}{'(Pss_Anon)':>11}{'touched':>9}{'(shared)':>10}{'large folios':>14}"
        f"{'others':>8}"
    )
    for name, r in results.items():
        share = "unknown" if r["large folios"] is None else f"{r['large folios'] * 100:.0f} %"
        print(
            f"  {name:<8}{r['frames/s']:>9.2f}{r['cpu'] * 100:>7.1f}%{r['reader cpu'] * 100:>7.2f}%"
            f"{r['VmRSS']:>8.1f}{r['VmHWM']:>8.1f}{r['anon most']:>11.1f}"
            f"{r['pss_anon most']:>11.1f}{r['touched own']:>9.1f}{r['touched shared']:>10.1f}"
            f"{share:>14}{r['others']:>8}"
        )
    daemon = max(0.0, grown["after"] - grown["before"])
    print(
        f"  the daemon's end: RssAnon {grown['before']:.1f} -> {grown['after']:.1f} MB"
        f" ({grown['after'] - grown['before']:+.1f})"
    )
    costs = {n: r["anon most"] + r["touched own"] + daemon for n, r in results.items()}
    shared = max(c + results[n]["touched shared"] for n, c in costs.items())
    print(
        "  the camera on costs (anonymous at most + touched + the daemon's growth): "
        + ", ".join(f"{n} {c:.1f} MB" for n, c in costs.items())
        + f"; with the shared files' pages it read too: {shared:.1f} MB at most"
    )
    return max(costs.values())


def breakdown(results: dict[str, dict]) -> None:
    groups = results["moving"]["groups"]
    print("  the moving phase's mappings (MB): resident, anonymous, file pages touched")
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["rss"]):
        if g["rss"] < 100:
            continue
        print(
            f"    {name:<46}{g['rss'] / 1024:7.1f}{g['anon'] / 1024:7.1f}{g['touched'] / 1024:7.1f}"
        )
    total = collections.Counter()
    for g in groups.values():
        total.update(g)
    row = f"{total['rss'] / 1024:7.1f}{total['anon'] / 1024:7.1f}{total['touched'] / 1024:7.1f}"
    print(f"    {'all':<46}{row}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="each phase's length")
    parser.add_argument("--snapshots", action="store_true", help="each call's snapshot on")
    parser.add_argument("--baseline", metavar="REV", help="the camera's process of REV first")
    parser.add_argument(
        "--as-installed",
        action="store_true",
        help="the libraries written again before each run (as pip writes them), not evicted",
    )
    args = parser.parse_args()
    header("bench/camera.py: the camera's process at its frame rate (issue 32)")
    # Asked of a Python of its own: watch.py imports OpenCV and numpy, which the daemon's
    # end, this process, must not map (its files are the camera-off baseline's).
    ask = "from referee.camera import watch as w; print(w.FRAMES_PER_S, w.NICE)"
    said = subprocess.run(
        [sys.executable, "-c", ask], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    print(f"{said[0]} frames a second at most; nice {said[1]}; OpenCV on one thread")
    print(f"snapshots: {'on, a call every 3 s' if args.snapshots else 'off'}")
    how = "written again (as pip installs them)" if args.as_installed else "read from the disk"
    print(f"the libraries before each run: {how}")
    runs = []
    with tempfile.TemporaryDirectory(prefix="referee-camera-") as tmp:
        pool, folder = Path(tmp, "pool"), Path(tmp, "frames")
        pool.mkdir()
        folder.mkdir()
        subprocess.run([sys.executable, "-c", RENDER, str(pool)], check=True)
        feed = sorted(pool.glob("*.jpg"))
        off = status("self")
        off_files = files_mapped("self")
        print(
            f"the camera off (this process, the daemon's end): VmRSS {off['VmRSS']:.1f} MB,"
            f" RssAnon {off['RssAnon']:.1f} MB, {len(off_files)} files mapped"
        )
        if args.baseline:
            code = baseline_code(args.baseline, Path(tmp))
            run = camera_on(code, folder, feed, args, off_files)
            runs.append((f"{args.baseline} (baseline)", *run))
        runs.append(("this tree", *camera_on(None, folder, feed, args, off_files)))
    print(f"at end: {load()}")
    print()
    cost = 0.0
    for title, results, grown, written in runs:
        cost = report(f"the camera's process of {title}:", results, grown)
        if args.snapshots:
            print(f"  snapshots written: {written}")
        breakdown(results)
        print()
    verdict = "met" if cost <= MEMORY_MB else "MISSED"
    print(f"target: the camera on at most {MEMORY_MB} MB more: {cost:.1f} MB, {verdict}")
    return 0 if cost <= MEMORY_MB else 1


if __name__ == "__main__":
    sys.exit(main())
