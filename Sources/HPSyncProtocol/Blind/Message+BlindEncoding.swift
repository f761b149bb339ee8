import Foundation
import HPSyncModel

extension Message {
    /// The generated form of a version-4 blind message; nil for every other message.
    func blindEnvelopeBody() -> Hpsync_V1_Envelope.OneOf_Body? {
        switch self {
        case .blindHeadRequest: return .blindHeadRequest(Hpsync_V1_BlindHeadRequest())
        case .blindHead(let head):
            var wire = Hpsync_V1_BlindHead()
            wire.epoch = UInt64(head.epoch)
            wire.sealed = Data(head.sealed)
            return .blindHead(wire)
        case .blindList(let since):
            var wire = Hpsync_V1_BlindList()
            wire.sinceSeq = UInt64(since)
            return .blindList(wire)
        case .blindListPage(let page):
            var wire = Hpsync_V1_BlindListPage()
            wire.entries = page.entries.map(Self.wire)
            wire.throughSeq = UInt64(page.throughSeq)
            wire.final = page.isFinal
            return .blindListPage(wire)
        case .blindGet(let ids):
            var wire = Hpsync_V1_BlindGet()
            wire.ids = ids.map { Data($0.bytes) }
            return .blindGet(wire)
        case .blindObjects(let objects, let isFinal):
            var wire = Hpsync_V1_BlindObjects()
            wire.objects = objects.map(Self.wire)
            wire.final = isFinal
            return .blindObjects(wire)
        case .blindGetPhoto(let id, let kind):
            var wire = Hpsync_V1_BlindGetPhoto()
            wire.photoID = Data(id.bytes)
            wire.kind = kind.rawValue
            return .blindGetPhoto(wire)
        case .blindPhotoHeader(let header):
            var wire = Hpsync_V1_BlindPhotoHeader()
            wire.photoID = Data(header.id.bytes)
            wire.size = UInt64(header.size)
            wire.missing = header.missing
            wire.kind = header.kind.rawValue
            return .blindPhotoHeader(wire)
        case .blindPut(let objects):
            var wire = Hpsync_V1_BlindPut()
            wire.objects = objects.map(Self.wire)
            return .blindPut(wire)
        case .blindPutDone(let applied, let stale, let through):
            var wire = Hpsync_V1_BlindPutDone()
            wire.applied = UInt64(applied)
            wire.stale = UInt64(stale)
            wire.throughSeq = UInt64(through)
            return .blindPutDone(wire)
        case .blindSetHead(let expected, let head):
            var wire = Hpsync_V1_BlindSetHead()
            wire.expectedEpoch = UInt64(expected)
            wire.epoch = UInt64(head.epoch)
            wire.sealed = Data(head.sealed)
            return .blindSetHead(wire)
        default: return nil
        }
    }

    private static func wire(_ entry: BlindEntry) -> Hpsync_V1_BlindEntry {
        var wire = Hpsync_V1_BlindEntry()
        wire.id = Data(entry.id.bytes)
        wire.stamp = entry.version.stamp.rawValue
        wire.origin = Data(entry.version.origin.bytes)
        wire.seq = UInt64(entry.seq)
        if let photo = entry.photo {
            wire.photoID = Data(photo.id.bytes)
            wire.photoSize = UInt64(photo.size)
        }
        return wire
    }

    private static func wire(_ object: BlindObject) -> Hpsync_V1_BlindObject {
        var wire = Hpsync_V1_BlindObject()
        wire.entry = Self.wire(object.entry)
        wire.sealed = Data(object.sealed)
        return wire
    }
}
