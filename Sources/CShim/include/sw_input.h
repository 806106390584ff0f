// Input and timer helpers for the Controls module: what Swift cannot import from <linux/input.h>
// (EVIOC* request numbers are function-like macros built with _IOC and sizeof) plus the headers of
// the descriptors the shutter threads poll (inotify, timerfd). Nothing else lives here; all logic
// is in Sources/Controls.
#ifndef SWIFTWING_SW_INPUT_H
#define SWIFTWING_SW_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <time.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <linux/input.h>
#include <linux/uinput.h>

/// `EVIOCGNAME(len)`: the device's name ("gpio-keys", "AB Shutter3").
static inline unsigned long sw_EVIOCGNAME(unsigned int len) { return EVIOCGNAME(len); }

/// `EVIOCGBIT(EV_KEY, len)`: a bitmap of the key codes the device can send.
static inline unsigned long sw_EVIOCGBIT_KEY(unsigned int len) { return EVIOCGBIT(EV_KEY, len); }

/// `EVIOCGID`: the device's bus, vendor, product and version (argument: pointer to a `struct input_id`).
static inline unsigned long sw_EVIOCGID(void) { return EVIOCGID; }

/// `EVIOCSCLOCKID`: which clock stamps the device's events (argument: pointer to an int clock id).
static inline unsigned long sw_EVIOCSCLOCKID(void) { return EVIOCSCLOCKID; }

/// `sizeof(struct input_event)`: 24 bytes on 64-bit Linux, 16 on 32-bit with a 32-bit time_t.
static inline size_t sw_input_event_size(void) { return sizeof(struct input_event); }

/// The corresponding C function is `ioctl` with a pointer argument (libc; variadic).
static inline int sw_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

/// The corresponding C function is `ioctl` with an int argument by value (libc; variadic).
static inline int sw_ioctl_int(int fd, unsigned long request, int arg) { return ioctl(fd, request, arg); }

// uinput (tests on a real kernel create a virtual key device through it)
static inline unsigned long sw_UI_SET_EVBIT(void) { return UI_SET_EVBIT; }
static inline unsigned long sw_UI_SET_KEYBIT(void) { return UI_SET_KEYBIT; }
static inline unsigned long sw_UI_DEV_SETUP(void) { return UI_DEV_SETUP; }
static inline unsigned long sw_UI_DEV_CREATE(void) { return UI_DEV_CREATE; }
static inline unsigned long sw_UI_DEV_DESTROY(void) { return UI_DEV_DESTROY; }

/// Arms a timerfd at an absolute CLOCK_MONOTONIC instant (0 disarms). The corresponding C function is
/// `timerfd_settime` with `TFD_TIMER_ABSTIME`.
static inline int sw_timerfd_arm_absolute(int fd, uint64_t nanoseconds) {
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = (time_t)(nanoseconds / 1000000000ull);
    spec.it_value.tv_nsec = (long)(nanoseconds % 1000000000ull);
    if (nanoseconds == 0) {
        return timerfd_settime(fd, 0, &spec, NULL);
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

#endif
