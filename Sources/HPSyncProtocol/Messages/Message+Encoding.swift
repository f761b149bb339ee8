import Foundation
import HPSyncModel
import SwiftProtobuf

extension Message {
    /// The protobuf bytes of this message inside an `Envelope`: ManifestPage and Records written
    /// directly (`BulkMessageEncoder`), the others through SwiftProtobuf.
    public func serializedEnvelope() -> [UInt8] {
        BulkMessageEncoder.encode(self) ?? serializedEnvelopeGenerically()
    }

    /// The envelope's bytes through SwiftProtobuf's generated types.
    func serializedEnvelopeGenerically() -> [UInt8] {
        var envelope = Hpsync_V1_Envelope()
        envelope.body = envelopeBody()
        // Serialization of a fully initialized proto3 message cannot fail.
        return try! envelope.serializedBytes()
    }

    private func envelopeBody() -> Hpsync_V1_Envelope.OneOf_Body {
        switch self {
        case .hello(let hello):
            var wire = Hpsync_V1_Hello()
            wire.minVersion = hello.minVersion
            wire.maxVersion = hello.maxVersion
            wire.nodeID = Data(hello.nodeID.bytes)
            wire.storeID = Data(hello.storeID.bytes)
            switch hello.intent {
            case .pull: wire.intent = .pull
            case .push: wire.intent = .push
            case .join: wire.intent = .join
            case .blind: wire.intent = .blind
            }
            wire.version = hello.version
            wire.software = hello.software
            wire.dryRun = hello.dryRun
            wire.clockMs = hello.clockMilliseconds ?? 0
            wire.inventoryKey = hello.inventoryKey.map { Data($0) } ?? Data()
            wire.blind = hello.blind
            return .hello(wire)
        case .error(let error):
            var wire = Hpsync_V1_Error()
            wire.code = Hpsync_V1_ErrorCode(rawValue: error.code.rawValue) ?? .errorUnspecified
            wire.message = error.message
            return .error(wire)
        case .pullRequest(let store, let since):
            var wire = Hpsync_V1_PullRequest()
            wire.checkpointStoreID = store.map { Data($0.bytes) } ?? Data()
            wire.sinceSeq = UInt64(since)
            return .pullRequest(wire)
        case .manifestPage(let page):
            var wire = Hpsync_V1_ManifestPage()
            var origins = OriginBytes()
            wire.entries = page.entries.map { entry in
                var wireEntry = Hpsync_V1_ManifestEntry()
                wireEntry.key = entry.key.rawValue
                wireEntry.stamp = entry.version.stamp.rawValue
                wireEntry.origin = origins.data(entry.version.origin)
                wireEntry.deleted = entry.deleted
                wireEntry.seq = UInt64(entry.seq)
                wireEntry.mergeDigest = entry.mergeDigest
                return wireEntry
            }
            wire.throughSeq = UInt64(page.throughSeq)
            wire.final = page.isFinal
            wire.reconcileHorizon = page.reconcileHorizon?.rawValue ?? 0
            wire.tombstonesAhead = UInt64(page.tombstonesAhead)
            wire.entriesAhead = UInt64(page.entriesAhead)
            wire.imageBytesAhead = UInt64(page.imageBytesAhead)
            return .manifestPage(wire)
        case .fetchRecords(let keys):
            var wire = Hpsync_V1_FetchRecords()
            wire.keys = keys.map(\.rawValue)
            return .fetchRecords(wire)
        case .records(let items):
            var wire = Hpsync_V1_Records()
            var origins = OriginBytes()
            wire.records = items.map { Self.record($0, origins: &origins) }
            return .records(wire)
        case .fetchImages(let images):
            var wire = Hpsync_V1_FetchImages()
            wire.images = images.map(Self.wanted)
            return .fetchImages(wire)
        case .fetchImagesByDigest(let images):
            var wire = Hpsync_V1_FetchImagesByDigest()
            wire.images = images.map(Self.wanted)
            return .fetchImagesByDigest(wire)
        case .endSession:
            return .endSession(Hpsync_V1_EndSession())
        case .imageHeader(let header):
            var wire = Hpsync_V1_ImageHeader()
            wire.key = header.key.rawValue
            wire.sha256 = Data(header.digest.bytes)
            wire.size = UInt64(header.size)
            wire.missing = header.missing
            return .imageHeader(wire)
        case .pageDone(let through, let counts, let durable, let firstHeld, let refusals):
            var wire = Hpsync_V1_PageDone()
            wire.throughSeq = UInt64(through)
            wire.durableSeq = UInt64(durable)
            wire.firstHeldSeq = UInt64(firstHeld)
            wire.refusals = refusals.map { refusal in
                var wireRefusal = Hpsync_V1_Refusal()
                wireRefusal.key = refusal.key.rawValue
                wireRefusal.reason = refusal.reason
                return wireRefusal
            }
            wire.counts = Self.counts(counts)
            return .pageDone(wire)
        case .done(let counts):
            var wire = Hpsync_V1_Done()
            wire.counts = Self.counts(counts)
            return .done(wire)
        case .joinRequest(let request):
            var wire = Hpsync_V1_JoinRequest()
            wire.secret = Data(request.secret.bytes)
            wire.name = request.name
            return .joinRequest(wire)
        case .joinAccepted(let allow, let name):
            var wire = Hpsync_V1_JoinAccepted()
            wire.allow = allow == .readWrite ? .readWrite : .read
            wire.name = name
            return .joinAccepted(wire)
        case .blindHeadRequest, .blindHead, .blindList, .blindListPage, .blindGet, .blindObjects, .blindGetPhoto,
            .blindPhotoHeader, .blindPut, .blindPutDone, .blindSetHead:
            // blindEnvelopeBody covers exactly these cases.
            return blindEnvelopeBody()!
        }
    }

