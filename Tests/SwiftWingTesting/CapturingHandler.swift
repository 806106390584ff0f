import Logging

/// A swift-log handler that hands every line (level, message and metadata) to `append`, at every level.
public struct CapturingHandler: LogHandler {
    public let append: @Sendable (String) -> Void
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(append: @escaping @Sendable (String) -> Void) {
        self.append = append
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        append("\(event.level) \(event.message) \(event.metadata ?? [:])")
    }
}
