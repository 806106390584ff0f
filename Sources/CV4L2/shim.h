#include <libv4l2.h>
#include <linux/videodev2.h>
