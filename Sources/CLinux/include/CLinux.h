// What Swift cannot import from the C library for SwiftWingCore's system layer: the variadic `prctl`,
// `SCHED_RESET_ON_FORK` (shown by <sched.h> only with _GNU_SOURCE), and the eventfd and timex headers,
// which Swift's Glibc module leaves out. Nothing else lives here; all logic is in Sources/SwiftWingCore.
#ifndef SWIFTWING_CLINUX_H
#define SWIFTWING_CLINUX_H

#include <poll.h>
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

#endif
