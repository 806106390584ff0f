import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// Ends a stand-in child (`sleep`, `sh`) at once and reaps it. Not `terminate()`: a child that Foundation spawned
    /// from a Swift concurrency thread inherits that thread's signal mask, in which libdispatch blocks `SIGTERM`, so
    /// a `sleep 60` sent `SIGTERM` sleeps the whole minute (the daemon's own children are spawned by `ChildSpawn`,
    /// which resets the mask).
    public func killAndReap() {
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}
