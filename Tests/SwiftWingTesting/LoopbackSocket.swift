#if canImport(Glibc)
    import Glibc
#endif

/// TCP on 127.0.0.1 for tests' own servers and probes: the socket calls each of them would otherwise repeat.
public enum LoopbackSocket {
    /// A socket failed: the call and its errno.
    public struct Failure: Error, CustomStringConvertible {
        public var call: String
        public var errno: Int32
        public var description: String { "\(call) on 127.0.0.1: \(String(cString: strerror(errno))) (errno \(errno))" }
    }

    /// A listening socket (close-on-exec) on a port the kernel chose, and that port.
    public static func listen(backlog: Int32 = 64, reuseAddress: Bool = false) throws(Failure) -> (fd: Int32, port: Int)
    {
        let fd = try bound(kind: Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), reuseAddress: reuseAddress)
        guard Glibc.listen(fd, backlog) == 0 else {
            let failure = Failure(call: "listen", errno: errno)
            close(fd)
            throw failure
        }
        return (fd, try port(of: fd))
    }

    /// A port nothing listens on right now (bound and released), so a server can be started on it later.
    public static func freePort() throws(Failure) -> Int {
        let fd = try bound(kind: Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), reuseAddress: false)
        defer { close(fd) }
        return try port(of: fd)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    public static func acceptsConnections(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }

    /// A socket (close-on-exec) connected to 127.0.0.1:`port`, whose reads give up after `readTimeout` seconds: a
    /// client that sends what a test wants when it wants (half a request, say).
    public static func connect(port: Int, readTimeout: Int = 30) throws(Failure) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", errno: errno) }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = address(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let failure = Failure(call: "connect", errno: errno)
            close(fd)
            throw failure
        }
        return fd
    }

    /// Writes all of `bytes` to `fd`.
    public static func send(_ bytes: [UInt8], to fd: Int32) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure(call: "write", errno: errno) }
            offset += written
        }
    }

    /// Everything `fd` gives until the other side closes it (or the read timeout passes).
    public static func readToEnd(_ fd: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return received }
            received += buffer[..<count]
        }
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func bound(kind: Int32, reuseAddress: Bool) throws(Failure) -> Int32 {
        let fd = socket(AF_INET, kind, 0)
        guard fd >= 0 else { throw Failure(call: "socket", errno: errno) }
        if reuseAddress {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = address(port: 0)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let failure = Failure(call: "bind", errno: errno)
            close(fd)
            throw failure
        }
        return fd
    }

    private static func port(of fd: Int32) throws(Failure) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw Failure(call: "getsockname", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
