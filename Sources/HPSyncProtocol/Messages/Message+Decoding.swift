import Foundation
import HPSyncModel
import SwiftProtobuf

extension Message {
    /// Decodes and validates one MESSAGE frame payload, with SwiftProtobuf's generated types.
    ///
    /// Everything a peer sends passes through here: keys must be canonical UUIDs, digests and
    /// node IDs exactly 32 bytes, texts and repeated fields within `ProtocolLimits`. A hand-written
    /// decoder for ManifestPage, Records and FetchRecords ran beside this one until issue 38; the
    /// bench could not tell them apart (BENCHMARKS.md, "Issue 38"), so the wire has one decoder.
    public init(decoding payload: some Collection<UInt8>) throws(ProtocolError) {
        guard payload.count <= ProtocolLimits.maxMessageBytes else {
            throw .frameTooLarge(type: "MESSAGE", length: payload.count, limit: ProtocolLimits.maxMessageBytes)
        }
        let envelope: Hpsync_V1_Envelope
        do {
            var options = BinaryDecodingOptions()
            options.messageDepthLimit = 16
            envelope = try Hpsync_V1_Envelope(serializedBytes: Array(payload), options: options)
        } catch {
            throw .undecodableMessage(String(describing: error))
        }
        guard let body = envelope.body else { throw .unknownMessage }
        switch body {
        case .hello(let hello): self = .hello(try Self.validate(hello))
        case .error(let error): self = .error(Self.validate(error))
        case .pullRequest(let request):
            var store: StoreID? = nil
            if !request.checkpointStoreID.isEmpty {
                store = try Self.storeID(request.checkpointStoreID, "PullRequest", "checkpoint_store_id")
            }
            self = .pullRequest(
                checkpointStore: store, sinceSeq: try Self.seq(request.sinceSeq, "PullRequest", "since_seq"))
        case .manifestPage(let page): self = .manifestPage(try Self.validate(page))
        case .fetchRecords(let fetch):
            try Self.limit(fetch.keys.count, ProtocolLimits.maxRecordsPerBatch, "FetchRecords", "keys")
            var keys: [ItemKey] = []
            keys.reserveCapacity(fetch.keys.count)
            for text in fetch.keys { keys.append(try Self.key(text, "FetchRecords", "keys")) }
            guard Set(keys).count == keys.count else { throw .violation("FetchRecords repeats a key") }
            self = .fetchRecords(keys)
        case .records(let records):
            try Self.limit(records.records.count, ProtocolLimits.maxRecordsPerBatch, "Records", "records")
            var origin: NodeID?
            self = .records(
                try records.records.map { record throws(ProtocolError) in try Self.validate(record, origin: &origin) })
        case .fetchImages(let fetch): self = .fetchImages(try Self.validate(fetch.images, "FetchImages"))
        case .fetchImagesByDigest(let fetch):
            self = .fetchImagesByDigest(try Self.validate(fetch.images, "FetchImagesByDigest"))
        case .endSession: self = .endSession
        case .imageHeader(let header):
            let size = try Self.seq(header.size, "ImageHeader", "size")
            if header.missing && size != 0 {
                throw .invalidField(message: "ImageHeader", field: "size", problem: "must be 0 when missing is set")
            }
            self = .imageHeader(
                ImageHeaderMessage(
                    key: try Self.key(header.key, "ImageHeader", "key"),
                    digest: try Self.digest(header.sha256, "ImageHeader", "sha256"), size: size,
                    missing: header.missing))
        case .pageDone(let done):
            let through = try Self.seq(done.throughSeq, "PageDone", "through_seq")
            let durable = try Self.seq(done.durableSeq, "PageDone", "durable_seq")
            // Protocol.md 4.8: a contradiction between the fields, not bad data.
            guard durable <= through else {
                throw .violation("PageDone.durable_seq exceeds through_seq (\(durable) > \(through))")
            }
            let firstHeld = try Self.seq(done.firstHeldSeq, "PageDone", "first_held_seq")
            guard firstHeld <= through else {
                throw .violation("PageDone.first_held_seq exceeds through_seq (\(firstHeld) > \(through))")
            }
            try Self.limit(done.refusals.count, ProtocolLimits.maxManifestEntries, "PageDone", "refusals")
            var refusals: [PageRefusal] = []
            for refusal in done.refusals {
                refusals.append(
                    PageRefusal(
                        key: try Self.key(refusal.key, "Refusal", "key"), reason: Self.truncated(refusal.reason)))
            }
            self = .pageDone(
                throughSeq: through, counts: Self.counts(done.counts), durableSeq: durable, firstHeldSeq: firstHeld,
                refusals: refusals)
        case .done(let done): self = .done(Self.counts(done.counts))
        case .joinRequest(let request):
            guard let secret = InvitationSecret(bytes: request.secret) else {
                throw .invalidField(
                    message: "JoinRequest", field: "secret", problem: "must be 32 bytes, got \(request.secret.count)")
            }
            try Self.joinName(request.name, "JoinRequest")
            self = .joinRequest(JoinRequestMessage(secret: secret, name: request.name))
        case .joinAccepted(let accepted):
            let allow: PeerPermission
            switch accepted.allow {
            case .read: allow = .read
            case .readWrite: allow = .readWrite
            default:
                throw .invalidField(
                    message: "JoinAccepted", field: "allow", problem: "must be PERMISSION_READ or PERMISSION_READ_WRITE"
                )
            }
            guard Peer.isValidName(accepted.name) else {
                throw .invalidField(
                    message: "JoinAccepted", field: "name",
                    problem: "must be 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit")
            }
            self = .joinAccepted(allow: allow, name: accepted.name)
        case .blindHeadRequest, .blindHead, .blindList, .blindListPage, .blindGet, .blindObjects, .blindGetPhoto,
            .blindPhotoHeader, .blindPut, .blindPutDone, .blindSetHead:
            guard let message = try Self.decodeBlind(body) else { throw .unknownMessage }
            self = message
        }
    }

