/// Builds an NSKeyedArchiver archive the way Foundation lays one out: `$objects` starting with
/// `$null`, each object before its members, class dictionaries (`$classname`, `$classes`)
/// shared by all instances, equal strings stored once; encoded as a binary plist.
struct KeyedArchiveBuilder {
    private(set) var objects: [PlistValue] = [.string("$null")]
    private var classes: [String: Int] = [:]
    private var strings: [String: Int] = [:]

    /// A reference to `text`, stored once.
    mutating func string(_ text: String) -> PlistValue {
        if let uid = strings[text] { return .uid(uid) }
        objects.append(.string(text))
        strings[text] = objects.count - 1
        return .uid(objects.count - 1)
    }

    /// A reference to an optional string: `$null` (CF$UID 0) for nil, as Swift's
    /// `encode(_: Any?, forKey:)` writes it.
    mutating func optionalString(_ text: String?) -> PlistValue {
        text.map { string($0) } ?? .uid(0)
    }

    /// A reference to a plain value stored as its own object (such as NSData).
    mutating func value(_ value: PlistValue) -> PlistValue {
        objects.append(value)
        return .uid(objects.count - 1)
    }

    /// Reserves an object's slot, so it precedes the members `fields` will add.
    mutating func reserve() -> Int {
        objects.append(.string("$null"))
        return objects.count - 1
    }

    /// Fills a reserved slot with an object of class `chain` (most derived first).
    mutating func fill(_ uid: Int, classes chain: [String], fields: [(String, PlistValue)]) {
        objects[uid] = .dictionary(fields + [("$class", classReference(chain))])
    }

    /// An object of class `chain` with `fields`.
    mutating func object(classes chain: [String], fields: [(String, PlistValue)]) -> PlistValue {
        let uid = reserve()
        fill(uid, classes: chain, fields: fields)
        return .uid(uid)
    }

    /// An NSDate holding `seconds` since 2001.
    mutating func date(_ seconds: Double) -> PlistValue {
        object(classes: ["NSDate", "NSObject"], fields: [("NS.time", .real(seconds))])
    }

    /// An NSArray of `members` (references made by the caller, after the array's own slot).
    mutating func array(_ members: (inout KeyedArchiveBuilder) -> [PlistValue]) -> PlistValue {
        let uid = reserve()
        let refs = members(&self)
        fill(uid, classes: ["NSArray", "NSObject"], fields: [("NS.objects", .array(refs))])
        return .uid(uid)
    }

    private mutating func classReference(_ chain: [String]) -> PlistValue {
        let name = chain[0]
        if let uid = classes[name] { return .uid(uid) }
        objects.append(
            .dictionary([("$classname", .string(name)), ("$classes", .array(chain.map { .string($0) }))]))
        classes[name] = objects.count - 1
        return .uid(objects.count - 1)
    }

    /// The archive with `root` as `$top.root`, as binary plist bytes.
    func encode(root: PlistValue) -> [UInt8] {
        BinaryPlistWriter.encode(
            .dictionary([
                ("$version", .integer(100_000)),
                ("$archiver", .string("NSKeyedArchiver")),
                ("$top", .dictionary([("root", root)])),
                ("$objects", .array(objects)),
            ]))
    }
}
