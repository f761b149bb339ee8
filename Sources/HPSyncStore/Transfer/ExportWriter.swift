/// Writes export JSON by hand: Foundation's `JSONEncoder` does not keep key order on Linux, and
/// an export must be byte-for-byte reproducible (and diffable: one item per line).
enum ExportWriter {
    static func document(storeID: StoreID, nodeID: String, items: [Item]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + items.count * 320)
        out += Array(
            "{\n  \"format\": \"\(ExportDocument.formatName)\",\n  \"version\": \(ExportDocument.currentVersion),\n"
                .utf8)
        out += Array("  \"storeID\": \"\(storeID)\",\n  \"nodeID\": \"\(nodeID)\",\n  \"items\": [".utf8)
        for (index, item) in items.enumerated() {
            out += Array((index == 0 ? "\n    " : ",\n    ").utf8)
            append(item, to: &out)
        }
        out += Array((items.isEmpty ? "]\n}\n" : "\n  ]\n}\n").utf8)
        return out
    }

    static func append(_ item: Item, to out: inout [UInt8]) {
        var fields: [(String, String)] = [("key", quoted(item.key.rawValue))]
        if !item.deleted {
            fields.append(("name", quoted(item.name)))
            if let serial = item.serialNumber { fields.append(("serialNumber", quoted(serial))) }
            fields.append(("valueInDollars", String(item.valueInDollars)))
            fields.append(("dateCreated", quoted(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds))))
            fields.append(("dateCreatedMilliseconds", String(item.dateCreatedMilliseconds)))
            if let image = item.image {
                fields.append(("image", "{\"sha256\": \"\(image.digest.hex)\", \"size\": \(image.size)}"))
            }
        }
        fields.append(("stamp", String(item.version.stamp.rawValue)))
        fields.append(("origin", quoted(item.version.origin.description)))
        fields.append(("deleted", item.deleted ? "true" : "false"))
        out.append(UInt8(ascii: "{"))
        for (index, field) in fields.enumerated() {
            if index > 0 { out += [UInt8(ascii: ","), UInt8(ascii: " ")] }
            out += Array("\"\(field.0)\": ".utf8)
            out += Array(field.1.utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let s where s.value < 0x20:
                let hex = String(s.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
