/// `items.archive` written item by item (the streamed `export-homepwner`), in the layout
/// `HomepwnerArchive.encode` builds whole: `$objects` starts with `$null`, the root NSArray
/// (CF$UID 1) and the three class dictionaries, then each item's objects (the item, its
/// NSDate, name, serial, key). Strings are not shared between items: a table of them was most
/// of the 2.2 GB a 1,000,000-item export held.
final class KeyedArchiveStream: HomepwnerItemStream {
    private let plist: BinaryPlistStream
    private let style: HomepwnerArchive.Style
    /// The plist references of the archive objects from CF$UID 5 on, in order.
    private let objects: SpoolFile
    /// Each item's CF$UID (8 bytes each), for the root array written at the end.
    private let itemUIDs: SpoolFile
    private var nextUID = 5
    private var items = 0
    /// Plist references of the shared objects: key strings, class UIDs, the `$null` UID.
    private var shared: [String: Int] = [:]
    private var head: [Int] = []

    init(style: HomepwnerArchive.Style, count: Int, files: HomepwnerExportFiles) throws(HomepwnerError) {
        self.style = style
        objects = try files.sideList("objects")
        itemUIDs = try files.sideList("uids")
        // At most 13 objects an item (9 of them its own plist scalars), and about 40 shared.
        plist = try BinaryPlistStream(
            output: files.output, offsets: try files.sideList("offsets"), maxObjects: 64 + 14 * count)
        let keys =
            [
                "$null", "$class", "$classname", "$classes", "NSObject", "NS.time", "NS.objects", "root", "$version",
                "$archiver", "$top", "$objects", "NSKeyedArchiver", "NSDate", "NSArray", Self.className(style),
            ] + Self.fieldNames(style)
        for key in keys { shared[key] = try plist.add(.string(key)) }
        for (name, uid) in [("uid 0", 0), ("uid item class", 2), ("uid date class", 3), ("uid array class", 4)] {
            shared[name] = try plist.add(.uid(uid))
        }
        head = [shared["$null"]!, -1]
        for name in [Self.className(style), "NSDate", "NSArray"] {
            let chain = try plist.addArray([shared[name]!, shared["NSObject"]!])
            head.append(
                try plist.addDictionary([(shared["$classname"]!, shared[name]!), (shared["$classes"]!, chain)]))
        }
    }

    func add(_ item: HomepwnerItem) throws(HomepwnerError) {
        if style == .objectiveC { try HomepwnerArchive.checkObjectiveCValue(item) }
        let uid = nextUID
        let name = try plist.add(.string(item.name))
        let serial = try item.serialNumber.map { (text) throws(HomepwnerError) in try plist.add(.string(text)) }
        let key = try plist.add(.string(item.key.rawValue))
        let time = try plist.add(.real(ReferenceDate.referenceSeconds(fromMilliseconds: item.dateCreatedMilliseconds)))
        let date = try plist.addDictionary([(shared["NS.time"]!, time), (shared["$class"]!, shared["uid date class"]!)])
        // CF$UIDs: the item, its date, name, serial (if any), key.
        let nameUID = try plist.add(.uid(uid + 2))
        let serialUID = serial == nil ? shared["uid 0"]! : try plist.add(.uid(uid + 3))
        let keyUID = try plist.add(.uid(uid + (serial == nil ? 3 : 4)))
        let dateUID = try plist.add(.uid(uid + 1))
        let value = try plist.add(.integer(item.valueInDollars))
        let names = Self.fieldNames(style).map { shared[$0]! }
        let values =
            style == .swift
            ? [nameUID, serialUID, value, dateUID, keyUID] : [nameUID, serialUID, dateUID, keyUID, value]
        let object = try plist.addDictionary(
            Array(zip(names, values)) + [(shared["$class"]!, shared["uid item class"]!)])
        for ref in [object, date, name] + (serial.map { [$0] } ?? []) + [key] { try plist.spool(ref, to: objects) }
        try itemUIDs.append(bigEndian: UInt64(uid), width: 8)
        nextUID += serial == nil ? 4 : 5
        items += 1
    }

    func finish() throws(HomepwnerError) {
        // The root array's member UIDs written together: the array names a range of references.
        let first = plist.count
        try itemUIDs.forEachChunk { (bytes) throws(HomepwnerError) in
            for index in stride(from: 0, to: bytes.count, by: 8) {
                _ = try plist.add(
                    .uid(Int(UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)))))
            }
        }
        let members = try plist.addArray(first: first, count: items)
        head[1] = try plist.addDictionary([
            (shared["NS.objects"]!, members), (shared["$class"]!, shared["uid array class"]!),
        ])
        let all = try plist.addArray(head: head, spooled: objects)
        let top = try plist.addDictionary([(shared["root"]!, try plist.add(.uid(1)))])
        let root = try plist.addDictionary([
            (shared["$version"]!, try plist.add(.integer(100_000))),
            (shared["$archiver"]!, shared["NSKeyedArchiver"]!), (shared["$top"]!, top), (shared["$objects"]!, all),
        ])
        try plist.finish(top: root)
    }

    private static func className(_ style: HomepwnerArchive.Style) -> String {
        style == .swift ? "Homepwner.Item" : "BNRItem"
    }

    /// The item's fields in the order each edition's app encodes them (`$class` last).
    private static func fieldNames(_ style: HomepwnerArchive.Style) -> [String] {
        style == .swift
            ? ["name", "serialNumber", "valueInDollars", "dateCreated", "itemKey"]
            : ["itemName", "serialNumber", "dateCreated", "itemKey", "valueInDollars"]
    }
}
