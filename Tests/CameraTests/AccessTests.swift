import Camera
import Glibc
import SwiftWingCore
import Testing

@Suite struct AccessTests {
    @Test func libcamerifyPreloadSelectsLibcAccess() {
        #expect(V4L2Access.automatic.resolved(preload: nil) == .libv4l2)
        #expect(V4L2Access.automatic.resolved(preload: "/usr/lib/libfoo.so") == .libv4l2)
        #expect(
            V4L2Access.automatic.resolved(preload: "/usr/lib/aarch64-linux-gnu/libcamera/v4l2-compat.so") == .libc)
        #expect(V4L2Access.libv4l2.resolved(preload: "v4l2-compat.so") == .libv4l2)
    }
}
