// libjpeg error recovery for Swift. libjpeg reports a fatal error by calling `error_exit`, whose
// default calls exit(); Swift cannot setjmp, so each libjpeg call that can fail has a tiny wrapper
// here that sets a jump point, makes the call, and returns 0 on success or -1 on failure (the
// message is then in `sw_jpeg_error_message`). Nothing else lives here: all logic is in Swift
// (Sources/Imaging). The libjpeg types come from the CJPEG module; this header only names them.
#ifndef SWIFTWING_SW_JPEG_H
#define SWIFTWING_SW_JPEG_H
#include <jerror.h> // J_MESSAGE_CODE, to tell "not a JPEG" from "damaged" (jpeglib.h leaves it out)

struct jpeg_compress_struct;
struct jpeg_decompress_struct;

/// A compressor whose error manager longjmps instead of exiting; NULL when out of memory.
struct jpeg_compress_struct *sw_jpeg_compress_create(void);
void sw_jpeg_compress_destroy(struct jpeg_compress_struct *cinfo);
/// A decompressor whose error manager longjmps instead of exiting; NULL when out of memory.
struct jpeg_decompress_struct *sw_jpeg_decompress_create(void);
void sw_jpeg_decompress_destroy(struct jpeg_decompress_struct *dinfo);

/// The message of the last fatal error on `cinfo` (a compress or decompress struct), or "".
const char *sw_jpeg_error_message(const void *cinfo);
/// Warnings (corrupt or truncated data that libjpeg patched over) since the last reset.
int sw_jpeg_warning_count(const void *cinfo);
/// The first warning's message since the last reset, or "".
const char *sw_jpeg_warning_message(const void *cinfo);
void sw_jpeg_reset_messages(const void *cinfo);

// Compression: the wrapped call is in the name.
int sw_jpeg_set_defaults(struct jpeg_compress_struct *cinfo);
int sw_jpeg_set_colorspace(struct jpeg_compress_struct *cinfo, int colorspace);
int sw_jpeg_set_quality(struct jpeg_compress_struct *cinfo, int quality, int force_baseline);
int sw_jpeg_mem_dest(struct jpeg_compress_struct *cinfo, unsigned char **buffer, unsigned long *size);
int sw_jpeg_start_compress(struct jpeg_compress_struct *cinfo, int write_all_tables);
int sw_jpeg_write_raw_data(struct jpeg_compress_struct *cinfo, unsigned char ***planes, unsigned int lines,
                           unsigned int *written);
int sw_jpeg_finish_compress(struct jpeg_compress_struct *cinfo);
void sw_jpeg_abort_compress(struct jpeg_compress_struct *cinfo);

// Decompression.
int sw_jpeg_mem_src(struct jpeg_decompress_struct *dinfo, const unsigned char *data, unsigned long size);
int sw_jpeg_read_header(struct jpeg_decompress_struct *dinfo, int require_image, int *result);
int sw_jpeg_calc_output_dimensions(struct jpeg_decompress_struct *dinfo);
int sw_jpeg_start_decompress(struct jpeg_decompress_struct *dinfo);
int sw_jpeg_read_raw_data(struct jpeg_decompress_struct *dinfo, unsigned char ***planes, unsigned int max_lines,
                          unsigned int *read);
int sw_jpeg_read_scanlines(struct jpeg_decompress_struct *dinfo, unsigned char **rows, unsigned int max_lines,
                           unsigned int *read);
int sw_jpeg_finish_decompress(struct jpeg_decompress_struct *dinfo);
void sw_jpeg_abort_decompress(struct jpeg_decompress_struct *dinfo);

#endif
