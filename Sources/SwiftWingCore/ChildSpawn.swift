import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `executable` with `arguments` (argv[0] excluded) and this process's environment, its standard input,
/// output and error on the given descriptors, and no other descriptor of ours: every descriptor from 3 up is
/// closed in the child, whether or not whoever opened it asked for close-on-exec (a library's socket, the
/// database, a listening port), so a child cannot keep them open or act on them. No signal is blocked or ignored in
/// the child, whatever the spawning thread blocks.
/// Returns the child's process id. The corresponding C function is `posix_spawn`.
public func spawnChild(
    executable: String, arguments: [String], standardInput: Int32, standardOutput: Int32, standardError: Int32
) throws(SystemCallError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (source, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
        let added = posix_spawn_file_actions_adddup2(&actions, source, target)
        if added != 0 { throw SystemCallError("posix_spawn_file_actions_adddup2", subject: executable, errno: added) }
    }
    let closing = sw_spawn_actions_close_from(&actions, 3)
    if closing != 0 {
        throw SystemCallError("posix_spawn_file_actions_addclosefrom_np", subject: executable, errno: closing)
    }
    // Signals as a freshly started program expects them: none blocked, each with its default action. Otherwise the
    // child keeps the spawning thread's mask (libdispatch blocks SIGTERM and SIGINT on the threads Swift concurrency
    // runs on, so a child would never see them) and this process's ignored signals (SIGPIPE).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in 1..<32 where signal != SIGKILL && signal != SIGSTOP { sigaddset(&defaults, Int32(signal)) }
    for (step, result) in [
        ("posix_spawnattr_setsigmask", posix_spawnattr_setsigmask(&attributes, &none)),
        ("posix_spawnattr_setsigdefault", posix_spawnattr_setsigdefault(&attributes, &defaults)),
        (
            "posix_spawnattr_setflags",
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        ),
    ] where result != 0 {
        throw SystemCallError(step, subject: executable, errno: result)
    }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var child = pid_t()
    let result = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
    if result != 0 { throw SystemCallError("posix_spawn", subject: executable, errno: result) }
    return child
}
