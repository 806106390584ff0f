import Foundation
import TOMLKit

/// A configuration that cannot be used: where the bad value is, what is wrong, and how to fix it.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Origin: Equatable, Sendable {
        case file(path: String, line: Int?)
        case environment(variable: String)
        case flag(String)
    }

    public var origin: Origin
    /// `camera.width`, or empty when the problem is the file as a whole.
    public var key: String
    public var problem: String
    public var fix: String

    public var description: String {
        let place: String
        switch origin {
        case .file(let path, let line?): place = "\(path):\(line)"
        case .file(let path, nil): place = path
        case .environment(let variable): place = "environment variable \(variable)"
        case .flag(let flag): place = "flag \(flag)"
        }
        let subject = key.isEmpty ? "" : " \(key):"
        return "\(place):\(subject) \(problem). Fix: \(fix)."
    }
}

/// Builds an ``ApplianceConfiguration`` from defaults, a TOML file, the environment and flags.
public enum ConfigurationLoader {
    /// - Parameters:
    ///   - path: the TOML file, which must exist; `nil` means `defaultPath` if it exists, else the
    ///     defaults (a fresh install has no file).
    ///   - environment: usually `ProcessInfo.processInfo.environment`; `SWIFTWING_SECTION_KEY` overrides.
    ///   - overrides: values from flags, as (`section.key`, text, flag name), applied last.
    public static func load(
        path: String?,
        environment: [String: String],
        overrides: [(key: String, value: String, flag: String)] = [],
        defaultPath: String = ApplianceConfiguration.defaultPath
    ) throws(ConfigurationError) -> ApplianceConfiguration {
        var configuration = ApplianceConfiguration()
        let filePath = path ?? defaultPath
        if FileManager.default.fileExists(atPath: filePath) {
            let text: String
            do {
                text = try String(contentsOfFile: filePath, encoding: .utf8)
            } catch {
                throw ConfigurationError(
                    origin: .file(path: filePath, line: nil), key: "",
                    problem: "cannot be read (\(error.localizedDescription))",
                    fix: "check that the file exists, is UTF-8 text and readable by the swiftwing user")
            }
            try apply(toml: text, path: filePath, to: &configuration)
        } else if path != nil {
            throw ConfigurationError(
                origin: .file(path: filePath, line: nil), key: "", problem: "does not exist",
                fix:
                    "give the path of an existing file, or copy the example: cp config/swiftwing.example.toml \(filePath)"
            )
        }
        for key in ConfigurationKey.all {
            guard let text = environment[key.environmentName] else { continue }
            try apply(text: text, to: key, origin: .environment(variable: key.environmentName), into: &configuration)
        }
        for override in overrides {
            let parts = override.key.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let key = ConfigurationKey.named(section: parts[0], name: parts[1]) else {
                preconditionFailure("flag \(override.flag) maps to unknown key \(override.key)")
            }
            try apply(text: override.value, to: key, origin: .flag(override.flag), into: &configuration)
        }
        return configuration
    }

