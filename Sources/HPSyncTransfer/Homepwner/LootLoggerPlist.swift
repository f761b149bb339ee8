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
