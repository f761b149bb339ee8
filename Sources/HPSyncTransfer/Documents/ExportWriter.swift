import HPSyncCrypto
import HPSyncModel

/// Writes export JSON by hand: Foundation's `JSONEncoder` does not keep key order on Linux, and
/// an export must be byte-for-byte reproducible (and diffable: one item per line). Writes
/// bytes directly: `list --json` on 100,000 items must take well under a second.
struct ExportWriter {
    private(set) var bytes: [UInt8] = []
    /// Origins repeat across items; their text form is costly, so it is computed once each.
    private var originText: [NodeID: [UInt8]] = [:]

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Items whose image is recorded but not held (no file, or a damaged one): written with
    /// `"imageMissing": true` after the image, which keeps the record's digest for healing.
    var missingImages: Set<ItemKey> = []

    static func document(storeID: StoreID, nodeID: String, items: [Item], missingImages: Set<ItemKey> = []) -> [UInt8] {
        var writer = ExportWriter(capacity: 256 + items.count * 320)
        writer.missingImages = missingImages
        writer.raw(
            "{\n  \"format\": \"\(ExportDocument.formatName)\",\n  \"version\": \(ExportDocument.currentVersion),\n")
        writer.raw("  \"storeID\": \"\(storeID)\",\n  \"nodeID\": \"\(nodeID)\",\n  \"items\": ")
        writer.array(items, indent: "  ")
        writer.raw("\n}\n")
        return writer.bytes
    }

    /// `[` items one per line `]`, each line indented by `indent` plus two spaces.
    mutating func array(_ items: [Item], indent: String) {
        if items.isEmpty { return raw("[]") }
        raw("[")
        for (index, item) in items.enumerated() {
            raw(index == 0 ? "\n" : ",\n")
            raw(indent)
            raw("  ")
            append(item)
        }
        raw("\n")
        raw(indent)
        raw("]")
    }

    mutating func append(_ item: Item) {
        raw("{\"key\": \"")
        raw(item.key.rawValue)
        raw("\"")
        if !item.deleted {
            raw(", \"name\": ")
            quoted(item.name)
            if let serial = item.serialNumber {
                raw(", \"serialNumber\": ")
                quoted(serial)
            }
            raw(", \"valueInDollars\": ")
            raw(String(item.valueInDollars))
            raw(", \"dateCreated\": \"")
            raw(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds))
            raw("\", \"dateCreatedMilliseconds\": ")
            raw(String(item.dateCreatedMilliseconds))
            if let image = item.image {
                raw(", \"image\": {\"sha256\": \"")
                raw(image.digest.hex)
                raw("\", \"size\": ")
                raw(String(image.size))
                raw("}")
                if missingImages.contains(item.key) { raw(", \"imageMissing\": true") }
            }
        }
        raw(", \"stamp\": ")
        raw(String(item.version.stamp.rawValue))
        raw(", \"origin\": \"")
        if let text = originText[item.version.origin] {
            bytes += text
        } else {
            let text = Array(item.version.origin.description.utf8)
            originText[item.version.origin] = text
            bytes += text
        }
        raw(item.deleted ? "\", \"deleted\": true}" : "\", \"deleted\": false}")
    }

    mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    mutating func quoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
