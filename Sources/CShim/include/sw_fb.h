// Linux framebuffer helpers for the Panel module: the fbdev ioctl request numbers are macros in
// <linux/fb.h>, and Swift's Glibc module has neither that header nor a non-variadic ioctl. Nothing
// else lives here; all logic is in Sources/Panel/Framebuffer*.swift.
#ifndef SWIFTWING_SW_FB_H
#define SWIFTWING_SW_FB_H

#include <sys/ioctl.h>
#include <linux/fb.h>

/// The corresponding C macro is `FBIOGET_VSCREENINFO`.
static inline unsigned long sw_FBIOGET_VSCREENINFO(void) { return FBIOGET_VSCREENINFO; }
/// The corresponding C macro is `FBIOGET_FSCREENINFO`.
static inline unsigned long sw_FBIOGET_FSCREENINFO(void) { return FBIOGET_FSCREENINFO; }
/// The corresponding C macro is `FBIOPUT_VSCREENINFO`.
static inline unsigned long sw_FBIOPUT_VSCREENINFO(void) { return FBIOPUT_VSCREENINFO; }
/// The corresponding C macro is `FB_TYPE_PACKED_PIXELS`.
static inline unsigned int sw_FB_TYPE_PACKED_PIXELS(void) { return FB_TYPE_PACKED_PIXELS; }
/// The corresponding C macro is `FB_VISUAL_TRUECOLOR`.
static inline unsigned int sw_FB_VISUAL_TRUECOLOR(void) { return FB_VISUAL_TRUECOLOR; }

/// The corresponding C function is `ioctl` (variadic in libc) for the fbdev `*_SCREENINFO` requests.
static inline int sw_fb_ioctl(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

#endif
