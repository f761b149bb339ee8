import Foundation
import HPSyncModel
import HPSyncStore

/// `import --dry-run`: what an import would change, with nothing written.
extension Store {
    /// The keys importing the file at `url` (JSON, or CSV when `csv`) would insert, update and
    /// delete, by the same rules as the import: a versioned record counts when its version beats
    /// the local one, an unversioned one (a CSV row, a hand-written record) always does. Images
    /// are neither read nor checked.
    public func importPreview(from url: URL, csv: Bool) throws -> ChangeSet {
        let records = csv ? try csvChanges(from: url) : try exportDocument(from: url).items
        var changes = ChangeSet()
        for record in records {
            // The import would refuse the file for this record: so does its preview.
            if record.deleted != true, let value = record.valueInDollars, !ItemLimits.valueInDollars.contains(value) {
                throw StoreError.invalidImport("item \(record.key): \(StoreError.invalidValue(value))")
            }
            let local = try item(record.key)
            if let version = record.versionValue, let local, !(version > local.version) { continue }
            let live = local.map { !$0.deleted } ?? false
            // An unversioned record equal to the live item is an empty edit: the import skips it.
            if record.versionValue == nil, record.deleted != true, let local, live,
                let wanted = try? record.item(version: local.version), FieldEdit(from: local, to: wanted).isEmpty
            {
                continue
            }
            if record.deleted == true {
                if live { changes.deleted.append(record.key) }
            } else if live {
                changes.updated.append(record.key)
            } else {
                changes.inserted.append(record.key)
            }
        }
        return changes
    }

    private func exportDocument(from url: URL) throws -> ExportDocument {
        guard let data = try? Data(contentsOf: url) else { throw StoreError.missingImportFile(path: url.path) }
        let document = try ExportReader.document(Array(data))
        guard document.format == ExportDocument.formatName, document.version == ExportDocument.currentVersion else {
            throw StoreError.invalidImport("not an hp-sync export (version \(ExportDocument.currentVersion))")
        }
        return document
    }
}
