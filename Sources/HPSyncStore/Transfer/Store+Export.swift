import Foundation
import GRDB

/// Writing the inventory out as JSON (lossless) or CSV (for spreadsheets).
extension Store {
    /// The whole store, tombstones included, sorted by key, as export JSON. With
    /// `imagesDirectory`, each live item's image is copied there as `<KEY>`.
    public func exportJSON(imagesDirectory: URL? = nil) throws -> Data {
        let items = try items(includeDeleted: true)
        if let imagesDirectory { try copyImages(of: items, to: imagesDirectory) }
        return Data(ExportWriter.document(storeID: storeID, nodeID: nodeID.description, items: items))
    }

    /// Writes `exportJSON` to `url`.
    public func exportJSON(to url: URL, imagesDirectory: URL? = nil) throws {
        let data = try exportJSON(imagesDirectory: imagesDirectory)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw StoreError.io(path: url.path, reason: error.localizedDescription)
        }
    }

    /// Live items as CSV: key,name,serialNumber,valueInDollars,dateCreated,imageSHA256,imageSize
    /// (`CSVTable`: text cells guarded against formula injection).
    public func exportCSV(imagesDirectory: URL? = nil) throws -> Data {
        let items = try items()
        if let imagesDirectory { try copyImages(of: items, to: imagesDirectory) }
        var text = "key,name,serialNumber,valueInDollars,dateCreated,imageSHA256,imageSize\r\n"
        for item in items {
            let fields = [
                item.key.rawValue, CSVTable.textField(item.name), CSVTable.textField(item.serialNumber ?? ""),
                String(item.valueInDollars), DateText.iso8601(milliseconds: item.dateCreatedMilliseconds),
                item.image?.digest.hex ?? "", item.image.map { String($0.size) } ?? "",
            ]
            text += fields.joined(separator: ",") + "\r\n"
        }
        return Data(text.utf8)
    }

    private func copyImages(of items: [Item], to directory: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotCreate(path: directory.path, reason: error.localizedDescription)
        }
        for item in items where !item.deleted && item.image != nil {
            let target = directory.appendingPathComponent(item.key.rawValue)
            FileIO.unlinkIfPresent(target.path)
            do {
                try FileManager.default.copyItem(at: imageFileURL(for: item.key), to: target)
            } catch {
                throw StoreError.io(path: target.path, reason: error.localizedDescription)
            }
        }
    }
}

extension Store {
    /// `items` as a JSON array in the export's item format, one item per line.
    public func itemsJSON(_ items: [Item]) -> Data {
        var writer = ExportWriter(capacity: items.count * 320)
        writer.array(items, indent: "")
        writer.raw("\n")
        return Data(writer.bytes)
    }

    /// One item as a JSON object in the export's item format.
    public func itemJSON(_ item: Item) -> Data {
        var writer = ExportWriter(capacity: 320)
        writer.append(item)
        writer.raw("\n")
        return Data(writer.bytes)
    }
}