    /// The images of a FetchImages or FetchImagesByDigest: within the limit, keys and digests valid.
    private static func validate(_ images: [Hpsync_V1_ImageWanted], _ message: String) throws(ProtocolError)
        -> [ImageWanted]
    {
        try limit(images.count, ProtocolLimits.maxImagesPerRequest, message, "images")
        return try images.map { wanted throws(ProtocolError) in
            ImageWanted(key: try key(wanted.key, message, "key"), digest: try digest(wanted.sha256, message, "sha256"))
        }
    }

    /// The codes follow Protocol.md 4.1: a contradictory version range or a missing intent is
    /// ERROR_PROTOCOL, an intent this version does not define is ERROR_INCOMPATIBLE_VERSION
    /// (a newer peer's), a field of the wrong size or length is ERROR_BAD_DATA.
    private static func validate(_ hello: Hpsync_V1_Hello) throws(ProtocolError) -> HelloMessage {
        guard hello.minVersion >= 1, hello.minVersion <= hello.maxVersion else {
            throw .violation(
                "Hello.min_version/max_version must satisfy 1 <= min <= max (got \(hello.minVersion)...\(hello.maxVersion))"
            )
        }
        let intent: SyncIntent
        switch hello.intent {
        case .pull: intent = .pull
        case .push: intent = .push
        case .join: intent = .join
        case .blind: intent = .blind
        case .unspecified:
            throw .violation("Hello.intent is missing (INTENT_UNSPECIFIED)")
        case .UNRECOGNIZED(let value):
            throw .unsupported(
                "Hello.intent \(value) is not defined by protocol versions \(ProtocolLimits.minVersion)...\(ProtocolLimits.maxVersion); upgrade this side"
            )
        }
        guard hello.software.utf8.count <= ProtocolLimits.maxSoftwareBytes else {
            throw .invalidField(message: "Hello", field: "software", problem: "is longer than 256 bytes")
        }
        guard let nodeID = NodeID(bytes: hello.nodeID) else {
            throw .invalidField(
                message: "Hello", field: "node_id", problem: "must be 32 bytes, got \(hello.nodeID.count)")
        }
        guard hello.inventoryKey.isEmpty || hello.inventoryKey.count == 32 else {
            throw .invalidField(
                message: "Hello", field: "inventory_key", problem: "must be 32 bytes, got \(hello.inventoryKey.count)")
        }
        var result = HelloMessage(
            minVersion: hello.minVersion, maxVersion: hello.maxVersion, nodeID: nodeID,
            storeID: try storeID(hello.storeID, "Hello", "store_id"), intent: intent, version: hello.version,
            software: hello.software, dryRun: hello.dryRun, clockMilliseconds: hello.clockMs == 0 ? nil : hello.clockMs)
        result.inventoryKey = hello.inventoryKey.isEmpty ? nil : Array(hello.inventoryKey)
        result.blind = hello.blind
        return result
    }