    /// Applies a TOML document; every unknown key or wrong type is an error naming its line.
    static func apply(toml text: String, path: String, to configuration: inout ApplianceConfiguration)
        throws(ConfigurationError)
    {
        if let header = TOMLHeaderCheck.firstHeaderWithoutName(in: text) {
            throw ConfigurationError(
                origin: .file(path: path, line: header.line), key: "",
                problem: "is not valid TOML at column \(header.column) (a table header must start with a name)",
                fix: "write the section name right after the bracket, e.g. [camera]; quote a name with other characters"
            )
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError(
                origin: .file(path: path, line: error.source.begin.line), key: "",
                problem: "is not valid TOML at column \(error.source.begin.column) (\(error.description))",
                fix: "correct the syntax on that line; strings need double quotes, tables are written [section]")
        } catch {
            throw ConfigurationError(
                origin: .file(path: path, line: nil), key: "", problem: "is not valid TOML (\(error))",
                fix: "correct the syntax; compare with config/swiftwing.example.toml")
        }
        let locator = TOMLLineLocator(text: text)
        // Sorted so that the first error reported is the first one in the file.
        for (sectionName, sectionValue) in table.sorted(by: {
            locator.line(section: $0.0, key: nil) ?? 0 < locator.line(section: $1.0, key: nil) ?? 0
        }) {
            guard let section = sectionValue.table else {
                let line = locator.line(section: nil, key: sectionName)
                let home = ConfigurationKey.all.first { $0.name == sectionName }?.section
                throw ConfigurationError(
                    origin: .file(path: path, line: line), key: sectionName, problem: "is outside any [section]",
                    fix: home.map { "move it under [\($0)]" } ?? "remove it; known sections are \(knownSections)")
            }
            guard ConfigurationKey.all.contains(where: { $0.section == sectionName }) else {
                throw ConfigurationError(
                    origin: .file(path: path, line: locator.line(section: sectionName, key: nil)), key: sectionName,
                    problem: "is not a known section", fix: "use one of \(knownSections)")
            }
            for (name, value) in section {
                let line = locator.line(section: sectionName, key: name)
                guard let key = ConfigurationKey.named(section: sectionName, name: name) else {
                    throw ConfigurationError(
                        origin: .file(path: path, line: line), key: "\(sectionName).\(name)",
                        problem: "is not a known key",
                        fix: suggestion(for: name, in: sectionName))
                }
                let raw: RawConfigurationValue
                switch value.type {
                case .string: raw = .string(value.string ?? "")
                case .int: raw = .integer(value.int ?? 0)
                case .double: raw = .double(value.double ?? 0)
                case .bool: raw = .bool(value.bool ?? false)
                default: raw = .other(typeName: "a \(value.type)")
                }
                do {
                    try key.apply(&configuration, raw)
                } catch {
                    throw ConfigurationError(
                        origin: .file(path: path, line: line), key: key.path, problem: message(of: error),
                        fix: "write \(name) = \(key.example) (\(key.kind.example))")
                }
            }
        }
    }

    private static func apply(
        text: String, to key: ConfigurationKey, origin: ConfigurationError.Origin,
        into configuration: inout ApplianceConfiguration
    ) throws(ConfigurationError) {
        do {
            try key.apply(&configuration, key.value(fromText: text))
        } catch {
            throw ConfigurationError(
                origin: origin, key: key.path, problem: message(of: error), fix: "give e.g. \(key.example)")
        }
    }

    private static func message(of error: any Error) -> String {
        (error as? ConfigurationValueError)?.message ?? "\(error)"
    }

    private static var knownSections: String {
        var seen: [String] = []
        for key in ConfigurationKey.all where !seen.contains(key.section) { seen.append(key.section) }
        return seen.map { "[\($0)]" }.joined(separator: ", ")
    }

    private static func suggestion(for name: String, in section: String) -> String {
        let candidates = ConfigurationKey.all.filter { $0.section == section }
        let closest = candidates.min { editDistance($0.name, name) < editDistance($1.name, name) }
        if let closest, editDistance(closest.name, name) <= 3 {
            return
                "did you mean `\(closest.name)`? Known keys in [\(section)]: \(candidates.map(\.name).joined(separator: ", "))"
        }
        return "remove it; known keys in [\(section)] are \(candidates.map(\.name).joined(separator: ", "))"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}

/// Finds the line of a `[section]` header or a `key = ` inside it, for error messages (TOMLKit
/// reports positions only for syntax errors).
struct TOMLLineLocator {
    private let lines: [Substring]

    init(text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// 1-based line number; `section == nil` searches top-level keys before the first header.
    func line(section: String?, key: String?) -> Int? {
        var current: String? = nil
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                current = line.dropFirst().prefix { $0 != "]" }.trimmingCharacters(in: .whitespaces)
                if key == nil, current == section { return index + 1 }
                continue
            }
            guard let key, current == section else { continue }
            let name = line.prefix { $0 != "=" }.trimmingCharacters(in: .whitespaces)
            if line.contains("="), name == key || name == "\"\(key)\"" { return index + 1 }
        }
        return nil
    }
}
