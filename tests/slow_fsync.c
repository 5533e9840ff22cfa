/* A slow disk for the ledger, at the OS level: an LD_PRELOAD shim over fdatasync(2) and
 * fsync(2) (SQLite on Linux syncs with fdatasync). Only files under SLOW_FSYNC_DIR are
 * touched; every other sync is the real one, untouched. Built and driven by
 * tests/slow_fsync.py, which says what each variable means.
 *
 *   SLOW_FSYNC_DIR     the directory whose files' syncs are slowed or held
 *   SLOW_FSYNC_SPREAD  "seed:min_ms:max_ms:stall_ms:stall_every": after the real sync, wait
 *                      uniform min..max ms, or stall_ms once in stall_every syncs (seeded)
 *   SLOW_FSYNC_LOG     a file that gets one line a slowed sync: "<ms waited> <path>"
 *   SLOW_FSYNC_TOLD    a FIFO told "held <path>" when a sync reaches the gate, and
 *                      "synced <path> <size>" when it has returned, the file's size then
 *   SLOW_FSYNC_GATE    a FIFO: each sync first reads one byte from it (held until then)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[4096];
static size_t dir_len;
static int spread, log_fd = -1, told_fd = -1, gate_fd = -1;
static uint64_t rng;
static long min_ms, max_ms, stall_ms, stall_every;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int open_env(const char *name, int flags) {
    const char *path = getenv(name);
    return path && *path ? open(path, flags | O_CLOEXEC, 0600) : -1;
}

__attribute__((constructor)) static void setup(void) {
    const char *d = getenv("SLOW_FSYNC_DIR");
    if (!d || !*d || strlen(d) >= sizeof dir)
        return;
    strcpy(dir, d);
    dir_len = strlen(dir);
    unsigned long long seed;
    const char *s = getenv("SLOW_FSYNC_SPREAD");
    if (s && sscanf(s, "%llu:%ld:%ld:%ld:%ld", &seed, &min_ms, &max_ms, &stall_ms,
                    &stall_every) == 5 && max_ms >= min_ms && stall_every > 0) {
        spread = 1;
        rng = seed * 2654435761u + 1;
    }
    log_fd = open_env("SLOW_FSYNC_LOG", O_WRONLY | O_APPEND | O_CREAT);
    /* Both FIFOs opened read-write: an open that never waits for the other end. */
    told_fd = open_env("SLOW_FSYNC_TOLD", O_RDWR);
    gate_fd = open_env("SLOW_FSYNC_GATE", O_RDWR);
}

static uint64_t next_random(void) { /* xorshift64: the same delays for the same seed */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static long draw_ms(void) {
    pthread_mutex_lock(&lock);
    uint64_t r = next_random();
    long ms = r % (uint64_t)stall_every == 0
                  ? stall_ms
                  : min_ms + (long)((r >> 16) % (uint64_t)(max_ms - min_ms + 1));
    pthread_mutex_unlock(&lock);
    return ms;
}

static int path_of(int fd, char *path, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, size - 1);
    if (n < 0)
        return 0;
    path[n] = 0;
    return (size_t)n > dir_len && strncmp(path, dir, dir_len) == 0 && path[dir_len] == '/';
}

static void say(int fd, const char *line) {
    if (fd >= 0 && write(fd, line, strlen(line)) < 0) {
        /* nobody to tell: the sync goes on all the same */
    }
}

static int slowed(const char *name, int fd) {
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
    char path[4096], line[4200];
    if (!dir_len || !path_of(fd, path, sizeof path))
        return real(fd);
    if (gate_fd >= 0) {
        snprintf(line, sizeof line, "held %s\n", path);
        say(told_fd, line);
        char byte;
        while (read(gate_fd, &byte, 1) < 0) {
        }
    }
    int rc = real(fd);
    long ms = spread ? draw_ms() : 0;
    if (ms > 0) {
        struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&wait, &wait) < 0) {
        }
    }
    struct stat st;
    long long size = fstat(fd, &st) == 0 ? (long long)st.st_size : -1;
    snprintf(line, sizeof line, "%ld %s\n", ms, path);
    say(log_fd, line);
    snprintf(line, sizeof line, "synced %s %lld\n", path, size);
    say(told_fd, line);
    return rc;
}

int fdatasync(int fd) { return slowed("fdatasync", fd); }
int fsync(int fd) { return slowed("fsync", fd); }
