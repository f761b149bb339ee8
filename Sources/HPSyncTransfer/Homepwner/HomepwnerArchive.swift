import Foundation
import HPSyncModel

/// `items.archive`: an NSKeyedArchiver archive whose root is an array of items, `BNRItem` in
/// the Objective-C editions and `Item` (archived as `Homepwner.Item`) in the Swift ones.
public enum HomepwnerArchive {
    /// Which class the writer archives items as.
    public enum Style: String, Sendable, CaseIterable {
        /// `Homepwner.Item`: `name`, `serialNumber`, `valueInDollars` (Int), `dateCreated`, `itemKey`.
        case swift
        /// `BNRItem`: `itemName`, `serialNumber`, `valueInDollars` (32-bit), `dateCreated`, `itemKey`.
        case objectiveC = "objc"
    }

    /// Decodes every item of the archive in `data`; `file` names it in errors.
    static func decode(_ data: Data, file: String) throws(HomepwnerError) -> (HomepwnerEdition, [HomepwnerItem]) {
        var items: [HomepwnerItem] = []
        let edition = try forEach(try KeyedArchive(data: data, file: file)) { items.append($0) }
        return (edition, items)
    }

    /// How many items the `items.archive` at `url` holds, decoded one at a time from a memory
    /// map and dropped, and its edition; nil when the lazy reader cannot vouch for every item,
    /// in which case `decode` reads the file whole and words the fault as it always has.
    static func count(_ url: URL) -> (HomepwnerEdition, Int)? {
        var count = 0
        guard let reader = try? BinaryPlistReader(mapping: url),
            let archive = try? KeyedArchive(reader: reader, file: url.path),
            let edition = try? forEach(archive, { _ in count += 1 })
        else { return nil }
        return (edition, count)
    }

    /// Calls `body` with each item of the `items.archive` at `url` (one `count` vouched for),
    /// decoded one at a time; `file` names it in errors.
    static func forEachItem(_ url: URL, file: String, _ body: (HomepwnerItem) throws -> Void) throws {
        let changed = HomepwnerError.malformed(file: file, reason: "changed while being imported; import again")
        guard let reader = try? BinaryPlistReader(mapping: url),
            let archive = try? KeyedArchive(reader: reader, file: file)
        else { throw changed }
        var thrown: (any Error)?
        do {
            _ = try forEach(archive) { (item) throws(HomepwnerError) in
                do {
                    try body(item)
                } catch {
                    thrown = error
                    throw changed
                }
            }
        } catch {
            throw thrown ?? changed
        }
    }

    /// The items of `archive` in order, and the edition that wrote them.
    private static func forEach(
        _ archive: KeyedArchive, _ body: (HomepwnerItem) throws(HomepwnerError) -> Void
    ) throws(HomepwnerError) -> HomepwnerEdition {
        let decoding = KeyedDecoding(archive)
        var editions = Set<HomepwnerEdition>()
        try decoding.withObject(archive.root, context: "$top.root") { (root) throws(HomepwnerError) -> Void in
            for (index, uid) in try decoding.arrayMembers(root).enumerated() {
                let item = try decoding.withObject(uid, context: "item \(index)") {
                    (object) throws(HomepwnerError) -> HomepwnerItem in
                    let (edition, item) = try decodeItem(object, index: index, decoding)
                    editions.insert(edition)
                    return item
                }
                try body(item)
                if index % 65_536 == 65_535 { archive.releasePages() }
            }
        }
        guard editions.count <= 1 else {
            throw archive.failure("the archive mixes item classes of several editions")
        }
        return editions.first ?? .swift
    }

    private static func decodeItem(_ object: KeyedDecoding.Object, index: Int, _ decoding: KeyedDecoding)
        throws(HomepwnerError) -> (HomepwnerEdition, HomepwnerItem)
    {
        let fail = { (reason: String) in decoding.archive.failure("item \(index) (object \(object.uid)) \(reason)") }
        let className = object.className.split(separator: ".").last.map(String.init) ?? object.className
        let edition: HomepwnerEdition
        let nameKey: String
        let keyKey: String
        switch className {
        case "BNRItem":
            nameKey = "itemName"
            keyKey = object.fields["itemKey"] == nil && object.fields["imageKey"] != nil ? "imageKey" : "itemKey"
            edition = keyKey == "imageKey" ? .objectiveCImageKey : .objectiveC
        case "Item":
            nameKey = "name"
            keyKey = "itemKey"
            edition = .swift
        default:
            throw fail("is an \(object.className), not a BNRItem or Item")
        }
        guard let keyText = try decoding.string(object, keyKey) else { throw fail("has no \(keyKey)") }
        let key: ItemKey
        do {
            key = try ItemKey(keyText)
        } catch {
            throw fail("has a malformed \(keyKey): \(error)")
        }
        guard let seconds = try decoding.date(object, "dateCreated") else { throw fail("has no dateCreated") }
        guard let milliseconds = ReferenceDate.milliseconds(fromReferenceSeconds: seconds) else {
            throw fail("has an impossible dateCreated (\(seconds) s since 2001)")
        }
        let item = HomepwnerItem(
            key: key, keyText: keyText, name: try decoding.string(object, nameKey) ?? "",
            serialNumber: try decoding.string(object, "serialNumber"),
            valueInDollars: try decoding.integer(object, "valueInDollars") ?? 0, dateCreatedMilliseconds: milliseconds)
        return (edition, item)
    }

    /// Refuses an item whose value the Objective-C app's 32-bit `valueInDollars` cannot hold.
    static func checkObjectiveCValue(_ item: HomepwnerItem) throws(HomepwnerError) {
        guard Int32(exactly: item.valueInDollars) == nil else { return }
        throw .cannotExport(
            reason: "item \(item.key) is worth \(item.valueInDollars) dollars, more than the Objective-C app's "
                + "32-bit valueInDollars holds; export with --class swift")
    }

    /// The archive of `items` as the app of `style` writes it (binary plist).
    public static func encode(_ items: [HomepwnerItem], style: Style) throws(HomepwnerError) -> [UInt8] {
        if style == .objectiveC { for item in items { try checkObjectiveCValue(item) } }
        var builder = KeyedArchiveBuilder()
        let root = builder.array { builder in
            items.map { item in
                let uid = builder.reserve()
                let date = builder.date(ReferenceDate.referenceSeconds(fromMilliseconds: item.dateCreatedMilliseconds))
                let fields: [(String, PlistValue)]
                switch style {
                case .swift:
                    fields = [
                        ("name", builder.string(item.name)),
                        ("serialNumber", builder.optionalString(item.serialNumber)),
                        ("valueInDollars", .integer(item.valueInDollars)), ("dateCreated", date),
                        ("itemKey", builder.string(item.key.rawValue)),
                    ]
                    builder.fill(uid, classes: ["Homepwner.Item", "NSObject"], fields: fields)
                case .objectiveC:
                    fields = [
                        ("itemName", builder.string(item.name)),
                        ("serialNumber", builder.optionalString(item.serialNumber)), ("dateCreated", date),
                        ("itemKey", builder.string(item.key.rawValue)),
                        ("valueInDollars", .integer(item.valueInDollars)),
                    ]
                    builder.fill(uid, classes: ["BNRItem", "NSObject"], fields: fields)
                }
                return .uid(uid)
            }
        }
        return builder.encode(root: root)
    }
}
