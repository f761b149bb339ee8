import Foundation

/// A property-list value with keyed-archive UIDs kept apart from integers, so an archive can be
/// read and written without NSKeyedUnarchiver and its class registry.
public enum PlistValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case data([UInt8])
    /// Seconds since 2001-01-01 UTC, as a plist stores dates.
    case date(Double)
    /// A `CF$UID` reference: an index into an archive's `$objects`.
    case uid(Int)
    case array([PlistValue])
    /// Entries in the order they were written (kept for reproducible output).
    case dictionary([(String, PlistValue)])

    public static func == (lhs: PlistValue, rhs: PlistValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.uid(let a), .uid(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The value under `key` of a dictionary, else nil.
    public subscript(key: String) -> PlistValue? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first { $0.0 == key }?.1
    }

    /// A short name of the value's kind, for error messages.
    var kind: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .real: return "a real number"
        case .bool: return "a boolean"
        case .data: return "data"
        case .date: return "a date"
        case .uid: return "a CF$UID reference"
        case .array: return "an array"
        case .dictionary: return "a dictionary"
        }
    }
}

extension PlistValue {
    /// Parses binary or XML property-list bytes with Foundation and converts the result.
    ///
    /// Foundation surfaces UIDs differently by platform: `_NSKeyedArchiverUID` with a `value`
    /// field on Linux, `__NSCFType` ("<CFKeyedArchiverUID ...>{value = N}") on Darwin, and
    /// a plain `{"CF$UID": N}` dictionary in hand-written XML. All three become `.uid`.
    static func parse(_ data: Data) throws -> PlistValue {
        if let problem = BinaryPlistPrecheck.problem(Array(data)) { throw Unsupported(description: problem) }
        let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        return try convert(object)
    }

    struct Unsupported: Error, CustomStringConvertible {
        var description: String
    }

    private static func convert(_ object: Any) throws -> PlistValue {
        switch object {
        case let text as String: return .string(text)
        case let data as Data: return .data(Array(data))
        case let date as Date: return .date(date.timeIntervalSinceReferenceDate)
        case let array as [Any]: return .array(try array.map(convert))
        case let dictionary as [AnyHashable: Any]:
            var entries: [(String, PlistValue)] = []
            for (key, value) in dictionary {
                guard let key = key.base as? String else { throw Unsupported(description: "a non-string key") }
                entries.append((key, try convert(value)))
            }
            entries.sort { $0.0 < $1.0 }
            if entries.count == 1, entries[0].0 == "CF$UID", case .integer(let n) = entries[0].1 {
                guard n >= 0 && n <= Int64(UInt32.max) else {
                    throw Unsupported(description: "a CF$UID of \(n)")
                }
                return .uid(Int(n))
            }
            return .dictionary(entries)
        default:
            if let uid = uidValue(object) { return .uid(uid) }
            if let number = object as? NSNumber { return number.plistValue }
            throw Unsupported(description: "an object of type \(type(of: object))")
        }
    }

    private static func uidValue(_ object: Any) -> Int? {
        let typeName = String(describing: type(of: object))
        let text = (object as? NSObject)?.description ?? ""
        guard typeName.contains("KeyedArchiverUID") || text.contains("CFKeyedArchiverUID") else { return nil }
        for child in Mirror(reflecting: object).children where child.label == "value" {
            if let value = child.value as? UInt32 { return Int(value) }
            if let value = child.value as? Int { return value }
        }
        // Darwin: "<CFKeyedArchiverUID 0x...>{value = 7}".
        guard let range = text.range(of: "value = ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }
}

extension NSNumber {
    fileprivate var plistValue: PlistValue {
        switch String(cString: objCType) {
        case "d", "f": return .real(doubleValue)
        case "c", "B": return .bool(boolValue)
        case "Q": return uint64Value > UInt64(Int64.max) ? .real(doubleValue) : .integer(int64Value)
        default: return .integer(int64Value)
        }
    }
}
