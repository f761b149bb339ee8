import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore

/// Reading back a CSV export, typically after editing it in a spreadsheet.
extension Store {
    /// Imports a CSV file in the export's columns (found by their header names, in any order;
    /// `name` is required, other columns are optional, unknown ones ignored). A CSV carries no
    /// versions: each row that differs from the local item becomes a local edit (a new item when
    /// the key is new), rows equal to it change nothing, so re-importing a file changes nothing.
    /// A row without a key (no `key` column, as in a spreadsheet of new items, or an empty cell)
    /// becomes a new item under a fresh key. Without an image column the local image stays; an empty one removes it.
    /// `imageMissing` `true` marks an image the export left out: it is recorded as missing.
    public func importCSV(from url: URL, imagesDirectory: URL?) throws -> ChangeSet {
        let exported = try csvChanges(from: url)
        var changes = ChangeSet()
        var start = 0
        while start < exported.count {
            let end = min(start + Self.importBatchSize, exported.count)
            changes.formUnion(try importBatch(Array(exported[start..<end]), imagesDirectory: imagesDirectory))
            start = end
        }
        return changes
    }

    /// The rows of the CSV at `url` that differ from the local items, as unversioned records.
    func csvChanges(from url: URL) throws -> [ExportedItem] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StoreError.missingImportFile(path: url.path)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw StoreError.invalidImport("the CSV is not UTF-8 text; save it as CSV UTF-8")
        }
        let rows = try CSVTable.rows(text)
        guard let header = rows.first else { throw StoreError.invalidImport("the CSV file is empty") }
        let columns = Dictionary(header.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        guard columns["name"] != nil else {
            throw StoreError.invalidImport(
                "the CSV's first row must name its columns, at least name (and key, to update items rather than add "
                    + "new ones)")
        }
        var exported: [ExportedItem] = []
        for (index, row) in rows.dropFirst().enumerated() {
            let item = try csvItem(row, columns: columns, line: index + 2)
            if let local = try self.item(item.key), !local.deleted, Self.same(local, item) { continue }
            exported.append(item)
        }
        return exported
    }

    private func csvItem(_ row: [String], columns: [String: Int], line: Int) throws -> ExportedItem {
        func cell(_ name: String) -> String? {
            guard let index = columns[name] else { return nil }
            return index < row.count ? row[index] : ""
        }
        func fail(_ reason: String) -> StoreError { .invalidImport("CSV line \(line): \(reason)") }
        let keyText = cell("key")?.trimmingCharacters(in: .whitespaces) ?? ""
        let key: ItemKey
        if keyText.isEmpty {
            // A new item; its photo could only be found by a key it does not have yet.
            guard cell("imageSHA256")?.isEmpty ?? true else {
                throw fail(
                    "a row without a key cannot name an image; add the photo afterwards with `hp-sync image set`")
            }
            key = ItemKey.random()
        } else {
            guard let parsed = try? ItemKey(keyText) else { throw fail("'\(keyText)' is not an item key") }
            key = parsed
        }
        var item = ExportedItem(key: key)
        // A missing column keeps the local value; for a deleted item, the value its deletion
        // kept, which a revival brings back (Protocol.md 5.9).
        let local = try self.item(key).flatMap { $0.deleted ? try mergeState(key)?.fieldsShown : $0 }
        item.name = cell("name").map(CSVTable.unguarded)
        if let serial = cell("serialNumber") {
            let text = CSVTable.unguarded(serial)
            item.serialNumber = text.isEmpty ? nil : text
        } else {
            item.serialNumber = local?.serialNumber
        }
        if let value = cell("valueInDollars"), !value.isEmpty {
            guard let dollars = Int64(value) else {
                throw fail("valueInDollars '\(value)' is not whole dollars in \(ItemLimits.valueRangeText)")
            }
            item.valueInDollars = dollars
        } else {
            item.valueInDollars = local?.valueInDollars ?? 0
        }
        if let date = cell("dateCreated"), !date.isEmpty {
            guard let milliseconds = DateText.parse(date) else { throw fail("dateCreated '\(date)' is not a date") }
            item.dateCreatedMilliseconds = milliseconds
        } else {
            item.dateCreatedMilliseconds = local?.dateCreatedMilliseconds ?? Int64(nowMilliseconds())
        }
        if let digest = cell("imageSHA256") {
            if !digest.isEmpty {
                guard let sha = SHA256Digest(hex: digest), let size = cell("imageSize").flatMap({ Int64($0) }) else {
                    throw fail("imageSHA256 and imageSize do not name an image")
                }
                item.image = ExportedItem.Image(sha256: sha, size: size)
            }
        } else {
            item.image = local?.image.map { ExportedItem.Image(sha256: $0.digest, size: $0.size) }
        }
        // A spreadsheet may have written TRUE/FALSE; the export writes `true` or nothing.
        switch cell("imageMissing")?.lowercased() {
        case nil, "", "false": break
        case "true": item.imageMissing = true
        case let other?: throw fail("imageMissing '\(other)' is neither true nor empty")
        }
        return item
    }

    private static func same(_ local: Item, _ row: ExportedItem) -> Bool {
        local.name == row.name && local.serialNumber == row.serialNumber
            && local.valueInDollars == row.valueInDollars
            && local.dateCreatedMilliseconds == row.dateCreatedMilliseconds
            && local.image?.digest == row.image?.sha256 && local.image?.size == row.image?.size
    }
}
