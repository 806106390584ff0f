public import Hummingbird
public import NIOCore

/// Request context that keeps the connection, so the `drop` fault can close it before any response.
public struct ReferenceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// Thrown inside a response body writer to cut the connection mid-transfer (the client sees a broken transfer).
struct ConnectionDropped: Error {}

extension HTTPFields.Element.Name {
    static let deviceID = Self("X-Device-ID")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let lastEventID = Self("Last-Event-ID")!
    static let rateLimitReset = Self("X-RateLimit-Reset")!
    static let forwardedProto = Self("X-Forwarded-Proto")!
}
