import Foundation
import Synchronization

/// The owner's own library as a catalogue that grows: a SwiftWing export of the device's library (books awaiting
/// review left out, ``CatalogueImport``), which the device rewrites as books land and the owner confirms them. It is
/// searched first, so a book confirmed once is matched from the owner's few books next time, not from thousands.
/// The file may not exist yet (a new kiosk) and changes while the service runs: before each photo its size and
/// modification time are compared with the last ones seen, and its index is opened again (rebuilt) when they differ.
public final class LibraryCatalogueMatcher: SpineMatching {
    public let path: String
    let options: MatchingOptions
    let indexPath: String?
    /// Told when the file becomes unusable (the reason) and when it is usable again (nil): the service logs it.
    let report: (@Sendable (String?) -> Void)?
    private let state = Mutex<(stamp: String?, matcher: CatalogueMatcher?, problem: String?)>((nil, nil, nil))

    /// Why the file as last seen could not be used, if it could not (for the service's log).
    public var problem: String? { state.withLock { $0.problem } }

    /// `indexPath` defaults to ``CatalogueIndex/defaultIndexPath(catalogue:)``.
    public init(
        path: String, indexPath: String? = nil, options: MatchingOptions = MatchingOptions(),
        report: (@Sendable (String?) -> Void)? = nil
    ) {
        self.path = path
        self.indexPath = indexPath
        self.options = options
        self.report = report
    }

    public func assign(_ spines: [String]) throws -> [SpineMatch?] {
        guard let matcher = current() else { return spines.map { _ in nil } }
        return try matcher.assign(spines)
    }

    /// The matcher over the file as it is now; nil while there is no file or it holds no confirmed book.
    func current() -> CatalogueMatcher? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let stamp = attributes.map {
            "\(($0[.size] as? NSNumber)?.int64Value ?? -1) \(($0[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
        let (matcher, change) = state.withLock { state -> (CatalogueMatcher?, String??) in
            if state.stamp == stamp { return (state.matcher, nil) }
            var matcher: CatalogueMatcher?
            var problem: String?
            if stamp != nil {
                do {
                    let index = try CatalogueIndex.open(catalogue: path, indexPath: indexPath)
                    matcher = index.entryCount > 0 ? CatalogueMatcher(index: index, options: options) : nil
                } catch {
                    // A damaged file must not fail every photo: the other catalogues still match, and the next
                    // rewrite of the file is tried again.
                    problem = "\(error)"
                }
            }
            let change: String?? = problem == state.problem ? nil : .some(problem)
            state = (stamp, matcher, problem)
            return (matcher, change)
        }
        if let change { report?(change) }
        return matcher
    }
}
