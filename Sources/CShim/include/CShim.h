// Small C helpers for what Swift cannot import: ioctl request numbers and fourcc codes (macros),
// variadic calls (v4l2_open, v4l2_ioctl), and libjpeg's setjmp-based error recovery.
#ifndef SWIFTWING_CSHIM_H
#define SWIFTWING_CSHIM_H
#include "sw_v4l2.h"
#include "sw_jpeg.h"
#include "sw_input.h"
#include "sw_fb.h"
#include "sw_prefetch.h"
#endif
