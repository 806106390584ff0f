// ZBar's C API (libzbar-dev); Sources/Identify/ZBarScanner.swift is the only caller.
#include <zbar.h>
