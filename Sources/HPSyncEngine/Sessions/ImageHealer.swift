import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// The client's side of healing (protocol version 3, Protocol.md §5.7): asks the server for
/// images by digest before its PullRequest, verifies each against the digest and size its own
/// record names, and puts it in place through the image journal.
///
/// One request per distinct digest (several items may share one photo); the server answers
/// each with an ImageHeader, `missing` when it cannot supply the bytes intact.
struct ImageHealer {
    let channel: any MessageChannel
    let store: Store
    let logger: Logger

    /// Heals `wanted`; adds the keys healed and those the server could not supply to `report`.
    func run(_ wanted: [ImageToHeal], into report: inout SyncReport) throws {
        var keysByImage: [ImageRef: [ItemKey]] = [:]
        var requests: [(ImageWanted, ImageRef)] = []
        for item in wanted {
            if keysByImage[item.ref] == nil {
                requests.append((ImageWanted(key: item.key, digest: item.ref.digest), item.ref))
            }
            keysByImage[item.ref, default: []].append(item.key)
        }
        for group in requests.chunked(ProtocolLimits.imagesPerRequest) {
            try channel.send(.fetchImagesByDigest(group.map(\.0)))
            for (asked, ref) in group {
                let keys = keysByImage[ref] ?? []
                guard let staged = try receive(asked, expected: ref, report: &report) else {
                    report.unhealed.append(contentsOf: keys.map(\.rawValue))
                    continue
                }
                let healed = try store.heal(staged, for: keys)
                report.healed.append(contentsOf: healed.map(\.rawValue))
            }
        }
        if !report.unhealed.isEmpty {
            logger.warning(
                "the peer could not supply some images either",
                metadata: ["peer": "\(report.peer)", "keys": "\(report.unhealed.kept)"])
        }
    }

    /// Reads one ImageHeader and its chunks into a verified staging file; nil when missing.
    private func receive(_ asked: ImageWanted, expected: ImageRef, report: inout SyncReport) throws -> StagedImage? {
        let header: ImageHeaderMessage
        switch try channel.receiveMessage(expecting: "ImageHeader") {
        case .imageHeader(let received): header = received
        case .error(let error): throw SyncError.refusedByPeer(error)
        case let other: throw SyncError.protocolViolation(.unexpectedMessage(got: other.name, expected: "ImageHeader"))
        }
        guard header.key == asked.key, header.digest == asked.digest else {
            throw SyncError.protocolViolation(
                .violation("ImageHeader for \(header.key) does not answer FetchImagesByDigest's \(asked.key)"))
        }
        if header.missing { return nil }
        guard header.size > 0 else {
            throw SyncError.protocolViolation(
                .invalidField(message: "ImageHeader", field: "size", problem: "is 0 for an image that is not missing"))
        }
        guard header.size == expected.size else {
            throw SyncError.imageDigestMismatch(
                key: header.key.rawValue,
                detail: "SHA-256 \(expected.digest) names \(expected.size) bytes, the peer announced \(header.size)")
        }
        let staging = try store.stageImage(expected: expected)
        do {
            var received: Int64 = 0
            while received < header.size {
                guard case .imageChunk(let bytes) = try channel.receive(expecting: "IMAGE_CHUNK") else {
                    throw SyncError.protocolViolation(
                        .violation("a MESSAGE frame arrived before the announced image bytes were complete"))
                }
                received += Int64(bytes.count)
                guard received <= header.size else {
                    throw SyncError.protocolViolation(.violation("IMAGE_CHUNK frames exceed the announced size"))
                }
                try bytes.withUnsafeBytes { try staging.write($0) }
            }
            let image = try staging.finish(sentBy: header.key)
            report.imagesTransferred += 1
            report.imageBytes += header.size
            return image
        } catch {
            staging.abort()
            throw error
        }
    }
}
