import Foundation

/// An NSKeyedArchiver archive read as the property list it is: `$archiver`, `$version`,
/// `$top` and `$objects`, with `CF$UID` references resolved here rather than by
/// NSKeyedUnarchiver, so archives written on Apple platforms load on Linux without class
/// registration.
struct KeyedArchive {
    /// The file name shown in errors.
    let file: String
    let objects: [PlistValue]
    /// The index in `objects` of `$top.root`.
    let root: Int

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
        self.objects = objects
        self.root = root
    }

    func failure(_ reason: String) -> HomepwnerError { .malformed(file: file, reason: reason) }

    /// The object a reference names: nil for `$null`, an error for an index outside `$objects`.
    func resolve(_ uid: Int, from context: String) throws(HomepwnerError) -> PlistValue? {
        guard uid >= 0 && uid < objects.count else {
            throw failure("\(context) refers to CF$UID \(uid), outside $objects (0..<\(objects.count))")
        }
        return uid == 0 ? nil : objects[uid]
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
