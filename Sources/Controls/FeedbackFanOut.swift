/// Several kinds of feedback as one: the buzzer and the panel both hear every press.
///
/// Calls go out in order, so put the fastest-to-act first (the buzzer line, then the panel, which
/// only records a state change for its own thread to draw).
public struct FeedbackFanOut: PressFeedback {
    private let targets: [any PressFeedback]

    public init(_ targets: [any PressFeedback]) {
        self.targets = targets
    }

    public func pressAccepted(_ press: ShutterPress) { for target in targets { target.pressAccepted(press) } }
    public func pressRefused(_ press: ShutterPress, reason: String) {
        for target in targets { target.pressRefused(press, reason: reason) }
    }
    public func scanSaved(_ press: ShutterPress) { for target in targets { target.scanSaved(press) } }
    public func longPress(_ press: ShutterPress) { for target in targets { target.longPress(press) } }
    public func frameCaptured(_ press: ShutterPress) { for target in targets { target.frameCaptured(press) } }
    public func notice(_ notice: FeedbackNotice) { for target in targets { target.notice(notice) } }
}
