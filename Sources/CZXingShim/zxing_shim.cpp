// zxing-cpp behind a C interface: exceptions stop here, and only plain C types cross.
// text() as UTF-8 std::string (the 1.4 headers otherwise warn and return std::wstring).
#define ZX_USE_UTF8 1
#include "zxing_shim.h"

#include <ZXing/BitMatrix.h>
#include <ZXing/MultiFormatWriter.h>
#include <ZXing/ReadBarcode.h>
#include <ZXing/ZXVersion.h>
#include <cstring>
#include <string>

extern "C" int zxing_shim_read(const unsigned char *luma, int width, int height, int stride,
                               zxing_shim_code *codes, int capacity) {
    // zxing-cpp 1.4's ImageView checks nothing: a bad size would read out of bounds, not throw.
    if (luma == nullptr || codes == nullptr || width <= 0 || height <= 0 || stride < width || capacity < 1) {
        return -1;
    }
    try {
        ZXing::DecodeHints hints;
        hints.setFormats(ZXing::BarcodeFormat::EAN13 | ZXing::BarcodeFormat::EAN8 | ZXing::BarcodeFormat::UPCA);
        hints.setTryHarder(true);
        hints.setTryRotate(true);
        // One symbol per call: Debian's 1.4.0 asserts (aborts) while merging several results.
        ZXing::ImageView view(luma, width, height, ZXing::ImageFormat::Lum, stride);
        ZXing::Result result = ZXing::ReadBarcode(view, hints);
        if (!result.isValid()) return 0;
        std::string text = result.text();
        if (text.size() >= sizeof codes[0].text) return 0;
        int format = 0;
        switch (result.format()) {
        case ZXing::BarcodeFormat::EAN13: format = ZXING_SHIM_EAN13; break;
        case ZXing::BarcodeFormat::EAN8: format = ZXING_SHIM_EAN8; break;
        case ZXing::BarcodeFormat::UPCA: format = ZXING_SHIM_UPCA; break;
        default: return 0;
        }
        codes[0].format = format;
        std::memcpy(codes[0].text, text.c_str(), text.size() + 1);
        return 1;
    } catch (...) {
        return -1;
    }
}

extern "C" int zxing_shim_qr_encode(const char *text, unsigned char *modules, int capacity) {
    if (text == nullptr || modules == nullptr) return -1;
    try {
        // Margin 0: the caller draws the quiet zone, at the module size it chooses.
        ZXing::BitMatrix matrix =
            ZXing::MultiFormatWriter(ZXing::BarcodeFormat::QRCode).setMargin(0).encode(std::string(text), 0, 0);
        const int side = matrix.width();
        if (side <= 0 || matrix.height() != side) return -1;
        if (capacity < side * side) return 0;
        for (int y = 0; y < side; ++y) {
            for (int x = 0; x < side; ++x) modules[y * side + x] = matrix.get(x, y) ? 1 : 0;
        }
        return side;
    } catch (...) {
        return -1;
    }
}

extern "C" int zxing_shim_read_qr(const unsigned char *luma, int width, int height, int stride, char *text,
                                  int capacity) {
    if (luma == nullptr || text == nullptr || width <= 0 || height <= 0 || stride < width || capacity < 1) {
        return -1;
    }
    try {
        ZXing::DecodeHints hints;
        hints.setFormats(ZXing::BarcodeFormat::QRCode);
        hints.setTryHarder(true);
        ZXing::ImageView view(luma, width, height, ZXing::ImageFormat::Lum, stride);
        ZXing::Result result = ZXing::ReadBarcode(view, hints);
        if (!result.isValid()) return 0;
        std::string decoded = result.text();
        if (decoded.size() + 1 > static_cast<size_t>(capacity)) return 0;
        std::memcpy(text, decoded.c_str(), decoded.size() + 1);
        return static_cast<int>(decoded.size());
    } catch (...) {
        return -1;
    }
}

extern "C" const char *zxing_shim_version(void) {
    static const std::string version = std::to_string(ZXING_VERSION_MAJOR) + "." +
        std::to_string(ZXING_VERSION_MINOR) + "." + std::to_string(ZXING_VERSION_PATCH);
    return version.c_str();
}
