import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import Logging

/// Answers image requests (FetchImages in a session's page, FetchImagesByDigest before a pull):
/// one ImageHeader, then the bytes in IMAGE_CHUNK frames straight from the file.
///
/// Only bytes that match their digest leave: a file that is gone or damaged is answered as
/// missing (the sink withholds the record, or asks another peer) and logged, and this store
/// remembers it for healing. Sending it would make the sink end the whole session.
final class ImageSender {
    private let channel: any MessageChannel
    private let store: Store
    private let logger: Logger
    private var chunkBuffer: [UInt8] = []
    /// Where each image's bytes wait between their check and their sending (read once).
    private let hold = ImageHold()

    init(channel: any MessageChannel, store: Store, logger: Logger) {
        self.channel = channel
        self.store = store
        self.logger = logger
    }

    /// Answers one image; false when it was answered as missing.
    @discardableResult
    func send(_ wanted: ImageWanted, report: inout SyncReport) throws -> Bool {
        guard let file = try open(wanted) else {
            try channel.send(
                .imageHeader(ImageHeaderMessage(key: wanted.key, digest: wanted.digest, size: 0, missing: true)))
            return false
        }
        defer { file.close() }
        try channel.send(.imageHeader(ImageHeaderMessage(key: wanted.key, digest: wanted.digest, size: file.size)))
        if chunkBuffer.isEmpty { chunkBuffer = [UInt8](repeating: 0, count: ProtocolLimits.chunkSize) }
        var remaining = file.size
        while remaining > 0 {
            let want = Int(Swift.min(Int64(chunkBuffer.count), remaining))
            let got = try chunkBuffer.withUnsafeMutableBytes { buffer in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            }
            guard got > 0 else { throw file.shortFileError() }
            try chunkBuffer.withUnsafeBytes {
                try channel.sendImageChunk(UnsafeRawBufferPointer(rebasing: $0[0..<got]))
            }
            remaining -= Int64(got)
        }
        report.imagesTransferred += 1
        report.imageBytes += file.size
        return true
    }

    /// The file with the wanted bytes: first the file of the key asked for (a sink asks for the
    /// image of a record this source sent, under that record's key: no query), else any file
    /// with the digest, which a query of the store finds and judges.
    private func open(_ wanted: ImageWanted) throws -> ImageReader? {
        if let file = try store.openImage(ofKey: wanted.key, holding: wanted.digest, using: hold) { return file }
        let (found, damaged) = try store.openIntactImage(withDigest: wanted.digest, using: hold)
        if !damaged.isEmpty {
            logger.warning(
                "this store's own image is missing or damaged; answered as missing. `hp-sync verify --repair --from PEER` fetches it again",
                metadata: ["sha256": "\(wanted.digest)", "keys": "\(damaged.map(\.rawValue))"])
        }
        return found
    }
}
