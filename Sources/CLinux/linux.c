#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000 /* <linux/sched.h> */
#endif

int sw_thread_set_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

int sw_thread_get_name(char *buffer) {
    memset(buffer, 0, 16);
    return prctl(PR_GET_NAME, buffer, 0, 0, 0);
}

int sw_thread_set_realtime(int priority) {
    struct sched_param param = {0};
    param.sched_priority = priority;
    return sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0 ? 0 : errno;
}

int sw_thread_is_realtime(void) { return (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO; }

int sw_clock_is_synchronised(void) {
    struct timex state;
    memset(&state, 0, sizeof state);
    int result = adjtimex(&state);
    if (result < 0) return -1;
    return result != TIME_ERROR && (state.status & STA_UNSYNC) == 0;
}

int sw_malloc_tune(int arenas, int mmap_threshold) {
    if (mallopt(M_ARENA_MAX, arenas) != 1) return M_ARENA_MAX;
    if (mallopt(M_MMAP_THRESHOLD, mmap_threshold) != 1) return M_MMAP_THRESHOLD;
    return 0;
}

int sw_disable_transparent_huge_pages(void) { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 ? 0 : errno; }

int sw_transparent_huge_pages_disabled(void) { return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0); }

int sw_malloc_trim(void) { return malloc_trim(0); }

long sw_malloc_mapped_blocks(void) { return (long)mallinfo2().hblks; }

int sw_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int sw_spawn_actions_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
