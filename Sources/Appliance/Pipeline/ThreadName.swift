import CShim
import Foundation

/// The kernel's name of the calling thread (what `top -H`, `ps -L` and crash reports show).
/// Linux keeps at most 15 bytes of it.
enum ThreadName {
    /// Names the calling thread. The corresponding C call is `prctl(PR_SET_NAME, …)`.
    static func set(_ name: String) {
        _ = sw_set_current_thread_name(name)
    }

    /// The calling thread's name, from `/proc/thread-self/comm`.
    static var current: String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .newlines)
    }
}
