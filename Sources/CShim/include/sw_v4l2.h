// V4L2 helpers for the Camera module: what Swift cannot import from <linux/videodev2.h> and
// <libv4l2.h>. ioctl request numbers are function-like macros (_IOWR with sizeof), fourcc codes
// are built by a macro, and v4l2_open / v4l2_ioctl / ioctl / open are variadic. Nothing else lives
// here; all logic is in Sources/Camera.
#ifndef SWIFTWING_SW_V4L2_H
#define SWIFTWING_SW_V4L2_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <libv4l2.h>
#include <linux/videodev2.h>

// MARK: ioctl request numbers

static inline unsigned long sw_VIDIOC_QUERYCAP(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long sw_VIDIOC_ENUM_FMT(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long sw_VIDIOC_ENUM_FRAMESIZES(void) { return VIDIOC_ENUM_FRAMESIZES; }
static inline unsigned long sw_VIDIOC_G_FMT(void) { return VIDIOC_G_FMT; }
static inline unsigned long sw_VIDIOC_S_FMT(void) { return VIDIOC_S_FMT; }
static inline unsigned long sw_VIDIOC_TRY_FMT(void) { return VIDIOC_TRY_FMT; }
static inline unsigned long sw_VIDIOC_G_PARM(void) { return VIDIOC_G_PARM; }
static inline unsigned long sw_VIDIOC_S_PARM(void) { return VIDIOC_S_PARM; }
static inline unsigned long sw_VIDIOC_REQBUFS(void) { return VIDIOC_REQBUFS; }
static inline unsigned long sw_VIDIOC_QUERYBUF(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long sw_VIDIOC_QBUF(void) { return VIDIOC_QBUF; }
static inline unsigned long sw_VIDIOC_DQBUF(void) { return VIDIOC_DQBUF; }
static inline unsigned long sw_VIDIOC_STREAMON(void) { return VIDIOC_STREAMON; }
static inline unsigned long sw_VIDIOC_STREAMOFF(void) { return VIDIOC_STREAMOFF; }
static inline unsigned long sw_VIDIOC_QUERYCTRL(void) { return VIDIOC_QUERYCTRL; }
static inline unsigned long sw_VIDIOC_G_CTRL(void) { return VIDIOC_G_CTRL; }
static inline unsigned long sw_VIDIOC_S_CTRL(void) { return VIDIOC_S_CTRL; }

// MARK: fourcc

/// The corresponding C macro is `v4l2_fourcc`.
static inline uint32_t sw_v4l2_fourcc(unsigned char a, unsigned char b, unsigned char c, unsigned char d) {
    return v4l2_fourcc(a, b, c, d);
}

/// `V4L2_PIX_FMT_YUV420` ('YU12'): planar Y, then Cb, then Cr, chroma halved both ways.
static inline uint32_t sw_V4L2_PIX_FMT_YUV420(void) { return V4L2_PIX_FMT_YUV420; }

// MARK: non-variadic wrappers

/// The corresponding C function is `v4l2_open` (libv4l2; attaches format conversion to the fd).
static inline int sw_v4l2_open(const char *file, int oflag) { return v4l2_open(file, oflag); }

/// The corresponding C function is `v4l2_ioctl` (libv4l2).
static inline int sw_v4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }

/// The corresponding C function is `open` (libc). Used instead of `v4l2_open` under an LD_PRELOAD
/// compatibility layer (libcamerify): libv4l2 opens and ioctls through syscall(2), which an
/// LD_PRELOAD cannot see.
static inline int sw_libc_open(const char *file, int oflag) { return open(file, oflag); }

/// The corresponding C function is `ioctl` (libc). See `sw_libc_open`.
static inline int sw_libc_ioctl(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

#endif
