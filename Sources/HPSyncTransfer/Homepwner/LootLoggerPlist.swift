import Foundation
import HPSyncModel

/// `items.plist`: the LootLogger edition's Codable `[Item]` through PropertyListEncoder (binary),
/// whose `Date` is a plist date (seconds since 2001) and whose nil `serialNumber` is absent.
public enum LootLoggerPlist {
    /// The app's `Item`, field for field.
    struct Item: Codable {
        var name: String
        var valueInDollars: Int
        var serialNumber: String?
        var dateCreated: Date
        var itemKey: String
    }

    static func decode(_ data: Data, file: String) throws(HomepwnerError) -> [HomepwnerItem] {
        if let problem = BinaryPlistPrecheck.problem(Array(data)) { throw .malformed(file: file, reason: problem) }
        let decoded: [Item]
        do {
            decoded = try PropertyListDecoder().decode([Item].self, from: data)
        } catch let error as DecodingError {
            throw .malformed(file: file, reason: "not a LootLogger item list (\(error.fieldDescription))")
        } catch {
            throw .malformed(file: file, reason: "not a readable property list: \(error)")
        }
        var items: [HomepwnerItem] = []
        for (index, item) in decoded.enumerated() {
            let key: ItemKey
            do {
                key = try ItemKey(item.itemKey)
            } catch {
                throw .malformed(file: file, reason: "item \(index) has a malformed itemKey: \(error)")
            }
            let seconds = item.dateCreated.timeIntervalSinceReferenceDate
            guard let milliseconds = ReferenceDate.milliseconds(fromReferenceSeconds: seconds) else {
                throw .malformed(file: file, reason: "item \(index) has an impossible dateCreated")
            }
            items.append(
                HomepwnerItem(
                    key: key, keyText: item.itemKey, name: item.name, serialNumber: item.serialNumber,
                    valueInDollars: Int64(item.valueInDollars), dateCreatedMilliseconds: milliseconds))
        }
        return items
    }

    /// How many items the `items.plist` at `url` holds, decoded one at a time from a memory map
    /// and dropped; nil when the lazy reader cannot vouch for every item (not a binary plist, or
    /// anything unusual or faulty), in which case `decode` reads the file whole and words the
    /// fault as it always has.
    static func count(_ url: URL) -> Int? {
        var count = 0
        do {
            guard let reader = try BinaryPlistReader(mapping: url) else { return nil }
            try forEach(reader) { _ in count += 1 }
        } catch {
            return nil
        }
        return count
    }

    /// Calls `body` with each item of the `items.plist` at `url` (one `count` vouched for),
    /// decoded one at a time; `file` names it in errors.
    static func forEachItem(_ url: URL, file: String, _ body: (HomepwnerItem) throws -> Void) throws {
        let reader: BinaryPlistReader?
        do {
            reader = try BinaryPlistReader(mapping: url)
        } catch {
            throw HomepwnerError.malformed(file: file, reason: "changed while being imported; import again")
        }
        guard let reader else {
            throw HomepwnerError.malformed(file: file, reason: "changed while being imported; import again")
        }
        do {
            try forEach(reader, body)
        } catch is BinaryPlistReader.Failure {
            throw HomepwnerError.malformed(file: file, reason: "changed while being imported; import again")
        }
    }

    /// The items of `reader` in order, each field checked as `PropertyListDecoder` checks
    /// `[Item]`; a `BinaryPlistReader.Failure` for anything else.
    private static func forEach(_ reader: BinaryPlistReader, _ body: (HomepwnerItem) throws -> Void) throws {
        func fail(_ what: String) -> BinaryPlistReader.Failure { BinaryPlistReader.Failure(description: what) }
        guard case .array(let members) = try reader.node(reader.top) else { throw fail("the top is no array") }
        for index in 0..<members.count {
            guard case .dictionary(let keys, let values) = try reader.node(reader.reference(members, index)) else {
                throw fail("item \(index) is no dictionary")
            }
            var name: String?
            var value: Int64?
            var serial: String?
            var date: Double?
            var keyText: String?
            for field in 0..<keys.count {
                let valueNode = try reader.node(reader.reference(values, field))
                switch (try reader.string(reader.reference(keys, field)), valueNode) {
                case ("name", .scalar(.string(let text))): name = text
                case ("valueInDollars", .scalar(.integer(let number))): value = number
                case ("serialNumber", .scalar(.string(let text))): serial = text
                case ("dateCreated", .scalar(.date(let seconds))): date = seconds
                case ("itemKey", .scalar(.string(let text))): keyText = text
                case ("name", _), ("valueInDollars", _), ("serialNumber", _), ("dateCreated", _), ("itemKey", _):
                    throw fail("item \(index) has a field of the wrong type")
                default: continue
                }
            }
            guard let name, let value, let date, let keyText, Int(exactly: value) != nil,
                let key = try? ItemKey(keyText),
                let milliseconds = ReferenceDate.milliseconds(fromReferenceSeconds: date)
            else { throw fail("item \(index) is incomplete or invalid") }
            try body(
                HomepwnerItem(
                    key: key, keyText: keyText, name: name, serialNumber: serial, valueInDollars: value,
                    dateCreatedMilliseconds: milliseconds))
            if index % 65_536 == 65_535 { reader.releasePages() }
        }
    }

    /// The binary plist the app writes for `items`.
    public static func encode(_ items: [HomepwnerItem]) throws(HomepwnerError) -> [UInt8] {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let appItems = items.map { item in
            Item(
                name: item.name, valueInDollars: Int(item.valueInDollars), serialNumber: item.serialNumber,
                dateCreated: Date(
                    timeIntervalSinceReferenceDate: ReferenceDate.referenceSeconds(
                        fromMilliseconds: item.dateCreatedMilliseconds)),
                itemKey: item.key.rawValue)
        }
        do {
            return Array(try encoder.encode(appItems))
        } catch {
            throw .cannotExport(reason: "cannot encode items.plist: \(error)")
        }
    }
}
