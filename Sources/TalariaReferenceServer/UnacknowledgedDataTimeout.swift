import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Sets `TCP_USER_TIMEOUT` on each connection as it joins the server (``ReferenceConfiguration/unacknowledgedDataTimeout``)
/// and passes everything on: Hummingbird has no setting for it, only a channel handler reaches the socket.
final class UnacknowledgedDataTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private let milliseconds: SocketOptionValue

    init(_ timeout: Duration) {
        // The kernel reads an int of milliseconds.
        let total = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        milliseconds = SocketOptionValue(CInt(clamping: total))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let option = ChannelOptions.Types.SocketOption(
            level: SocketOptionLevel(IPPROTO_TCP), name: SocketOptionName(TCP_USER_TIMEOUT))
        // A connection whose option cannot be set keeps the system's default; nothing else depends on it.
        try? context.channel.syncOptions?.setOption(option, value: milliseconds)
    }
}
