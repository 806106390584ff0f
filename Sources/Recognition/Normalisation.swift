/// Text folding shared by the catalogue index and the matcher, so both sides of a comparison see the same forms:
/// lower case, no accents, letters and digits only, one space between words. Written over Unicode scalars with a
/// table for the Latin letters the catalogues hold (Spanish, Catalan, French, German, Portuguese), so neither side
/// needs ICU and a spine read without its accents ("GUIA DE LA MUSCULACION") meets "Guía de la musculación".
public enum Normalisation {
    /// `text` folded: lower case, accents dropped, every run of other characters one space, trimmed. ASCII, most of
    /// any catalogue or spine, is folded byte by byte; only other scalars go through the table.
    public static func fold(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let value = scalar.value
            var ascii: UInt8 = 0
            switch value {
            case 0x30...0x39, 0x61...0x7A: ascii = UInt8(value)
            case 0x41...0x5A: ascii = UInt8(value + 32)
            case 0..<0x80:
                pendingSpace = !out.isEmpty
                continue
            default: break
            }
            if ascii != 0 {
                if pendingSpace {
                    out.append(0x20)
                    pendingSpace = false
                }
                out.append(ascii)
                continue
            }
            let folded = foldScalar(scalar)
            if folded.isEmpty {
                // A combining mark (a decomposed accent) vanishes without splitting the word.
                if isCombiningMark(scalar) { continue }
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(0x20)
                pendingSpace = false
            }
            out.append(contentsOf: folded.utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The folded words of `text`.
    public static func words(_ text: String) -> [String] {
        fold(text).split(separator: " ").map(String.init)
    }

    /// A catalogue title split at its first " : " (the catalogue form "Title : subtitle") or " / " (statement of
    /// responsibility): the part a spine prints, and the rest, which it often leaves out.
    public static func titleParts(_ title: String) -> (main: String, subtitle: String) {
        // The separators are ASCII, so a scan of the UTF-8 bytes finds the first of them.
        let bytes = title.utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index] == 0x20,
                let mark = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex), mark != bytes.endIndex,
                isTitleSeparator(bytes[mark]),
                let after = bytes.index(mark, offsetBy: 1, limitedBy: bytes.endIndex), after != bytes.endIndex,
                bytes[after] == 0x20
            {
                return (String(title[..<index]), String(title[bytes.index(after: after)...]))
            }
            index = bytes.index(after: index)
        }
        return (title, "")
    }

    /// A personal name split into the surname a spine prints and the forenames: "Surname, Forename, 1919-2020"
    /// (library form, dates dropped) or "Forename Surname" (Goodreads and SwiftWing's own export).
    public static func nameParts(_ name: String) -> (surnames: [String], forenames: [String]) {
        let parts = name.split(separator: ",").map { String($0) }
        if parts.count >= 2 {
            let forenames = parts[1...].filter { part in !part.contains(where: { $0.isNumber }) }.flatMap(words)
            return (words(parts[0]), forenames)
        }
        let all = words(name).filter { word in !word.allSatisfy(\.isNumber) }
        guard let last = all.last else { return ([], []) }
        return ([last], Array(all.dropLast()))
    }

    /// Letters and digits as UTF-32 scalars, spaces dropped: the form the edit distances run on, so words OCR
    /// merged ("ELARTE") or split ("MUSCU LACION") still line up.
    public static func compact(_ folded: String) -> [UInt32] {
        folded.unicodeScalars.compactMap { $0 == " " ? nil : $0.value }
    }

    /// A call number as the key a spine label is looked up by: its folded letters and digits, spaces and marks
    /// dropped ("796.42 Mor", "796,42 MOR" → "796421m0r"), and the characters OCR confuses on labels taken as one
    /// (o and 0, i, l, j and 1, s and 5, b and 8, z and 2), so "JN Sch" read "IN Sch" or "79b.42" keeps its key.
    public static func callNumberKey(_ folded: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars where scalar != " " {
            switch scalar {
            case "o": out.append("0")
            case "i", "l", "j": out.append("1")
            case "s": out.append("5")
            case "b": out.append("8")
            case "z": out.append("2")
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// The keys a spine's label may be read as: every run of up to ``callNumberWords`` consecutive words of the
    /// folded spine, as ``callNumberKey(_:)`` forms it, of 3 to 24 characters. A label prints its class number and
    /// author mark as separate words ("796.42 Mor": 796, 42, mor), and OCR splits or joins them further.
    public static func callNumberKeys(words: [String]) -> [String] {
        var keys: [String] = []
        var seen = Set<String>()
        for start in words.indices {
            var run = ""
            for end in start..<min(words.count, start + callNumberWords) {
                run += words[end]
                if run.unicodeScalars.count > 24 { break }
                if run.unicodeScalars.count >= 3 {
                    let key = callNumberKey(run)
                    if seen.insert(key).inserted { keys.append(key) }
                }
            }
        }
        return keys
    }

    /// The most words one call number spans on a spine: "91(026)(46.79) San" reads as five.
    public static let callNumberWords = 6

    /// ":", "/", ";" and "=", the marks that part a catalogue title when spaced.
    private static func isTitleSeparator(_ byte: UInt8) -> Bool {
        byte == 0x3A || byte == 0x2F || byte == 0x3B || byte == 0x3D
    }

    private static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
        (0x0300...0x036F).contains(scalar.value)
    }

    /// One scalar folded to lower-case ASCII where the table knows it; other letters and digits lower-cased as they
    /// are; "" for anything else (punctuation, symbols, spaces, marks).
    static func foldScalar(_ scalar: Unicode.Scalar) -> String {
        let value = scalar.value
        switch value {
        case 0x30...0x39, 0x61...0x7A: return String(scalar)
        case 0x41...0x5A: return String(Unicode.Scalar(value + 32)!)
        case 0..<0x80: return ""
        default: break
        }
        if let mapped = latinFolds[value] { return mapped }
        let properties = scalar.properties
        if properties.isAlphabetic || properties.numericType != nil {
            return properties.lowercaseMapping
        }
        return ""
    }

    /// Latin-1 Supplement and Latin Extended-A letters to their base letters.
    private static let latinFolds: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        let groups: [(String, String)] = [
            ("ÀÁÂÃÄÅàáâãäåĀāĂăĄą", "a"), ("ÇçĆćĈĉĊċČč", "c"), ("ĎďĐđ", "d"), ("ÈÉÊËèéêëĒēĔĕĖėĘęĚě", "e"),
            ("ĜĝĞğĠġĢģ", "g"), ("ĤĥĦħ", "h"), ("ÌÍÎÏìíîïĨĩĪīĬĭĮįİı", "i"), ("Ĵĵ", "j"), ("Ķķ", "k"),
            ("ĹĺĻļĽľĿŀŁł", "l"), ("ÑñŃńŅņŇň", "n"), ("ÒÓÔÕÖØòóôõöøŌōŎŏŐő", "o"), ("ŔŕŖŗŘř", "r"),
            ("ŚśŜŝŞşŠš", "s"), ("ŢţŤťŦŧ", "t"), ("ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲų", "u"), ("Ŵŵ", "w"), ("ÝýÿŶŷŸ", "y"),
            ("ŹźŻżŽž", "z"), ("Ææ", "ae"), ("Œœ", "oe"), ("ß", "ss"), ("Þþ", "th"), ("Ðð", "d"),
            ("ªº", ""),
        ]
        for (letters, base) in groups {
            for scalar in letters.unicodeScalars { table[scalar.value] = base }
        }
        return table
    }()
}
