import Foundation

/// An NSKeyedArchiver archive read as the property list it is: `$archiver`, `$version`,
/// `$top` and `$objects`, with `CF$UID` references resolved here rather than by
/// NSKeyedUnarchiver, so archives written on Apple platforms load on Linux without class
/// registration.
struct KeyedArchive {
    /// The file name shown in errors.
    let file: String
    /// `$objects`, whole or in a memory map, decoded as they are resolved.
    private let objects: Objects
    /// How many `$objects` there are.
    let count: Int
    /// The index in `$objects` of `$top.root`.
    let root: Int

    private enum Objects {
        case values([PlistValue])
        case mapped(BinaryPlistReader, BinaryPlistReader.References)
    }

    init(data: Data, file: String) throws(HomepwnerError) {
        self.file = file
        let plist: PlistValue
        do {
            plist = try PlistValue.parse(data)
        } catch {
            let size = data.count
            throw .malformed(
                file: file, reason: "not a readable property list (\(size) bytes; truncated or corrupted?): \(error)")
        }
        guard case .dictionary = plist else {
            throw .malformed(file: file, reason: "the archive is \(plist.kind), not a dictionary")
        }
        guard case .string(let archiver)? = plist["$archiver"] else {
            throw .malformed(file: file, reason: "no $archiver: not a keyed archive")
        }
        guard archiver == "NSKeyedArchiver" else {
            throw .malformed(file: file, reason: "$archiver is '\(archiver)', expected 'NSKeyedArchiver'")
        }
        guard case .integer(let version)? = plist["$version"], version == 100_000 else {
            throw .malformed(file: file, reason: "$version is not 100000: an unknown archive version")
        }
        guard case .array(let objects)? = plist["$objects"], !objects.isEmpty else {
            throw .malformed(file: file, reason: "$objects is missing or empty")
        }
        guard objects[0] == .string("$null") else {
            throw .malformed(file: file, reason: "$objects does not start with $null")
        }
        guard case .uid(let root)? = plist["$top"]?["root"] else {
            throw .malformed(file: file, reason: "$top has no root reference")
        }
        guard root > 0 && root < objects.count else {
            throw .malformed(file: file, reason: "$top.root is CF$UID \(root), outside $objects (0..<\(objects.count))")
        }
        self.objects = .values(objects)
        self.count = objects.count
        self.root = root
    }

    /// The archive in `reader`: the top dictionary checked as `init(data:file:)` checks it,
    /// each object decoded when it is resolved.
    init(reader: BinaryPlistReader, file: String) throws {
        self.file = file
        func fail(_ what: String) -> BinaryPlistReader.Failure { BinaryPlistReader.Failure(description: what) }
        guard case .dictionary(let keys, let values) = try reader.node(reader.top) else { throw fail("no dictionary") }
        var fields: [String: Int] = [:]
        for index in 0..<keys.count {
            fields[try reader.string(reader.reference(keys, index))] = reader.reference(values, index)
        }
        guard let archiver = fields["$archiver"], try reader.string(archiver) == "NSKeyedArchiver",
            let version = fields["$version"], case .scalar(.integer(100_000)) = try reader.node(version),
            let list = fields["$objects"], case .array(let objects) = try reader.node(list), objects.count > 0,
            try reader.value(reader.reference(objects, 0)) == .string("$null"),
            let top = fields["$top"], case .uid(let root)? = try reader.value(top, depth: 2)["root"],
            root > 0 && root < objects.count
        else { throw fail("not a keyed archive this reader vouches for") }
        self.objects = .mapped(reader, objects)
        self.count = objects.count
        self.root = root
    }

    /// Hands the pages of a mapped archive read so far back to the kernel.
    func releasePages() {
        if case .mapped(let reader, _) = objects { reader.releasePages() }
    }

    func failure(_ reason: String) -> HomepwnerError { .malformed(file: file, reason: reason) }

    /// The object a reference names: nil for `$null`, an error for an index outside `$objects`.
    func resolve(_ uid: Int, from context: String) throws(HomepwnerError) -> PlistValue? {
        guard uid >= 0 && uid < count else {
            throw failure("\(context) refers to CF$UID \(uid), outside $objects (0..<\(count))")
        }
        if uid == 0 { return nil }
        switch objects {
        case .values(let values):
            return values[uid]
        case .mapped(let reader, let references):
            do {
                return try reader.value(reader.reference(references, uid), depth: 4)
            } catch {
                throw failure("object \(uid) is not readable: \(error)")
            }
        }
    }

    /// The class chain of an archived object (`$classes`, most derived first).
    func classes(of object: PlistValue, uid: Int) throws(HomepwnerError) -> [String] {
        guard case .uid(let classUID)? = object["$class"] else {
            throw failure("object \(uid) is \(object.kind) without a $class")
        }
        guard let info = try resolve(classUID, from: "the $class of object \(uid)"),
            case .array(let names)? = info["$classes"]
        else { throw failure("the class of object \(uid) (CF$UID \(classUID)) has no $classes") }
        var result: [String] = []
        for case .string(let name) in names { result.append(name) }
        if result.isEmpty, case .string(let name)? = info["$classname"] { result = [name] }
        guard !result.isEmpty else { throw failure("the class of object \(uid) has no name") }
        return result
    }
}