    private static func validate(_ error: Hpsync_V1_Error) -> PeerErrorMessage {
        PeerErrorMessage(
            code: WireErrorCode(rawValue: error.code.rawValue) ?? .unspecified, message: truncated(error.message))
    }

    /// Text for people (Error.message, Refusal.reason), cut to 1024 bytes.
    private static func truncated(_ text: String) -> String {
        guard text.utf8.count > ProtocolLimits.maxErrorMessageBytes else { return text }
        return String(decoding: text.utf8.prefix(ProtocolLimits.maxErrorMessageBytes), as: UTF8.self)
    }

    private static func validate(_ page: Hpsync_V1_ManifestPage) throws(ProtocolError) -> ManifestPage {
        try limit(page.entries.count, ProtocolLimits.maxManifestEntries, "ManifestPage", "entries")
        let throughSeq = try seq(page.throughSeq, "ManifestPage", "through_seq")
        var entries: [ManifestEntry] = []
        entries.reserveCapacity(page.entries.count)
        var previous: Int64 = -1
        var origin: NodeID?
        for entry in page.entries {
            let entrySeq = try seq(entry.seq, "ManifestEntry", "seq")
            guard entrySeq > previous, entrySeq <= throughSeq else {
                throw .invalidField(
                    message: "ManifestEntry", field: "seq",
                    problem: "must ascend strictly and not exceed through_seq (got \(entrySeq) after \(previous))")
            }
            previous = entrySeq
            entries.append(
                ManifestEntry(
                    key: try key(entry.key, "ManifestEntry", "key"),
                    version: Version(
                        stamp: VersionStamp(rawValue: entry.stamp),
                        origin: try node(entry.origin, "ManifestEntry", reusing: &origin)),
                    deleted: entry.deleted, seq: entrySeq, mergeDigest: entry.mergeDigest))
        }
        var result = ManifestPage(
            entries: entries, throughSeq: throughSeq, isFinal: page.final,
            reconcileHorizon: page.reconcileHorizon == 0 ? nil : VersionStamp(rawValue: page.reconcileHorizon),
            tombstonesAhead: try seq(page.tombstonesAhead, "ManifestPage", "tombstones_ahead"))
        result.entriesAhead = try seq(page.entriesAhead, "ManifestPage", "entries_ahead")
        result.imageBytesAhead = try seq(page.imageBytesAhead, "ManifestPage", "image_bytes_ahead")
        return result
    }

    /// `origin` is the previous record's origin, and becomes this one's.
    private static func validate(_ record: Hpsync_V1_Record, origin: inout NodeID?) throws(ProtocolError) -> Item {
        let itemKey = try key(record.key, "Record", "key")
        let version = Version(
            stamp: VersionStamp(rawValue: record.stamp), origin: try node(record.origin, "Record", reusing: &origin))
        if record.deleted { return try withFields(Item.tombstone(key: itemKey, version: version), record) }
        guard record.name.utf8.count <= ItemLimits.maxNameBytes else {
            throw .invalidField(
                message: "Record", field: "name", problem: "is \(record.name.utf8.count) bytes, the limit is 1024")
        }
        if record.hasSerialNumber && record.serialNumber.utf8.count > ItemLimits.maxSerialBytes {
            throw .invalidField(message: "Record", field: "serial_number", problem: "is longer than 256 bytes")
        }
        guard ItemLimits.valueInDollars.contains(record.valueInDollars) else {
            throw .invalidField(
                message: "Record", field: "value_in_dollars",
                problem: "of item \(itemKey) is \(record.valueInDollars), outside \(ItemLimits.valueRangeText)")
        }
        var image: ImageRef? = nil
        if !record.imageSha256.isEmpty {
            let size = try seq(record.imageSize, "Record", "image_size")
            guard size > 0 else {
                throw .invalidField(
                    message: "Record", field: "image_size", problem: "must be > 0 when image_sha256 is set")
            }
            image = ImageRef(digest: try digest(record.imageSha256, "Record", "image_sha256"), size: size)
        } else if record.imageSize != 0 {
            throw .invalidField(message: "Record", field: "image_size", problem: "must be 0 when there is no image")
        }
        return try withFields(
            Item(
                key: itemKey, name: record.name, serialNumber: record.hasSerialNumber ? record.serialNumber : nil,
                valueInDollars: record.valueInDollars, dateCreatedMilliseconds: record.dateCreatedMs, image: image,
                version: version, deleted: false),
            record)
    }

