import Foundation

/// Follows references through a `KeyedArchive`, one object at a time, keeping the chain of
/// objects being decoded: an object met again on its own chain is a reference cycle, an error
/// rather than endless recursion. (Cycles elsewhere in the archive are legal and never visited.)
final class KeyedDecoding {
    let archive: KeyedArchive
    private var chain: [Int] = []

    init(_ archive: KeyedArchive) { self.archive = archive }

    /// An archived object: its fields and its class chain.
    struct Object {
        var uid: Int
        var fields: PlistValue
        var classes: [String]
        var className: String { classes[0] }
    }

    /// Decodes the object `uid` with `body`, refusing `$null` and cycles.
    func withObject<T>(_ uid: Int, context: String, _ body: (Object) throws(HomepwnerError) -> T) throws(HomepwnerError)
        -> T
    {
        if chain.contains(uid) {
            let path = (chain + [uid]).map(String.init).joined(separator: " -> ")
            throw archive.failure("a CF$UID reference cycle (\(path)) at \(context)")
        }
        guard let value = try archive.resolve(uid, from: context) else {
            throw archive.failure("\(context) is $null")
        }
        guard case .dictionary = value else { throw archive.failure("\(context) is \(value.kind), not an object") }
        let object = Object(uid: uid, fields: value, classes: try archive.classes(of: value, uid: uid))
        chain.append(uid)
        defer { chain.removeLast() }
        return try body(object)
    }

    /// The members of an NSArray (`NS.objects`) as references.
    func arrayMembers(_ object: Object) throws(HomepwnerError) -> [Int] {
        guard object.classes.contains(where: { $0 == "NSArray" || $0 == "NSMutableArray" }) else {
            throw archive.failure("object \(object.uid) is an \(object.className), expected an array of items")
        }
        guard case .array(let members)? = object.fields["NS.objects"] else {
            throw archive.failure("the array (object \(object.uid)) has no NS.objects")
        }
        var uids: [Int] = []
        for (index, member) in members.enumerated() {
            guard case .uid(let uid) = member else {
                throw archive.failure("member \(index) of the array is \(member.kind), not a reference")
            }
            uids.append(uid)
        }
        return uids
    }

    /// A string field: a reference to a string, to an NSString object, or `$null`/absent (nil).
    func string(_ object: Object, _ key: String) throws(HomepwnerError) -> String? {
        let context = "\(key) of object \(object.uid)"
        guard let field = object.fields[key] else { return nil }
        guard case .uid(let uid) = field else { throw archive.failure("\(context) is \(field.kind), not a reference") }
        if chain.contains(uid) || uid == object.uid {
            throw archive.failure("a CF$UID reference cycle: \(context) refers back to object \(uid)")
        }
        switch try archive.resolve(uid, from: context) {
        case nil: return nil
        case .string(let text)?: return text
        case let value? where value["$class"] != nil:
            return try withObject(uid, context: context) { (string: Object) throws(HomepwnerError) -> String in
                if case .string(let text)? = string.fields["NS.string"] { return text }
                if case .data(let bytes)? = string.fields["NS.bytes"], let text = String(bytes: bytes, encoding: .utf8)
                {
                    return text
                }
                throw archive.failure("\(context) is an \(string.className), not a string")
            }
        case let value?: throw archive.failure("\(context) is \(value.kind), not a string")
        }
    }

    /// An integer field (encodeInt / encodeInteger); nil when absent.
    func integer(_ object: Object, _ key: String) throws(HomepwnerError) -> Int64? {
        switch object.fields[key] {
        case nil: return nil
        case .integer(let value)?: return value
        case .bool(let flag)?: return flag ? 1 : 0
        case let value?: throw archive.failure("\(key) of object \(object.uid) is \(value.kind), not an integer")
        }
    }

    /// An NSDate field as seconds since 2001 (`NS.time`); nil when absent or `$null`.
    func date(_ object: Object, _ key: String) throws(HomepwnerError) -> Double? {
        let context = "\(key) of object \(object.uid)"
        guard let field = object.fields[key] else { return nil }
        guard case .uid(let uid) = field else { throw archive.failure("\(context) is \(field.kind), not a reference") }
        if uid == 0 { return nil }
        return try withObject(uid, context: context) { (date: Object) throws(HomepwnerError) -> Double in
            guard date.classes.contains("NSDate") else {
                throw archive.failure("\(context) is an \(date.className), not an NSDate")
            }
            switch date.fields["NS.time"] {
            case .real(let seconds)?: return seconds
            case .integer(let seconds)?: return Double(seconds)
            default: throw archive.failure("\(context) has no NS.time")
            }
        }
    }
}
