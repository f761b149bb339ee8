import Foundation
import HPSyncModel
import HPSyncStore

/// Writing the inventory out as JSON (lossless) or CSV (for spreadsheets).
extension Store {
    /// The whole store, tombstones included, sorted by key, as export JSON. With
    /// `imagesDirectory`, each live item's image is copied there as `<KEY>`.
    public func exportJSON(imagesDirectory: URL? = nil) throws -> Data {
        var leftOut: [ImageLeftOut] = []
        return try exportJSON(imagesDirectory: imagesDirectory, leftOut: &leftOut)
    }

    /// `exportJSON`, and in `leftOut` the images not copied because the store does not hold them
    /// intact; their records say `"imageMissing": true`, so an import records them as missing.
    public func exportJSON(imagesDirectory: URL?, leftOut: inout [ImageLeftOut]) throws -> Data {
        let items = try items(includeDeleted: true)
        if let imagesDirectory { leftOut = try copyImages(of: items, to: imagesDirectory) }
        return Data(
            ExportWriter.document(
                storeID: storeID, nodeID: nodeID.description, items: items, missingImages: Set(leftOut.map(\.key))))
    }

    /// Writes `exportJSON` to `url`; returns the images left out.
    @discardableResult
    public func exportJSON(to url: URL, imagesDirectory: URL? = nil) throws -> [ImageLeftOut] {
        var leftOut: [ImageLeftOut] = []
        let data = try exportJSON(imagesDirectory: imagesDirectory, leftOut: &leftOut)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw StoreError.io(path: url.path, reason: error.localizedDescription)
        }
        return leftOut
    }

    /// Live items as CSV: key,name,serialNumber,valueInDollars,dateCreated,imageSHA256,imageSize,
    /// imageMissing (`CSVTable`: text cells guarded against formula injection; `imageMissing` is
    /// `true` for an image left out of `imagesDirectory`, so an import records it as missing).
    public func exportCSV(imagesDirectory: URL? = nil) throws -> Data {
        var leftOut: [ImageLeftOut] = []
        return try exportCSV(imagesDirectory: imagesDirectory, leftOut: &leftOut)
    }

    /// `exportCSV`, and in `leftOut` the images not copied.
    public func exportCSV(imagesDirectory: URL?, leftOut: inout [ImageLeftOut]) throws -> Data {
        let items = try items()
        if let imagesDirectory { leftOut = try copyImages(of: items, to: imagesDirectory) }
        let missing = Set(leftOut.map(\.key))
        var text = "key,name,serialNumber,valueInDollars,dateCreated,imageSHA256,imageSize,imageMissing\r\n"
        for item in items {
            let fields = [
                item.key.rawValue, CSVTable.textField(item.name), CSVTable.textField(item.serialNumber ?? ""),
                String(item.valueInDollars), DateText.iso8601(milliseconds: item.dateCreatedMilliseconds),
                item.image?.digest.hex ?? "", item.image.map { String($0.size) } ?? "",
                missing.contains(item.key) ? "true" : "",
            ]
            text += fields.joined(separator: ",") + "\r\n"
        }
        return Data(text.utf8)
    }
}

extension Store {
    /// `items` as a JSON array in the export's item format, one item per line.
    /// `missingImages` are marked `"imageMissing": true`.
    public func itemsJSON(_ items: [Item], missingImages: Set<ItemKey> = []) -> Data {
        var writer = ExportWriter(capacity: items.count * 320)
        writer.missingImages = missingImages
        writer.array(items, indent: "")
        writer.raw("\n")
        return Data(writer.bytes)
    }

    /// One item as a JSON object in the export's item format.
    public func itemJSON(_ item: Item, imageMissing: Bool = false) -> Data {
        var writer = ExportWriter(capacity: 320)
        if imageMissing { writer.missingImages = [item.key] }
        writer.append(item)
        writer.raw("\n")
        return Data(writer.bytes)
    }
}
