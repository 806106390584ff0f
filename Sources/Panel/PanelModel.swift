import SwiftWingCore

/// Whether the device can reach its backend, as the top bar shows it.
public enum Connectivity: Hashable, Sendable, CustomStringConvertible {
    case online
    case offline
    /// The backend asked the device to wait; `retryAfterSeconds` counts down on the panel as m:ss.
    case rateLimited(retryAfterSeconds: Int)
    /// The backend has all the work it will take now (a 503 with `Retry-After`); counts down as m:ss too.
    case busy(retryAfterSeconds: Int)
    /// The backend refused the device's key.
    case unauthorized

    /// The words on the top bar: "ONLINE", "OFFLINE", "RATE LIMITED 1:05", "BACKEND BUSY 0:10", "UNAUTHORIZED".
    public var description: String {
        switch self {
        case .online: "ONLINE"
        case .offline: "OFFLINE"
        case .rateLimited(let seconds): "RATE LIMITED " + Self.countdown(seconds)
        case .busy(let seconds): "BACKEND BUSY " + Self.countdown(seconds)
        case .unauthorized: "UNAUTHORIZED"
        }
    }

    /// Seconds as m:ss.
    private static func countdown(_ seconds: Int) -> String {
        let seconds = max(seconds, 0)
        return "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }
}

/// Where one scan is on its way to the library; the colour of its thumbnail's border.
public enum ScanTileState: String, Hashable, Sendable, CaseIterable {
    /// Queued while the device is offline: gray.
    case waiting
    /// Being sent: yellow.
    case uploading
    /// Sent, the backend is reading the spines: blue.
    case analyzing
    /// Books landed in the library: green (the daemon drops the tile 5 s later).
    case done
    /// Gave up or refused: red.
    case failed
}

/// A picture for the panel (a thumbnail or a viewfinder frame), compared by identity: two values are
/// equal when they hold the same buffer and frame number, so an unchanged picture is not redrawn.
public struct PanelPicture: Sendable, Equatable {
    public var frame: YUV420Frame

    public init(_ frame: YUV420Frame) {
        self.frame = frame
    }

    public static func == (lhs: PanelPicture, rhs: PanelPicture) -> Bool {
        lhs.frame.buffer === rhs.frame.buffer && lhs.frame.sequence == rhs.frame.sequence
            && lhs.frame.timestamp == rhs.frame.timestamp && lhs.frame.layout == rhs.frame.layout
    }
}

/// One scan in the strip of latest scans.
public struct ScanTile: Sendable, Equatable, Identifiable {
    public var id: String
    public var state: ScanTileState
    public var thumbnail: PanelPicture?

    public init(id: String, state: ScanTileState, thumbnail: PanelPicture? = nil) {
        self.id = id
        self.state = state
        self.thumbnail = thumbnail
    }
}

/// The book most recently added to the library.
public struct LatestBook: Sendable, Equatable {
    public var title: String
    public var authors: [String]
    public var isbn: String?
    /// The backend's confidence in the reading, 0…1; below ``reviewThreshold`` the panel marks it "REVIEW".
    public var confidence: Double?

    /// Below this confidence a book is marked for review: 0.8.
    public static let reviewThreshold = 0.8

    public init(title: String, authors: [String] = [], isbn: String? = nil, confidence: Double? = nil) {
        self.title = title
        self.authors = authors
        self.isbn = isbn
        self.confidence = confidence
    }

    public var needsReview: Bool { (confidence ?? 1) < Self.reviewThreshold }
}

/// What the panel shows while a browser may pair with the library in a browser: the code to enter, the page's
/// address, and a QR code for a phone's camera that opens the pairing form with the code filled in.
public struct PanelPairing: Sendable, Equatable {
    /// The 6-digit code.
    public var code: String
    /// `http://192.168.1.20:8080/`.
    public var address: String
    /// The pairing URL (`http://192.168.1.20:8080/pair?code=482913`) as a QR code; nil draws the text alone.
    public var qrCode: QRModules?
    /// How long the code still works, counted down on the panel as m:ss.
    public var secondsLeft: Int

    public init(code: String, address: String, qrCode: QRModules?, secondsLeft: Int) {
        self.code = code
        self.address = address
        self.qrCode = qrCode
        self.secondsLeft = secondsLeft
    }

    /// `4:59`.
    public var timeLeft: String {
        let seconds = max(secondsLeft, 0)
        return "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }
}

/// A message that takes the whole screen until the condition ends.
public enum PanelNotice: Sendable, Equatable {
    case cameraMissing(device: String)
    case diskFull(freeMegabytes: Int)
    case backendUnauthorized
    case exportFinished(books: Int, safeToRemove: Bool)
    /// Anything else: a heading and a line of advice.
    case message(title: String, detail: String)
    /// A browser may pair: the code, the address and its QR code (drawn in a layout of their own).
    case pairing(PanelPairing)

    /// The heading, in capitals.
    public var title: String {
        switch self {
        case .cameraMissing: "CAMERA MISSING"
        case .diskFull: "DISK FULL"
        case .backendUnauthorized: "UNAUTHORIZED"
        case .exportFinished: "EXPORT DONE"
        case .message(let title, _): title
        case .pairing: "PAIR A BROWSER"
        }
    }

    /// What happened and what to do.
    public var detail: String {
        switch self {
        case .cameraMissing(let device):
            "No picture from \(device). Check the cable; scanning resumes by itself."
        case .diskFull(let free):
            "Only \(free) MB left. Queued scans are kept; free space on the card."
        case .backendUnauthorized:
            "The backend refused this device's key. Scans stay queued; renew the key."
        case .exportFinished(let books, let safe):
            "Exported \(books) \(books == 1 ? "book" : "books")" + (safe ? " — safe to remove" : " — do not remove yet")
        case .message(_, let detail): detail
        // Not the code: the detail is text that may be quoted elsewhere; the code is drawn, never written out.
        case .pairing(let pairing):
            "Open \(pairing.address) on a phone or computer on the same network and enter the code."
        }
    }

    /// Whether the notice reports a success (drawn in white rather than orange).
    public var isGoodNews: Bool {
        if case .exportFinished(_, true) = self { return true }
        return false
    }
}

/// Everything the status panel shows: a value the daemon builds and hands to ``StatusPanel``.
public struct PanelModel: Sendable, Equatable {
    public var connectivity: Connectivity
    public var queued: Int
    public var library: Int
    /// Spines read but not identified, waiting for the owner: shown beside the library count when there are any.
    public var toCheck: Int
    public var latestBook: LatestBook?
    /// The latest scans, newest first; as many as fit are drawn.
    public var strip: [ScanTile]
    /// The live viewfinder frame while idle (any size: it is scaled to its box), or nil for none.
    public var viewfinder: PanelPicture?
    /// A full-screen notice, drawn instead of everything else.
    public var notice: PanelNotice?
    /// The white flash of a press, drawn over everything.
    public var flash: Bool

    public init(
        connectivity: Connectivity = .offline, queued: Int = 0, library: Int = 0, latestBook: LatestBook? = nil,
        strip: [ScanTile] = [], viewfinder: PanelPicture? = nil, notice: PanelNotice? = nil, flash: Bool = false,
        toCheck: Int = 0
    ) {
        self.connectivity = connectivity
        self.queued = queued
        self.library = library
        self.toCheck = toCheck
        self.latestBook = latestBook
        self.strip = strip
        self.viewfinder = viewfinder
        self.notice = notice
        self.flash = flash
    }
}
