import Foundation

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms, read by
/// hand: a DateFormatter would load ICU into the daemon for one header.
///
/// Day and month names match in any case; the day name must be one, but is not checked against
/// the date (RFC 9110 leaves that to the sender).
public enum HTTPDate {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`;
    /// `nil` for anything else. A leap second (`:60`) is the first second of the next minute.
    public static func parse(_ text: String) -> Date? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        switch words.count {
        case 6:  // IMF-fixdate
            guard words[0].hasSuffix(","), shortDays.contains(words[0].dropLast().lowercased()), words[5] == "GMT",
                let day = number(words[1], digits: 2...2), let month = month(words[2]),
                let year = number(words[3], digits: 4...4)
            else { return nil }
            return date(year: year, month: month, day: day, time: words[4])
        case 4:  // RFC 850
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard words[0].hasSuffix(","), longDays.contains(words[0].dropLast().lowercased()), words[3] == "GMT",
                parts.count == 3, let day = number(parts[0], digits: 2...2), let month = month(parts[1]),
                let shortYear = number(parts[2], digits: 2...2)
            else { return nil }
            // Two-digit years: 70–99 are 19xx, 00–69 are 20xx.
            return date(year: shortYear + (shortYear >= 70 ? 1900 : 2000), month: month, day: day, time: words[2])
        case 5:  // asctime
            guard shortDays.contains(words[0].lowercased()), let month = month(words[1]),
                let day = number(words[2], digits: 1...2), let year = number(words[4], digits: 4...4)
            else { return nil }
            return date(year: year, month: month, day: day, time: words[3])
        default:
            return nil
        }
    }

    private static let shortDays: Set = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays: Set = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func month(_ word: Substring) -> Int? {
        months.firstIndex(of: word.lowercased()).map { $0 + 1 }
    }

    /// The decimal value of `word` when it is only ASCII digits, as many as `digits` allows.
    private static func number(_ word: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(word.utf8.count) else { return nil }
        var value = 0
        for byte in word.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// `HH:MM:SS` on that day, UTC; `nil` when a field is out of range or the day is not in the month.
    private static func date(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = number(parts[0], digits: 2...2),
            let minute = number(parts[1], digits: 2...2), let second = number(parts[2], digits: 2...2),
            hour < 24, minute < 60, second <= 60, year >= 1, day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return month == 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].contains(month) ? 30 : 31
    }

    /// Days from 1970-01-01 (proleptic Gregorian; H. Hinnant's "days from civil"), for years 1 and later.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let yearFromMarch = month <= 2 ? year - 1 : year
        let era = yearFromMarch / 400
        let yearOfEra = yearFromMarch - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    }
}
