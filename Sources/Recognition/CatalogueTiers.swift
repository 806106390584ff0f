import Foundation

/// Several catalogues searched in order, for one photo: the owner's own first (their Goodreads export, their
/// SwiftWing library), the shipped open catalogue last. A spine takes the first tier's match, unless that match is
/// below the review line and a later tier's is at or above it (a weak guess among the owner's few books loses to a
/// sure one among the popular ones); spines no tier matches stay unmatched. Each tier assigns its own spines once
/// per photo, so within a tier an entry still goes to at most one spine.
public struct TieredMatcher: SpineMatching {
    public let tiers: [any SpineMatching]
    /// The device's review line: at or above it a book lands without review (docs/protocol.md §3).
    public let sure: Double

    public init(tiers: [any SpineMatching], sure: Double = 0.8) {
        self.tiers = tiers
        self.sure = sure
    }

    public func assign(_ spines: [String]) throws -> [SpineMatch?] {
        var result = [SpineMatch?](repeating: nil, count: spines.count)
        for tier in tiers {
            // Spines with no sure match yet go on to the next tier.
            let open = spines.indices.filter { (result[$0]?.confidence ?? 0) < sure }
            guard !open.isEmpty else { break }
            let matches = try tier.assign(open.map { spines[$0] })
            guard matches.count == open.count else {
                throw MatcherContractError(spines: open.count, matches: matches.count)
            }
            for (spine, match) in zip(open, matches) {
                guard let match else { continue }
                if let earlier = result[spine], !(earlier.confidence < sure && match.confidence >= sure) { continue }
                result[spine] = match
            }
        }
        return result
    }
}

/// The open catalogue shipped with the recognizer (goodbooks-10k: the 10,000 most rated books on Goodreads, CC BY-SA
/// 4.0, Catalogues/goodbooks-10k/README.md): what `read` and `serve` match against when no catalogue is given, and
/// the last tier when one is.
public enum OpenCatalogue {
    /// Its place in a checkout.
    public static let checkoutPath = "Catalogues/goodbooks-10k/goodbooks-10k.csv"
    /// Its place when installed (`PREFIX/share/swiftwing/catalogues`, PREFIX /usr or /usr/local).
    static let installedName = "share/swiftwing/catalogues/goodbooks-10k.csv"

    /// `SWIFTWING_OPEN_CATALOGUE` when set; else the checkout above `root`, the current directory or the executable;
    /// else the installed copy beside the executable's prefix, /usr or /usr/local. Throws, naming where it looked.
    public static func locate(
        root: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OpenCatalogueMissing) -> String {
        let files = FileManager.default
        if let path = environment["SWIFTWING_OPEN_CATALOGUE"] {
            guard files.isReadableFile(atPath: path) else { throw OpenCatalogueMissing(looked: [path]) }
            return path
        }
        let executableFolder = URL(fileURLWithPath: CommandLine.arguments.first ?? "/").deletingLastPathComponent()
        var candidates: [String] = []
        for folder in [root].compactMap({ $0 }) + ancestorFolders(of: files.currentDirectoryPath)
            + ancestorFolders(of: executableFolder.path)
        {
            candidates.append("\(folder)/\(checkoutPath)")
        }
        candidates.append(executableFolder.deletingLastPathComponent().path + "/" + installedName)
        candidates += ["/usr/\(installedName)", "/usr/local/\(installedName)"]
        for candidate in candidates where files.isReadableFile(atPath: candidate) { return candidate }
        throw OpenCatalogueMissing(looked: Array(candidates.suffix(3)))
    }
}

/// No open catalogue where the recognizer looks for one.
public struct OpenCatalogueMissing: Error, CustomStringConvertible {
    public let looked: [String]
    public var description: String {
        "the shipped open catalogue is missing (looked in \(looked.joined(separator: ", ")) and a checkout's "
            + "\(OpenCatalogue.checkoutPath)): reinstall swiftwing, set SWIFTWING_OPEN_CATALOGUE to its CSV, or give "
            + "your own with --catalogue FILE"
    }
}

/// `path` and every folder above it, nearest first: where a checkout's files are looked for.
func ancestorFolders(of path: String) -> [String] {
    var result: [String] = []
    var url = URL(fileURLWithPath: path).standardizedFileURL
    while true {
        result.append(url.path)
        let parent = url.deletingLastPathComponent()
        if parent.path == url.path { return result }
        url = parent
    }
}
