import Controls
import Logging
import Panel
import SwiftWingCore
import Synchronization

/// What `swiftwing export --device` tells the daemon (it runs as its own unit, started by udev):
/// the panel shows the outcome and the buzzer plays the export pattern on success.
///
/// "Do not remove" stays on the panel while an export runs: until its own finished or failed
/// message, or until its process has ended (an export killed or crashed says nothing more; the
/// panel then says it stopped). Nothing else takes it down: not a timer, not another stick's
/// failure (a second stick refused while the first is written is named under the first's notice).
final class ExportNotices: Sendable {
    /// How long the outcome stays up.
    static let outcomeShownFor: Duration = .seconds(30)

    private struct Export: Sendable {
        var device: String
        var books: Int
        /// The export's process, when it said which it is.
        var process: ProcessWatch?
        /// Other sticks refused while this one is written.
        var refused: [String] = []
    }

    private struct Outputs: Sendable {
        var show: @Sendable (PanelNotice, Duration) -> Void
        var feedback: any PressFeedback
    }

    private let running = Mutex<[Export]>([])
    private let outputs = Mutex<Outputs?>(nil)
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    convenience init(
        show: @escaping @Sendable (PanelNotice, Duration) -> Void, feedback: any PressFeedback, logger: Logger
    ) {
        self.init(logger: logger)
        connect(show: show, feedback: feedback)
    }

    /// Where outcomes go: the panel (for ``outcomeShownFor``) and the buzzer.
    func connect(show: @escaping @Sendable (PanelNotice, Duration) -> Void, feedback: any PressFeedback) {
        outputs.withLock { $0 = Outputs(show: show, feedback: feedback) }
    }

    func handle(_ request: ControlRequest) -> ControlReply {
        let device = request.device ?? ""
        switch request.command {
        case .exportStarted:
            let books = request.books ?? 0
            // Opened while the exporter waits for this reply, so the id is still its own.
            let process = request.pid.flatMap { $0 > 1 ? try? ProcessWatch(pid: $0) : nil }
            running.withLock { running in
                running.removeAll { $0.device == device }
                running.append(Export(device: device, books: books, process: process))
            }
            logger.info("export to a USB stick started", metadata: ["books": "\(books)", "device": "\(device)"])
        case .exportFinished:
            let books = request.books ?? 0
            running.withLock { $0.removeAll { $0.device == device } }
            let outputs = outputs.withLock { $0 }
            outputs?.show(.exportFinished(books: books, safeToRemove: true), Self.outcomeShownFor)
            outputs?.feedback.notice(.exportDone)
            logger.notice(
                "exported \(books) books — safe to remove the USB stick",
                metadata: ["file": "\(request.file ?? "")", "device": "\(device)"])
        case .exportFailed:
            let reason = request.reason ?? "no reason given"
            logger.warning("export to a USB stick failed: \(reason)", metadata: ["device": "\(device)"])
            let writingAnother = running.withLock { running in
                running.removeAll { $0.device == device }
                guard !running.isEmpty else { return false }
                running[0].refused.append(device.isEmpty ? "another stick" : device)
                return true
            }
            if !writingAnother {
                outputs.withLock { $0 }?.show(.message(title: "EXPORT FAILED", detail: reason), Self.outcomeShownFor)
            }
        default:
            return .refused("\(request.command.rawValue) is not an export message")
        }
        return ControlReply(ok: true)
    }

    /// "Do not remove" while an export runs, else nil. Called at each panel refresh: an export whose
    /// process has ended without a word ends here, with a notice that says so.
    func current() -> PanelNotice? {
        let (ended, first) = running.withLock { running in
            let ended = running.filter { $0.process?.hasEnded == true }
            running.removeAll { $0.process?.hasEnded == true }
            return (ended, running.first)
        }
        for export in ended {
            logger.warning(
                "the export to a USB stick ended without saying how: see its unit's journal",
                metadata: ["device": "\(export.device)"])
            let detail = "The export stopped without finishing. Plug the stick in again, or see the journal."
            outputs.withLock { $0 }?.show(.message(title: "EXPORT FAILED", detail: detail), Self.outcomeShownFor)
        }
        guard let first else { return nil }
        return Self.writingNotice(first)
    }

    private static func writingNotice(_ export: Export) -> PanelNotice {
        var detail =
            "Writing \(export.books) \(export.books == 1 ? "book" : "books") to the USB stick — do not remove it."
        if !export.refused.isEmpty {
            detail += " \(export.refused.joined(separator: ", ")) was left alone: plug it in again after this one."
        }
        return .message(title: "EXPORTING", detail: detail)
    }
}
