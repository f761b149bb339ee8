import HPSyncModel

/// A fragment of HTML. Interpolated strings are escaped; only `HTML` values (built the same
/// way) go in as they are, so a name like `<script>` or `"quoted"` can only ever be text.
struct HTML: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    private(set) var text: String

    init(stringLiteral value: String) { text = value }
    init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }
    /// Trusted markup made in this module (never user input).
    init(trusted: String) { text = trusted }

    var description: String { text }

    static let empty = HTML(trusted: "")

    /// Joins fragments without a separator.
    static func join(_ parts: some Sequence<HTML>) -> HTML {
        HTML(trusted: parts.map(\.text).joined())
    }

    /// Escapes text for element content and quoted attribute values alike.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity * 2) }

        mutating func appendLiteral(_ literal: String) { text += literal }
        mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }
        mutating func appendInterpolation(_ value: String?) { text += HTML.escape(value ?? "") }
        mutating func appendInterpolation(_ value: HTML) { text += value.text }
        mutating func appendInterpolation(_ values: [HTML]) { text += values.map(\.text).joined() }
        mutating func appendInterpolation(_ value: Int) { text += String(value) }
        mutating func appendInterpolation(_ value: Int64) { text += String(value) }
    }
}

/// Formatting shared by the pages.
enum Format {
    /// Whole dollars with thousands separators: 1234567 -> "$1,234,567".
    static func dollars(_ value: Int64) -> String {
        grouped(String(value.magnitude), negative: value < 0)
    }

    /// A total with thousands separators; a saturated one (`DollarTotal`) says it is a bound.
    static func dollars(_ total: DollarTotal) -> String {
        (total.isSaturated ? (total.isNegative ? "< " : "> ") : "")
            + grouped(total.magnitudeDigits, negative: total.isNegative)
    }

    private static func grouped(_ digits: String, negative: Bool) -> String {
        var grouped = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (negative ? "-$" : "$") + grouped
    }

    /// A time people read: "2024-01-02 03:04:05 UTC" (no milliseconds, no ISO "T").
    static func time(_ milliseconds: Int64) -> String {
        let iso = DateText.iso8601(milliseconds: milliseconds)
        return iso.prefix(10) + " " + iso.dropFirst(11).prefix(8) + " UTC"
    }

    /// A version as people read it: when it was made and by which node, not the raw 64-bit
    /// stamp (whose counter only orders edits within one millisecond).
    static func version(_ version: Version) -> String {
        "edited \(time(Int64(clamping: version.stamp.milliseconds))) on node \(version.origin.short)"
    }

    /// Percent-encodes a query parameter value (RFC 3986 unreserved bytes stay as they are).
    static func query(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
