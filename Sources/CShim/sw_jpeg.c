// See include/sw_jpeg.h. The idea (replace error_exit, jump back to the caller) is libjpeg's own
// example.c and ustreamer's unjpeg.c; each wrapper is setjmp + one libjpeg call.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include "sw_jpeg.h"

struct sw_error_mgr {
    struct jpeg_error_mgr pub; // first, so a j_common_ptr's err casts to this
    jmp_buf jump;
    int warnings;
    char message[JMSG_LENGTH_MAX];
    char warning[JMSG_LENGTH_MAX];
};

struct sw_compressor {
    struct jpeg_compress_struct cinfo; // first, so the pointer handed out frees the whole thing
    struct sw_error_mgr err;
};

struct sw_decompressor {
    struct jpeg_decompress_struct dinfo;
    struct sw_error_mgr err;
};

static void sw_error_exit(j_common_ptr cinfo) {
    struct sw_error_mgr *err = (struct sw_error_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

// Warnings (level -1) are remembered instead of printed; trace messages are dropped.
static void sw_emit_message(j_common_ptr cinfo, int level) {
    struct sw_error_mgr *err = (struct sw_error_mgr *)cinfo->err;
    if (level >= 0) return;
    if (err->warnings == 0) (*cinfo->err->format_message)(cinfo, err->warning);
    err->warnings += 1;
    cinfo->err->num_warnings += 1;
}

static void sw_output_message(j_common_ptr cinfo) { (void)cinfo; }

static struct jpeg_error_mgr *sw_error_init(struct sw_error_mgr *err) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = sw_error_exit;
    err->pub.emit_message = sw_emit_message;
    err->pub.output_message = sw_output_message;
    err->warnings = 0;
    err->message[0] = '\0';
    err->warning[0] = '\0';
    return &err->pub;
}

#define SW_ERR(info) ((struct sw_error_mgr *)((j_common_ptr)(info))->err)
#define SW_TRY(info, call)                                                                        \
    do {                                                                                          \
        if (setjmp(SW_ERR(info)->jump)) return -1;                                                \
        call;                                                                                     \
        return 0;                                                                                 \
    } while (0)

struct jpeg_compress_struct *sw_jpeg_compress_create(void) {
    struct sw_compressor *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->cinfo.err = sw_error_init(&c->err);
    if (setjmp(c->err.jump)) {
        jpeg_destroy_compress(&c->cinfo);
        free(c);
        return NULL;
    }
    jpeg_create_compress(&c->cinfo);
    return &c->cinfo;
}

void sw_jpeg_compress_destroy(struct jpeg_compress_struct *cinfo) {
    if (cinfo == NULL) return;
    jpeg_destroy_compress(cinfo);
    free((struct sw_compressor *)cinfo);
}

struct jpeg_decompress_struct *sw_jpeg_decompress_create(void) {
    struct sw_decompressor *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->dinfo.err = sw_error_init(&d->err);
    if (setjmp(d->err.jump)) {
        jpeg_destroy_decompress(&d->dinfo);
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->dinfo);
    return &d->dinfo;
}

void sw_jpeg_decompress_destroy(struct jpeg_decompress_struct *dinfo) {
    if (dinfo == NULL) return;
    jpeg_destroy_decompress(dinfo);
    free((struct sw_decompressor *)dinfo);
}

const char *sw_jpeg_error_message(const void *cinfo) { return SW_ERR(cinfo)->message; }
int sw_jpeg_warning_count(const void *cinfo) { return SW_ERR(cinfo)->warnings; }
const char *sw_jpeg_warning_message(const void *cinfo) { return SW_ERR(cinfo)->warning; }

void sw_jpeg_reset_messages(const void *cinfo) {
    struct sw_error_mgr *err = SW_ERR(cinfo);
    err->warnings = 0;
    err->message[0] = '\0';
    err->warning[0] = '\0';
}

int sw_jpeg_set_defaults(struct jpeg_compress_struct *cinfo) { SW_TRY(cinfo, jpeg_set_defaults(cinfo)); }

int sw_jpeg_set_colorspace(struct jpeg_compress_struct *cinfo, int colorspace) {
    SW_TRY(cinfo, jpeg_set_colorspace(cinfo, (J_COLOR_SPACE)colorspace));
}

int sw_jpeg_set_quality(struct jpeg_compress_struct *cinfo, int quality, int force_baseline) {
    SW_TRY(cinfo, jpeg_set_quality(cinfo, quality, force_baseline ? TRUE : FALSE));
}

int sw_jpeg_mem_dest(struct jpeg_compress_struct *cinfo, unsigned char **buffer, unsigned long *size) {
    SW_TRY(cinfo, jpeg_mem_dest(cinfo, buffer, size));
}

int sw_jpeg_start_compress(struct jpeg_compress_struct *cinfo, int write_all_tables) {
    SW_TRY(cinfo, jpeg_start_compress(cinfo, write_all_tables ? TRUE : FALSE));
}

int sw_jpeg_write_raw_data(struct jpeg_compress_struct *cinfo, unsigned char ***planes, unsigned int lines,
                           unsigned int *written) {
    SW_TRY(cinfo, *written = jpeg_write_raw_data(cinfo, planes, lines));
}

int sw_jpeg_finish_compress(struct jpeg_compress_struct *cinfo) { SW_TRY(cinfo, jpeg_finish_compress(cinfo)); }

void sw_jpeg_abort_compress(struct jpeg_compress_struct *cinfo) { jpeg_abort_compress(cinfo); }

int sw_jpeg_mem_src(struct jpeg_decompress_struct *dinfo, const unsigned char *data, unsigned long size) {
    SW_TRY(dinfo, jpeg_mem_src(dinfo, data, size));
}

int sw_jpeg_read_header(struct jpeg_decompress_struct *dinfo, int require_image, int *result) {
    SW_TRY(dinfo, *result = jpeg_read_header(dinfo, require_image ? TRUE : FALSE));
}

int sw_jpeg_calc_output_dimensions(struct jpeg_decompress_struct *dinfo) {
    SW_TRY(dinfo, jpeg_calc_output_dimensions(dinfo));
}

int sw_jpeg_start_decompress(struct jpeg_decompress_struct *dinfo) { SW_TRY(dinfo, jpeg_start_decompress(dinfo)); }

int sw_jpeg_read_raw_data(struct jpeg_decompress_struct *dinfo, unsigned char ***planes, unsigned int max_lines,
                          unsigned int *read) {
    SW_TRY(dinfo, *read = jpeg_read_raw_data(dinfo, planes, max_lines));
}

int sw_jpeg_read_scanlines(struct jpeg_decompress_struct *dinfo, unsigned char **rows, unsigned int max_lines,
                           unsigned int *read) {
    SW_TRY(dinfo, *read = jpeg_read_scanlines(dinfo, rows, max_lines));
}

int sw_jpeg_finish_decompress(struct jpeg_decompress_struct *dinfo) { SW_TRY(dinfo, jpeg_finish_decompress(dinfo)); }

void sw_jpeg_abort_decompress(struct jpeg_decompress_struct *dinfo) { jpeg_abort_decompress(dinfo); }
