import CSystemd
import Foundation
import Logging

/// A swift-log handler that writes structured entries to journald when the daemon runs under
/// systemd, and plain lines to standard error otherwise (a terminal, a test, `make demo`).
///
/// Fields: `COMPONENT` is the logger's label (`uplink`, `camera`, `pipeline`…); metadata keys become
/// upper-case fields (`scan_id` → `SCAN_ID`, `job_id` → `JOB_ID`, `isbn` → `ISBN`, `device` →
/// `DEVICE`), so `journalctl -u swiftwing SCAN_ID=<id>` follows one scan.
///
/// Each handler is a cheap value; the destination is chosen once per process. `log(event:)` never
/// throws or traps: if the journal refuses an entry, the line goes to standard error instead.
public struct JournalLogHandler: LogHandler {
    public enum Destination: Sendable {
        case journal
        case standardError
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    private let label: String
    private let destination: Destination

    public init(label: String, logLevel: Logger.Level = .info, destination: Destination = Self.detectedDestination) {
        self.label = label
        self.logLevel = logLevel
        self.destination = destination
    }

    /// journald when standard error is the journal stream systemd gave us (`$JOURNAL_STREAM` names
    /// its device and inode), standard error otherwise.
    public static let detectedDestination: Destination = {
        guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return .standardError }
        let parts = stream.split(separator: ":")
        var status = stat()
        guard parts.count == 2, fstat(STDERR_FILENO, &status) == 0 else { return .standardError }
        return "\(status.st_dev)" == parts[0] && "\(status.st_ino)" == parts[1] ? .journal : .standardError
    }()

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let eventMetadata = event.metadata { merged.merge(eventMetadata) { $1 } }
        switch destination {
        case .journal:
            if !sendToJournal(event, metadata: merged) { writeLine(event, metadata: merged) }
        case .standardError:
            writeLine(event, metadata: merged)
        }
    }

    private func sendToJournal(_ event: LogEvent, metadata: Logger.Metadata) -> Bool {
        let fields = Self.journalFields(event, label: label, metadata: metadata)
        let cStrings = fields.map { strdup($0) }
        defer { for cString in cStrings { free(cString) } }
        var vectors = cStrings.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0!)) }
        return sd_journal_sendv(&vectors, Int32(vectors.count)) >= 0
    }

    private func writeLine(_ event: LogEvent, metadata: Logger.Metadata) {
        let details = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line =
            "\(event.level.rawValue.uppercased()) [\(label)] \(event.message)\(details.isEmpty ? "" : " (\(details))")\n"
        line.utf8CString.withUnsafeBufferPointer { buffer in
            _ = Glibc.write(STDERR_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }

    /// The entry's fields as journald takes them (`NAME=value`).
    static func journalFields(_ event: LogEvent, label: String, metadata: Logger.Metadata) -> [String] {
        var fields = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(syslogPriority(event.level))",
            "SYSLOG_IDENTIFIER=swiftwing",
            "COMPONENT=\(label)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            fields.append("\(journalFieldName(key))=\(value)")
        }
        return fields
    }

    /// journald field names: upper case `A-Z0-9_`, not starting with `_` or a digit.
    static func journalFieldName(_ key: String) -> String {
        var name = String(key.uppercased().map { ($0.isASCII && ($0.isLetter || $0.isNumber)) ? $0 : "_" })
        while name.hasPrefix("_") { name.removeFirst() }
        if name.isEmpty || name.first!.isNumber { name = "F" + name }
        return name
    }

    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
