// What Swift cannot import from the C library for SwiftWingCore's system layer: the variadic `prctl`,
// `SCHED_RESET_ON_FORK` (shown by <sched.h> only with _GNU_SOURCE), the eventfd and timex headers,
// glibc's <malloc.h> and the `pidfd_open` system call, which Swift's Glibc module leaves out, and the kernel's key
// code names (<linux/input-event-codes.h>, macros only) for the configuration's shutter keys, and glibc's
// `posix_spawn_file_actions_addclosefrom_np`, which <spawn.h> declares only with _GNU_SOURCE.
// Nothing else lives here; all logic is in Sources/SwiftWingCore.
#ifndef SWIFTWING_CLINUX_H
#define SWIFTWING_CLINUX_H

#include <poll.h>
#include <spawn.h>
#include <linux/input-event-codes.h>
#include <sys/eventfd.h>

/// Names the calling thread; Linux keeps the first 15 bytes. Returns 0 or -1 with errno.
/// The corresponding C function is `prctl(PR_SET_NAME, …)`.
int sw_thread_set_name(const char *name);

/// Copies the calling thread's name (at most 15 bytes and a NUL) into `buffer`, which holds 16 bytes.
/// The corresponding C function is `prctl(PR_GET_NAME, …)`.
int sw_thread_get_name(char *buffer);

/// Puts the calling thread on SCHED_FIFO at `priority` with SCHED_RESET_ON_FORK, so threads it
/// creates (the Swift concurrency runtime grows its pool from whichever thread enqueues work) start
/// at normal priority. Returns 0 or an errno. The corresponding C function is `sched_setscheduler`.
int sw_thread_set_realtime(int priority);

/// Whether the calling thread runs on SCHED_FIFO. The corresponding C function is `sched_getscheduler`.
int sw_thread_is_realtime(void);

/// Whether the kernel's clock discipline calls the clock synchronised (NTP): 1 yes, 0 no, -1 with
/// errno when it cannot be read. The corresponding C function is `adjtimex`.
int sw_clock_is_synchronised(void);

/// Sets glibc's malloc tunables for a long-running process: at most `arenas` arenas, and blocks of
/// `mmap_threshold` bytes or more in mappings of their own, unmapped when freed. Returns 0, or the
/// first option glibc refused. The corresponding C function is `mallopt`.
int sw_malloc_tune(int arenas, int mmap_threshold);

/// Asks the kernel not to back this process's memory with transparent huge pages, whatever
/// `/sys/kernel/mm/transparent_hugepage/enabled` says. Returns 0 or errno. The corresponding C
/// function is `prctl(PR_SET_THP_DISABLE)`.
int sw_disable_transparent_huge_pages(void);

/// 1 when transparent huge pages are disabled for this process, 0 when not, -1 with errno. The
/// corresponding C function is `prctl(PR_GET_THP_DISABLE)`.
int sw_transparent_huge_pages_disabled(void);

/// Gives the kernel back the free pages inside malloc's arenas, not only at their tops. Returns 1
/// when some memory was returned. The corresponding C function is `malloc_trim(0)`.
int sw_malloc_trim(void);

/// How many blocks malloc currently serves from mappings of their own. The corresponding C function
/// is `mallinfo2` (its `hblks`).
long sw_malloc_mapped_blocks(void);

/// A file descriptor for process `pid` that becomes readable when the process ends (whoever reaps
/// it), or -1 with errno. The corresponding C function is the system call `pidfd_open`.
int sw_pidfd_open(int pid);

/// Adds to `actions` the closing of every descriptor from `lowest` up in the child, so a spawned process
/// inherits only what the spawner hands it, whatever the parent's libraries left open without close-on-exec.
/// Returns 0 or an errno. The corresponding C function is `posix_spawn_file_actions_addclosefrom_np`.
int sw_spawn_actions_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
