import Store

/// Where the pipeline shows what a frame turned out to be, the moment it knows (the panel).
public protocol ScanOutcomeDisplay: Sendable {
    /// Books were read from barcodes in the frame.
    func showIdentified(isbns: [String])
    /// The frame was too poor to upload; the operator should take it again.
    func showPoorFrame(_ quality: ScanQuality)
}
