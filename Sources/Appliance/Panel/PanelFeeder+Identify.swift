import Panel
import Store

extension PanelFeeder: ScanOutcomeDisplay {
    /// Long enough to read an ISBN, short enough not to hide the next press's result.
    static let outcomeNoticeTime: Duration = .seconds(4)

    func showIdentified(isbns: [String]) {
        show(.message(title: "ISBN", detail: isbns.joined(separator: "  ")), for: Self.outcomeNoticeTime)
    }

    func showPoorFrame(_ quality: ScanQuality) {
        show(Self.poorFrameNotice(quality), for: Self.outcomeNoticeTime)
    }

    static func poorFrameNotice(_ quality: ScanQuality) -> PanelNotice {
        switch quality.verdict {
        case .dark: .message(title: "TOO DARK", detail: "Too dark")
        case .bright: .message(title: "TOO BRIGHT", detail: "Too bright — shade the shelf")
        case .blurry, .good: .message(title: "BLURRY", detail: "Blurry — hold still and press again")
        }
    }
}
