import Foundation
import HPSyncModel
import HPSyncProtocol

/// The frames a locally played peer has for the session to receive, in order. A photo is queued
/// as a promise: when its turn comes, it is fetched and opened (`OpenedPhoto`: in memory within
/// a budget, else in a temporary file), and only then announced (ImageHeader) and streamed, so no
/// unchecked byte reaches the sink. One that cannot be had is announced missing.
final class BlindOutbox {
    private enum Entry {
        case frame(IncomingFrame)
        case photo(key: ItemKey, image: ImageRef, open: () throws -> OpenedPhoto, failed: (any Error) -> Void)
    }

    private var entries: [Entry] = []
    private var head = 0
    /// The photo being streamed: what is left of it, from its bytes at `offset` or its file.
    private var streaming: (photo: OpenedPhoto, handle: FileHandle?, offset: Int, left: Int64)?

    func message(_ message: Message) { entries.append(.frame(.message(message))) }

    func missing(_ key: ItemKey, _ digest: SHA256Digest) {
        message(.imageHeader(ImageHeaderMessage(key: key, digest: digest, size: 0, missing: true)))
    }

    func photo(
        key: ItemKey, image: ImageRef, open: @escaping () throws -> OpenedPhoto,
        failed: @escaping (any Error) -> Void
    ) {
        entries.append(.photo(key: key, image: image, open: open, failed: failed))
    }

    /// The next frame, or nil when nothing is queued.
    func next() throws -> IncomingFrame? {
        if let current = streaming {
            let count = Int(min(Int64(ProtocolLimits.chunkSize), current.left))
            let chunk: [UInt8]
            switch current.photo.storage {
            case .bytes(let bytes) where current.offset == 0 && count == bytes.count: chunk = bytes
            case .bytes(let bytes): chunk = Array(bytes[current.offset..<current.offset + count])
            case .file:
                let read = try current.handle?.read(upToCount: count) ?? Data()
                guard read.count == count else {
                    finishStreaming()
                    throw CocoaError(.fileReadCorruptFile)
                }
                chunk = Array(read)
            }
            streaming?.offset += count
            streaming?.left -= Int64(count)
            if streaming!.left == 0 { finishStreaming() }
            return .imageChunk(chunk)
        }
        guard head < entries.count else { return nil }
        let entry = entries[head]
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        }
        switch entry {
        case .frame(let frame): return frame
        case .photo(let key, let image, let open, let failed):
            do {
                let photo = try open()
                if image.size > 0 {
                    var handle: FileHandle?
                    if case .file(let url) = photo.storage { handle = try FileHandle(forReadingFrom: url) }
                    streaming = (photo, handle, 0, image.size)
                }
                return .message(.imageHeader(ImageHeaderMessage(key: key, digest: image.digest, size: image.size)))
            } catch {
                failed(error)
                return .message(
                    .imageHeader(ImageHeaderMessage(key: key, digest: image.digest, size: 0, missing: true)))
            }
        }
    }

    /// Drops a photo being streamed (the session ended early).
    func close() { finishStreaming() }

    private func finishStreaming() {
        guard let current = streaming else { return }
        try? current.handle?.close()
        streaming = nil
    }
}
