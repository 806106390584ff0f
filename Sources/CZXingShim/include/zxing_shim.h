// A C face for zxing-cpp (C++ only), so Swift can call it; Sources/Identify/ZXingReader.swift is
// the only caller.
#ifndef ZXING_SHIM_H
#define ZXING_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

/// Formats, as the shim reports them.
enum { ZXING_SHIM_EAN13 = 1, ZXING_SHIM_EAN8 = 2, ZXING_SHIM_UPCA = 3 };

typedef struct {
    int format;
    char text[32];
} zxing_shim_code;

/// Reads an EAN/UPC code in an 8-bit grey plane, trying harder (more rows, both directions) and
/// rotated. Returns how many codes were written to `codes` (0 or 1), or -1 when the arguments cannot
/// describe a picture (null pointers, a side <= 0, stride < width, capacity < 1) or the library threw
/// (every C++ exception is caught here; an assertion inside zxing-cpp would still abort).
int zxing_shim_read(const unsigned char *luma, int width, int height, int stride, zxing_shim_code *codes,
                    int capacity);

/// Encodes `text` (UTF-8, NUL-terminated) as a QR code with no quiet zone: writes one byte per module
/// (1 dark, 0 light), row by row, into `modules` and returns the side in modules. Returns 0 when the
/// symbol would need more than `capacity` bytes, and -1 when an argument is null or the library threw
/// (the text is too long for any QR code).
int zxing_shim_qr_encode(const char *text, unsigned char *modules, int capacity);

/// Reads one QR code in an 8-bit grey plane: writes its text (UTF-8, NUL-terminated) into `text` and
/// returns its length; 0 when no QR code was read or its text does not fit in `capacity` bytes; -1 as for
/// `zxing_shim_read`.
int zxing_shim_read_qr(const unsigned char *luma, int width, int height, int stride, char *text, int capacity);

/// zxing-cpp's version, e.g. "1.4.0".
const char *zxing_shim_version(void);

#ifdef __cplusplus
}
#endif

#endif
