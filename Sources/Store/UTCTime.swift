import Foundation
import GRDB

/// A date's fields in UTC (proleptic Gregorian) by integer arithmetic: H. Hinnant's "days from civil"
/// and its inverse. Calendar, DateFormatter and ISO8601DateFormatter load ICU, whose code and data
/// pages then count in the daemon's resident memory; the daemon formats and reads its dates with this.
public struct UTCDateParts: Equatable, Sendable {
    public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

    /// The fields of the whole second at or before `date` (0.5 s before 1970 is 1969-12-31 23:59:59).
    public init(_ date: Date) {
        self.init(secondsSince1970: Int(date.timeIntervalSince1970.rounded(.down)))
    }

    public init(secondsSince1970 seconds: Int) {
        let (days, secondOfDay) = Self.floorDivision(seconds, 86_400)
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second) = (hour, minute, second)
    }

    /// Seconds since 1970-01-01 00:00:00 UTC. A month outside 1…12, a day past the month's end or an
    /// hour past 23 rolls over into the next field, as a lenient calendar does.
    public var secondsSince1970: Int {
        let (yearCarry, monthIndex) = Self.floorDivision(month - 1, 12)
        let days = Self.daysSince1970(year: year + yearCarry, month: monthIndex + 1) + day - 1
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// `2026-11-18T11:06:40Z`: the form ISO8601DateFormatter writes with its default options.
    public var iso8601: String {
        "\(Self.pad(year, 4))-\(Self.pad(month))-\(Self.pad(day))T"
            + "\(Self.pad(hour)):\(Self.pad(minute)):\(Self.pad(second))Z"
    }

    /// `value` in decimal, zero-padded to `width` digits (a sign, if any, comes first).
    public static func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(value.magnitude)
        let padded = digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
        return value < 0 ? "-" + padded : padded
    }

    /// Days from 1970-01-01 to the first of `month` (1…12) of `year`.
    static func daysSince1970(year: Int, month: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func floorDivision(_ value: Int, _ divisor: Int) -> (quotient: Int, remainder: Int) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }
}

/// Dates in the database as GRDB stores them, `yyyy-MM-dd HH:mm:ss.SSS` in UTC, without GRDB's
/// formatter: `Date.databaseValue` and reading a `Date` column go through a DateFormatter and a
/// Calendar with an `en_US_POSIX` locale, which load ICU. Query arguments, record columns and
/// fetched dates all use this instead; the text is byte for byte GRDB's (the tests compare them),
/// so databases written either way read the same.
public enum StorageTimestamp {
    /// `2026-11-18 11:06:40.123`: to the nearest millisecond (a half rounds up), as GRDB's formatter does.
    public static func string(from date: Date) -> String {
        // The same arithmetic as the formatter: milliseconds since 1970 from the reference-date interval.
        let milliseconds = ((date.timeIntervalSinceReferenceDate + 978_307_200) * 1000 + 0.5).rounded(.down)
        // Millions of years away (or infinite): no clock gives such a date; GRDB's formatter may have it.
        guard milliseconds.isFinite, abs(milliseconds) < 1e17 else {
            return String.fromDatabaseValue(date.databaseValue) ?? ""
        }
        let (seconds, millisecond) = UTCDateParts.floorDivision(Int(milliseconds), 1000)
        let utc = UTCDateParts(secondsSince1970: seconds)
        return "\(UTCDateParts.pad(utc.year, 4))-\(UTCDateParts.pad(utc.month))-\(UTCDateParts.pad(utc.day)) "
            + "\(UTCDateParts.pad(utc.hour)):\(UTCDateParts.pad(utc.minute)):\(UTCDateParts.pad(utc.second))."
            + UTCDateParts.pad(millisecond, 3)
    }

    /// The text value to bind for `date` (a query argument or a column).
    public static func databaseValue(_ date: Date) -> DatabaseValue { string(from: date).databaseValue }

    /// What GRDB's `Date.fromDatabaseValue` reads: the SQLite date forms (`YYYY-MM-DD`, then optionally
    /// ` ` or `T` and `HH:MM`, `:SS`, `.SSS`), in UTC, or a number of seconds since 1970.
    public static func date(from value: DatabaseValue) -> Date? {
        if let parsed = DatabaseDateComponents.fromDatabaseValue(value) {
            switch parsed.format {
            case .YMD, .YMD_HM, .YMD_HMS, .YMD_HMSS:
                let fields = parsed.dateComponents
                guard let year = fields.year, let month = fields.month, let day = fields.day else { return nil }
                let utc = UTCDateParts(
                    year: year, month: month, day: day, hour: fields.hour ?? 0, minute: fields.minute ?? 0,
                    second: fields.second ?? 0)
                let seconds = Double(utc.secondsSince1970 - 978_307_200)
                return Date(timeIntervalSinceReferenceDate: seconds + Double(fields.nanosecond ?? 0) / 1e9)
            case .HM, .HMS, .HMSS:
                return nil  // a time of day is no date (GRDB refuses it too)
            }
        }
        return Double.fromDatabaseValue(value).map { Date(timeIntervalSince1970: $0) }
    }

    /// The date in `column` of `row`; an error naming the column when it holds none.
    public static func date(in row: Row, _ column: Column) throws -> Date {
        guard let date = try optionalDate(in: row, column) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "\(column.name) is NULL, not a date")
        }
        return date
    }

    /// The date in `column` of `row`, `nil` when NULL; an error naming the column when it holds no date.
    public static func optionalDate(in row: Row, _ column: Column) throws -> Date? {
        let value: DatabaseValue = row[column]
        if value.isNull { return nil }
        guard let date = date(from: value) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "\(column.name) is not a date: \(value)")
        }
        return date
    }

    /// For `Codable` records' `databaseDateEncodingStrategy(for:)`.
    public static let encodingStrategy = DatabaseDateEncodingStrategy.custom { string(from: $0) }
    /// For `Codable` records' `databaseDateDecodingStrategy(for:)`.
    public static let decodingStrategy = DatabaseDateDecodingStrategy.custom { date(from: $0) }
}
