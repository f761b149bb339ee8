/// `items.plist` written item by item (the streamed `export-homepwner`): the array of
/// dictionaries PropertyListEncoder writes for the LootLogger app's `[Item]`, a nil serial
/// left out, the field names shared.
final class LootLoggerPlistStream: HomepwnerItemStream {
    private let plist: BinaryPlistStream
    /// The plist references of the item dictionaries, in order.
    private let members: SpoolFile
    private var keys: [String: Int] = [:]

    init(count: Int, files: HomepwnerExportFiles) throws(HomepwnerError) {
        members = try files.sideList("members")
        plist = try BinaryPlistStream(
            output: files.output, offsets: try files.sideList("offsets"), maxObjects: 8 + 7 * count)
        for key in ["name", "valueInDollars", "serialNumber", "dateCreated", "itemKey"] {
            keys[key] = try plist.add(.string(key))
        }
    }

    func add(_ item: HomepwnerItem) throws(HomepwnerError) {
        var entries = [
            (keys["name"]!, try plist.add(.string(item.name))),
            (keys["valueInDollars"]!, try plist.add(.integer(item.valueInDollars))),
        ]
        if let serial = item.serialNumber { entries.append((keys["serialNumber"]!, try plist.add(.string(serial)))) }
        let seconds = ReferenceDate.referenceSeconds(fromMilliseconds: item.dateCreatedMilliseconds)
        entries.append((keys["dateCreated"]!, try plist.add(.date(seconds))))
        entries.append((keys["itemKey"]!, try plist.add(.string(item.key.rawValue))))
        try plist.spool(try plist.addDictionary(entries.map { (key: $0.0, value: $0.1) }), to: members)
    }

    func finish() throws(HomepwnerError) {
        try plist.finish(top: try plist.addArray(head: [], spooled: members))
    }
}
