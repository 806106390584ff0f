// The Imaging component: pure functions on YUV 4:2:0 buffers — JPEG decode/encode through libjpeg
// (LibJPEG.swift is the only file that calls libjpeg), area-average scaling, rotation and
// thumbnails. No hardware, no threads of its own. See docs/architecture.md.