    private static func wanted(_ wanted: ImageWanted) -> Hpsync_V1_ImageWanted {
        var wire = Hpsync_V1_ImageWanted()
        wire.key = wanted.key.rawValue
        wire.sha256 = Data(wanted.digest.bytes)
        return wire
    }

    private static func record(_ item: Item, origins: inout OriginBytes) -> Hpsync_V1_Record {
        var wire = Hpsync_V1_Record()
        wire.key = item.key.rawValue
        wire.stamp = item.version.stamp.rawValue
        wire.origin = origins.data(item.version.origin)
        wire.deleted = item.deleted
        if let fields = item.mergeFields {
            wire.conflicts = fields.conflicts.map(candidate)
            wire.joined = fields.joined
            wire.fields = Data(fields.body)
        }
        guard !item.deleted else { return wire }
        wire.name = item.name
        if let serial = item.serialNumber { wire.serialNumber = serial }
        wire.valueInDollars = item.valueInDollars
        wire.dateCreatedMs = item.dateCreatedMilliseconds
        if let image = item.image {
            wire.imageSha256 = Data(image.digest.bytes)
            wire.imageSize = UInt64(image.size)
        }
        return wire
    }

    private static func candidate(_ listed: ListedCandidate) -> Hpsync_V1_FieldCandidate {
        var wire = Hpsync_V1_FieldCandidate()
        wire.field = UInt32(ItemField.allCases.firstIndex(of: listed.field)! + 1)
        wire.stamp = listed.version.stamp.rawValue
        wire.origin = Data(listed.version.origin.bytes)
        if let base = listed.base {
            wire.baseStamp = base.stamp.rawValue
            wire.baseOrigin = Data(base.origin.bytes)
        }
        switch listed.content {
        case .text(let text): wire.text = text
        case .optionalText(let text): if let text { wire.text = text }
        case .integer(let value): wire.integer = value
        case .photo(let ref):
            if let ref {
                wire.imageSha256 = Data(ref.digest.bytes)
                wire.imageSize = UInt64(ref.size)
            }
        }
        return wire
    }

    private static func counts(_ counts: ChangeCounts) -> Hpsync_V1_ChangeCounts {
        var wire = Hpsync_V1_ChangeCounts()
        wire.inserted = UInt64(counts.inserted)
        wire.updated = UInt64(counts.updated)
        wire.deleted = UInt64(counts.deleted)
        wire.tombstones = UInt64(counts.tombstones)
        wire.skipped = UInt64(counts.skipped)
        wire.refused = UInt64(counts.refused)
        wire.images = UInt64(counts.images)
        wire.imageBytes = UInt64(max(0, counts.imageBytes))
        wire.entries = UInt64(counts.entries)
        wire.records = UInt64(counts.records)
        return wire
    }
}

/// The wire bytes of the origins of a page's entries: the previous entry's when the node is the
/// same (a feed's entries share a few origins), instead of new `Data` for each entry.
private struct OriginBytes {
    private var last: (node: NodeID, data: Data)?

    mutating func data(_ node: NodeID) -> Data {
        if let last, last.node == node { return last.data }
        let data = Data(node.bytes)
        last = (node, data)
        return data
    }
}
