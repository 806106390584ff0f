import Controls
import Logging
import Panel

/// What `swiftwing export --device` tells the daemon (it runs as its own unit, started by udev):
/// the panel shows the outcome and the buzzer plays the export pattern on success.
struct ExportNotices: Sendable {
    /// How long "Exporting…" stays up at most (an export that dies says nothing more).
    static let writingShownFor: Duration = .seconds(120)
    /// How long the outcome stays up.
    static let outcomeShownFor: Duration = .seconds(30)

    let show: @Sendable (PanelNotice, Duration) -> Void
    let feedback: any PressFeedback
    let logger: Logger

    func handle(_ request: ControlRequest) -> ControlReply {
        switch request.command {
        case .exportStarted:
            let books = request.books ?? 0
            let detail = "Writing \(books) \(books == 1 ? "book" : "books") to the USB stick — do not remove it."
            show(.message(title: "EXPORTING", detail: detail), Self.writingShownFor)
            logger.info("export to a USB stick started", metadata: ["books": "\(books)"])
        case .exportFinished:
            let books = request.books ?? 0
            show(.exportFinished(books: books, safeToRemove: true), Self.outcomeShownFor)
            feedback.notice(.exportDone)
            logger.notice(
                "exported \(books) books — safe to remove the USB stick", metadata: ["file": "\(request.file ?? "")"])
        case .exportFailed:
            let reason = request.reason ?? "no reason given"
            show(.message(title: "EXPORT FAILED", detail: reason), Self.outcomeShownFor)
            logger.warning("export to a USB stick failed: \(reason)")
        default:
            return .refused("\(request.command.rawValue) is not an export message")
        }
        return ControlReply(ok: true)
    }
}
