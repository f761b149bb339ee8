import Foundation
import HPSyncModel
import HPSyncProtocol

/// The frames a locally played peer has for the session to receive, in order. A photo is queued
/// as a promise: when its turn comes, it is fetched and opened into a temporary file, and only
/// then announced (ImageHeader) and streamed from it, so no unchecked byte reaches the sink and
/// no photo is held whole in memory. One that cannot be had is announced missing.
final class BlindOutbox {
    private enum Entry {
        case frame(IncomingFrame)
        case photo(key: ItemKey, image: ImageRef, open: () throws -> URL, failed: (any Error) -> Void)
    }

    private var entries: [Entry] = []
    private var head = 0
    private var streaming: (handle: FileHandle, url: URL, left: Int64)?

    func message(_ message: Message) { entries.append(.frame(.message(message))) }

    func missing(_ key: ItemKey, _ digest: SHA256Digest) {
        message(.imageHeader(ImageHeaderMessage(key: key, digest: digest, size: 0, missing: true)))
    }

    func photo(
        key: ItemKey, image: ImageRef, open: @escaping () throws -> URL, failed: @escaping (any Error) -> Void
    ) {
        entries.append(.photo(key: key, image: image, open: open, failed: failed))
    }

    /// The next frame, or nil when nothing is queued.
    func next() throws -> IncomingFrame? {
        if let current = streaming {
            let count = Int(min(Int64(ProtocolLimits.chunkSize), current.left))
            let bytes = try current.handle.read(upToCount: count) ?? Data()
            guard bytes.count == count else {
                finishStreaming()
                throw CocoaError(.fileReadCorruptFile)
            }
            streaming?.left -= Int64(count)
            if streaming!.left == 0 { finishStreaming() }
            return .imageChunk(Array(bytes))
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
                let url = try open()
                let handle = try FileHandle(forReadingFrom: url)
                if image.size > 0 {
                    streaming = (handle, url, image.size)
                } else {
                    try? handle.close()
                    try? FileManager.default.removeItem(at: url)
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
        try? current.handle.close()
        try? FileManager.default.removeItem(at: current.url)
        streaming = nil
    }
}
