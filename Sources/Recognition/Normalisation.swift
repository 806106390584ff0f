/// Text folding shared by the catalogue index and the matcher, so both sides of a comparison see the same forms:
/// lower case, no accents, letters and digits only, one space between words. Written over Unicode scalars with a
/// table for the Latin letters the catalogues hold (Spanish, Catalan, French, German, Portuguese), so neither side
/// needs ICU and a spine read without its accents ("GUIA DE LA MUSCULACION") meets "Guía de la musculación".
public enum Normalisation {
    /// `text` folded: lower case, accents dropped, every run of other characters one space, trimmed.
    public static func fold(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let folded = foldScalar(scalar)
            if folded.isEmpty {
                // A combining mark (a decomposed accent) vanishes without splitting the word.
                if isCombiningMark(scalar) { continue }
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            out.append(contentsOf: folded.unicodeScalars)
        }
        return String(out)
    }

    /// The folded words of `text`.
    public static func words(_ text: String) -> [String] {
        fold(text).split(separator: " ").map(String.init)
    }

    /// A catalogue title split at its first " : " (the catalogue form "Title : subtitle") or " / " (statement of
    /// responsibility): the part a spine prints, and the rest, which it often leaves out.
    public static func titleParts(_ title: String) -> (main: String, subtitle: String) {
        var cut = title.endIndex
        for separator in [" : ", " / ", " ; ", " = "] {
            if let range = title.range(of: separator), range.lowerBound < cut { cut = range.lowerBound }
        }
        if cut == title.endIndex { return (title, "") }
        let separatorEnd = title.index(cut, offsetBy: 3, limitedBy: title.endIndex) ?? title.endIndex
        return (String(title[..<cut]), String(title[separatorEnd...]))
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
