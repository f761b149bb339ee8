import Foundation
import HPSyncModel

extension Message {
    /// Validates a version-4 blind message: IDs and origins of 32 bytes, seqs within Int64,
    /// counts and sealed sizes within `ProtocolLimits`, seqs of a page ascending.
    static func decodeBlind(_ body: Hpsync_V1_Envelope.OneOf_Body) throws(ProtocolError) -> Message? {
        switch body {
        case .blindHeadRequest: return .blindHeadRequest
        case .blindHead(let head):
            return .blindHead(try blindHead(epoch: head.epoch, sealed: head.sealed, "BlindHead"))
        case .blindList(let list): return .blindList(sinceSeq: try seq(list.sinceSeq, "BlindList", "since_seq"))
        case .blindListPage(let page):
            guard page.entries.count <= ProtocolLimits.maxManifestEntries else {
                throw .tooMany(
                    message: "BlindListPage", field: "entries", count: page.entries.count,
                    limit: ProtocolLimits.maxManifestEntries)
            }
            let through = try seq(page.throughSeq, "BlindListPage", "through_seq")
            var previous: Int64 = 0
            var entries: [BlindEntry] = []
            entries.reserveCapacity(page.entries.count)
            for wire in page.entries {
                let entry = try blindEntry(wire, "BlindEntry")
                guard entry.seq > previous, entry.seq <= through else {
                    throw .invalidField(
                        message: "BlindEntry", field: "seq",
                        problem:
                            "must ascend strictly from 1 and not exceed through_seq (got \(entry.seq) after \(previous))"
                    )
                }
                previous = entry.seq
                entries.append(entry)
            }
            return .blindListPage(BlindListPage(entries: entries, throughSeq: through, isFinal: page.final))
        case .blindGet(let get):
            try blindCount(get.ids.count, "BlindGet", "ids")
            let ids = try get.ids.map { bytes throws(ProtocolError) in try blindID(bytes, "BlindGet", "ids") }
            guard Set(ids).count == ids.count else { throw .violation("BlindGet repeats an ID") }
            return .blindGet(ids)
        case .blindObjects(let objects):
            try blindCount(objects.objects.count, "BlindObjects", "objects")
            return .blindObjects(
                // From a blind store, an empty record is a damaged entry for the trusted node's seal
                // check to refuse alone, not a reason to end the whole session.
                try objects.objects.map { object throws(ProtocolError) in
                    try blindObject(object, "BlindObjects", allowEmpty: true)
                },
                isFinal: objects.final)
        case .blindGetPhoto(let get):
            return .blindGetPhoto(
                try blindID(get.photoID, "BlindGetPhoto", "photo_id"), kind: try kind(get.kind, "BlindGetPhoto"))
        case .blindPhotoHeader(let header):
            let size = try seq(header.size, "BlindPhotoHeader", "size")
            let kind = try kind(header.kind, "BlindPhotoHeader")
            guard size <= ProtocolLimits.maxSealedBytes(kind) else {
                throw .invalidField(
                    message: "BlindPhotoHeader", field: "size",
                    problem:
                        "is beyond the \(ProtocolLimits.maxSealedBytes(kind)) bytes of the largest sealed \(kind.noun)")
            }
            if header.missing && size != 0 {
                throw .invalidField(
                    message: "BlindPhotoHeader", field: "size", problem: "must be 0 when missing is set")
            }
            return .blindPhotoHeader(
                BlindPhotoHeader(
                    id: try blindID(header.photoID, "BlindPhotoHeader", "photo_id"), size: size,
                    missing: header.missing, kind: kind))
        case .blindPut(let put):
            try blindCount(put.objects.count, "BlindPut", "objects")
            return .blindPut(
                try put.objects.map { object throws(ProtocolError) in try blindObject(object, "BlindPut") })
        case .blindPutDone(let done):
            return .blindPutDone(
                applied: try seq(done.applied, "BlindPutDone", "applied"),
                stale: try seq(done.stale, "BlindPutDone", "stale"),
                throughSeq: try seq(done.throughSeq, "BlindPutDone", "through_seq"))
        case .blindSetHead(let set):
            let expected = try seq(set.expectedEpoch, "BlindSetHead", "expected_epoch")
            let head = try blindHead(epoch: set.epoch, sealed: set.sealed, "BlindSetHead")
            guard head.epoch > expected, !head.sealed.isEmpty else {
                throw .invalidField(
                    message: "BlindSetHead", field: "epoch",
                    problem: "must exceed expected_epoch (\(expected)) and come with a sealed head")
            }
            return .blindSetHead(expected: expected, head: head)
        default: return nil
        }
    }