    private static func counts(_ counts: Hpsync_V1_ChangeCounts) -> ChangeCounts {
        func clamp(_ value: UInt64) -> Int { Int(min(value, UInt64(Int.max))) }
        var result = ChangeCounts()
        result.inserted = clamp(counts.inserted)
        result.updated = clamp(counts.updated)
        result.deleted = clamp(counts.deleted)
        result.tombstones = clamp(counts.tombstones)
        result.skipped = clamp(counts.skipped)
        result.refused = clamp(counts.refused)
        result.images = clamp(counts.images)
        result.imageBytes = Int64(clamp(counts.imageBytes))
        result.entries = clamp(counts.entries)
        result.records = clamp(counts.records)
        return result
    }

    private static func joinName(_ name: String, _ message: String) throws(ProtocolError) {
        guard name.utf8.count <= ProtocolLimits.maxJoinNameBytes else {
            throw .invalidField(
                message: message, field: "name", problem: "is \(name.utf8.count) bytes, the limit is 64")
        }
    }

    static func key(_ text: String, _ message: String, _ field: String) throws(ProtocolError) -> ItemKey {
        do {
            return try ItemKey(text)
        } catch {
            throw .invalidField(message: message, field: field, problem: "is not a canonical item key: \(error)")
        }
    }

    static func digest(_ bytes: Data, _ message: String, _ field: String) throws(ProtocolError) -> SHA256Digest {
        guard let digest = SHA256Digest(bytes: bytes) else {
            throw .invalidField(message: message, field: field, problem: "must be 32 bytes, got \(bytes.count)")
        }
        return digest
    }

    private static func node(_ bytes: Data, _ message: String) throws(ProtocolError) -> NodeID {
        guard let id = NodeID(bytes: bytes) else {
            throw .invalidField(message: message, field: "origin", problem: "must be 32 bytes, got \(bytes.count)")
        }
        return id
    }

    /// Like `node(_:_:)`, but the previous entry's node ID when the bytes are the same: a page's
    /// entries share a few origins, and each would otherwise allocate an ID of its own (up to
    /// 20,000 entries a batch are held until they are committed).
    static func node(_ bytes: Data, _ message: String, reusing previous: inout NodeID?) throws(ProtocolError)
        -> NodeID
    {
        if let previous, bytes.count == NodeID.byteCount {
            let same = bytes.withUnsafeBytes { new in
                previous.bytes.withUnsafeBytes { memcmp(new.baseAddress!, $0.baseAddress!, NodeID.byteCount) == 0 }
            }
            if same { return previous }
        }
        let id = try node(bytes, message)
        previous = id
        return id
    }

    private static func storeID(_ bytes: Data, _ message: String, _ field: String) throws(ProtocolError) -> StoreID {
        guard let id = StoreID(bytes: bytes) else {
            throw .invalidField(message: message, field: field, problem: "must be 16 bytes, got \(bytes.count)")
        }
        return id
    }

    static func seq(_ value: UInt64, _ message: String, _ field: String) throws(ProtocolError) -> Int64 {
        guard value <= UInt64(Int64.max) else {
            throw .invalidField(message: message, field: field, problem: "is beyond 2^63-1")
        }
        return Int64(value)
    }

    static func limit(_ count: Int, _ limit: Int, _ message: String, _ field: String) throws(ProtocolError) {
        guard count <= limit else { throw .tooMany(message: message, field: field, count: count, limit: limit) }
    }
}
