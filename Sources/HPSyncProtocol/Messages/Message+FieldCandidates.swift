import Foundation
import HPSyncModel

/// Version 5's field versions of a Record (Protocol.md 5.9): its fields bytes and open
/// conflicts, checked as strictly as the record: every value within the limits a record's
/// field has.
extension Message {
    /// `item` with the merge state the record's fields bytes and conflicts describe, and its
    /// joined flag; unchanged without fields bytes (a whole record is never joined, whatever the
    /// flag says).
    static func withFields(_ item: Item, _ record: Hpsync_V1_Record) throws(ProtocolError) -> Item {
        guard !record.fields.isEmpty else {
            guard record.conflicts.isEmpty else {
                throw .invalidField(
                    message: "Record", field: "conflicts", problem: "of item \(item.key) come without fields")
            }
            return item
        }
        try limit(record.fields.count, ProtocolLimits.maxFieldsBytes, "Record", "fields")
        try limit(record.conflicts.count, ProtocolLimits.maxConflicts, "Record", "conflicts")
        var conflicts: [ListedCandidate] = []
        conflicts.reserveCapacity(record.conflicts.count)
        for wire in record.conflicts { conflicts.append(try candidate(wire)) }
        var result = item
        do {
            let fields = MergeFields(body: Array(record.fields), conflicts: conflicts, joined: record.joined)
            result.mergeState = try fields.state(of: item)
            result.joined = record.joined
        } catch {
            throw .invalidField(message: "Record", field: "fields", problem: "of item \(item.key): \(error)")
        }
        return result
    }

    private static func candidate(_ wire: Hpsync_V1_FieldCandidate) throws(ProtocolError) -> ListedCandidate {
        let fields = ItemField.allCases
        guard wire.field >= 1, Int(wire.field) <= fields.count else {
            throw .invalidField(message: "FieldCandidate", field: "field", problem: "is \(wire.field), not 1 to 5")
        }
        let field = fields[Int(wire.field) - 1]
        var reused: NodeID?
        let version = Version(
            stamp: VersionStamp(rawValue: wire.stamp), origin: try node(wire.origin, "FieldCandidate", reusing: &reused)
        )
        var base: Version?
        if !wire.baseOrigin.isEmpty {
            var baseReused: NodeID?
            base = Version(
                stamp: VersionStamp(rawValue: wire.baseStamp),
                origin: try node(wire.baseOrigin, "FieldCandidate", reusing: &baseReused))
        } else if wire.baseStamp != 0 {
            throw .invalidField(
                message: "FieldCandidate", field: "base_stamp", problem: "must be 0 without base_origin")
        }
        let content: FieldContent
        switch field {
        case .name:
            guard wire.text.utf8.count <= ItemLimits.maxNameBytes else {
                throw .invalidField(message: "FieldCandidate", field: "text", problem: "is longer than 1024 bytes")
            }
            content = .text(wire.text)
        case .serialNumber:
            guard wire.text.utf8.count <= ItemLimits.maxSerialBytes else {
                throw .invalidField(message: "FieldCandidate", field: "text", problem: "is longer than 256 bytes")
            }
            content = .optionalText(wire.hasText ? wire.text : nil)
        case .valueInDollars:
            guard ItemLimits.valueInDollars.contains(wire.integer) else {
                throw .invalidField(
                    message: "FieldCandidate", field: "integer",
                    problem: "is \(wire.integer), outside \(ItemLimits.valueRangeText)")
            }
            content = .integer(wire.integer)
        case .dateCreated: content = .integer(wire.integer)
        case .photo:
            if wire.imageSha256.isEmpty {
                guard wire.imageSize == 0 else {
                    throw .invalidField(
                        message: "FieldCandidate", field: "image_size", problem: "must be 0 when there is no image")
                }
                content = .photo(nil)
            } else {
                let size = try seq(wire.imageSize, "FieldCandidate", "image_size")
                guard size > 0 else {
                    throw .invalidField(
                        message: "FieldCandidate", field: "image_size", problem: "must be > 0 when image_sha256 is set")
                }
                content = .photo(
                    ImageRef(digest: try digest(wire.imageSha256, "FieldCandidate", "image_sha256"), size: size))
            }
        }
        return ListedCandidate(field: field, content: content, version: version, base: base)
    }
}