    private static func blindHead(epoch: UInt64, sealed: Data, _ message: String) throws(ProtocolError)
        -> BlindHeadMessage
    {
        guard sealed.count <= ProtocolLimits.maxSealedHeadBytes else {
            throw .invalidField(
                message: message, field: "sealed",
                problem: "is \(sealed.count) bytes, the limit is \(ProtocolLimits.maxSealedHeadBytes)")
        }
        let epoch = try seq(epoch, message, "epoch")
        guard (epoch == 0) == sealed.isEmpty else {
            throw .invalidField(message: message, field: "sealed", problem: "must be empty exactly when epoch is 0")
        }
        return BlindHeadMessage(epoch: epoch, sealed: Array(sealed))
    }

    private static func blindObject(_ object: Hpsync_V1_BlindObject, _ message: String, allowEmpty: Bool = false)
        throws(ProtocolError) -> BlindObject
    {
        guard object.hasEntry else { throw .invalidField(message: message, field: "entry", problem: "is missing") }
        guard allowEmpty || !object.sealed.isEmpty, object.sealed.count <= ProtocolLimits.maxSealedRecordBytes else {
            throw .invalidField(
                message: "BlindObject", field: "sealed",
                problem: "is \(object.sealed.count) bytes, must be 1...\(ProtocolLimits.maxSealedRecordBytes)")
        }
        return BlindObject(entry: try blindEntry(object.entry, "BlindObject.entry"), sealed: Array(object.sealed))
    }

    private static func blindEntry(_ entry: Hpsync_V1_BlindEntry, _ message: String) throws(ProtocolError)
        -> BlindEntry
    {
        guard let origin = NodeID(bytes: entry.origin) else {
            throw .invalidField(
                message: message, field: "origin", problem: "must be 32 bytes, got \(entry.origin.count)")
        }
        guard entry.stamp > 0 else { throw .invalidField(message: message, field: "stamp", problem: "must be > 0") }
        var photo: BlindPhotoRef?
        if !entry.photoID.isEmpty {
            let size = try seq(entry.photoSize, message, "photo_size")
            guard size > 0, size <= ProtocolLimits.maxSealedPhotoBytes else {
                throw .invalidField(message: message, field: "photo_size", problem: "must be 1...2^40 with a photo_id")
            }
            photo = BlindPhotoRef(id: try blindID(entry.photoID, message, "photo_id"), size: size)
        } else if entry.photoSize != 0 {
            throw .invalidField(message: message, field: "photo_size", problem: "must be 0 without a photo_id")
        }
        return BlindEntry(
            id: try blindID(entry.id, message, "id"),
            version: Version(stamp: VersionStamp(rawValue: entry.stamp), origin: origin),
            seq: try seq(entry.seq, message, "seq"), photo: photo)
    }

    private static func blindID(_ bytes: Data, _ message: String, _ field: String) throws(ProtocolError) -> BlindID {
        guard let id = BlindID(bytes: bytes) else {
            throw .invalidField(message: message, field: field, problem: "must be 32 bytes, got \(bytes.count)")
        }
        return id
    }

    private static func kind(_ raw: UInt32, _ message: String) throws(ProtocolError) -> SealedStreamKind {
        guard let kind = SealedStreamKind(rawValue: raw) else {
            throw .invalidField(
                message: message, field: "kind", problem: "must be 0 (a photo) or 1 (a pack), got \(raw)")
        }
        return kind
    }

    private static func blindCount(_ count: Int, _ message: String, _ field: String) throws(ProtocolError) {
        guard count <= ProtocolLimits.maxBlindObjects else {
            throw .tooMany(message: message, field: field, count: count, limit: ProtocolLimits.maxBlindObjects)
        }
    }
}
