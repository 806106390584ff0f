// libpng's simplified read API (libpng-dev); Sources/Identify/PNGDecoder.swift is the only caller.
#include <png.h>
