import Foundation
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Serves one INTENT_BLIND session on a blind store (Protocol.md 5.8): answers BlindHeadRequest,
/// BlindList, BlindGet and BlindGetPhoto for any listed peer, and stores BlindPut, uploaded photos
/// and BlindSetHead for a read-write one, until EndSession. The store cannot open what it keeps;
/// it orders versions, counts bytes and keeps everything durable before it says so.
final class BlindServerSession {
    private let channel: any MessageChannel
    private let store: Store
    private let peer: Peer
    private let logger: Logger
    private let shouldStop: @Sendable () -> Bool
    /// Held from the session's first write to its end: one writer at a time per store, so a
    /// writer's listing, puts and head stay one story (other readers see an open head meanwhile).
    private var holdsWriterLock = false
    private let writerWait: Duration
    /// Photos uploaded since the last commit: made durable and renamed before the next
    /// BlindPut (or the end of the session), the folder fsynced once for all of them.
    private var uploads: [SealedPhotoUpload] = []
    /// Whether this session uploaded a pack: its writer keeps the inventory in packs, and a head
    /// it sets drops the version-4 entries (a store converted, Protocol.md 5.8.7).
    private var uploadedPack = false

    /// What the session did, for the log line and the Done.
    struct Counts {
        var listed = 0
        var sent = 0
        var photosSent = 0
        var stored = 0
        var stale = 0
        var photosStored = 0
        var bytes: Int64 = 0
    }
    private(set) var counts = Counts()

    /// How long a second writer waits for the first (Protocol.md 5.8.4) before ERROR_BUSY.
    static let writerWait = Duration.seconds(30)

    init(
        channel: any MessageChannel, store: Store, peer: Peer, logger: Logger,
        shouldStop: @escaping @Sendable () -> Bool, writerWait: Duration = writerWait
    ) {
        self.writerWait = writerWait
        self.channel = channel
        self.store = store
        self.peer = peer
        self.logger = logger
        self.shouldStop = shouldStop
    }

    deinit {
        if holdsWriterLock { Self.writers.unlock(store.directory.path) }
    }

    func run() throws {
        while true {
            if shouldStop() {
                let stop = PeerErrorMessage(
                    code: .shuttingDown, message: "the server is shutting down; sync again later")
                try? channel.send(.error(stop))
                throw ServerRefusal(error: stop)
            }
            let message = try channel.receiveMessage(expecting: "a blind request or EndSession")
            switch message {
            case .blindHeadRequest: try channel.send(.blindHead(store.blindHead()))
            case .blindList(let since): try list(after: since)
            case .blindGet(let ids): try send(ids)
            case .blindGetPhoto(let id, let kind): try sendStream(id, kind)
            case .blindPhotoHeader(let header):
                try mayWrite()
                try receiveStream(header)
            case .blindPut(let objects):
                try mayWrite()
                try commitUploads()
                let result = try store.blindPut(objects)
                counts.stored += Int(result.applied)
                counts.stale += Int(result.stale)
                try channel.send(
                    .blindPutDone(applied: result.applied, stale: result.stale, throughSeq: result.throughSeq))
            case .blindSetHead(let expected, let head):
                try mayWrite()
                // A version-6 head names packs uploaded before it: durable first (5.8.4).
                try commitUploads()
                if try store.setBlindHead(expected: expected, head, droppingEntries: uploadedPack) {
                    try channel.send(.blindPutDone(applied: 1, stale: 0, throughSeq: 0))
                } else {
                    try channel.send(.blindHead(store.blindHead()))
                }
            case .endSession:
                try commitUploads()
                var done = ChangeCounts()
                done.entries = counts.listed
                done.records = counts.sent
                done.images = counts.photosSent
                done.inserted = counts.stored
                done.skipped = counts.stale
                try channel.send(.done(done))
                return
            case .error(let error): throw SyncError.refusedByPeer(error)
            default:
                throw SyncError.protocolViolation(
                    .unexpectedMessage(got: message.name, expected: "a blind request or EndSession"))
            }
        }
    }

    private func list(after since: Int64) throws {
        var cursor = since
        while true {
            let page = try store.blindEntries(after: cursor, limit: ProtocolLimits.maxManifestEntries)
            try channel.send(.blindListPage(page))
            counts.listed += page.entries.count
            if page.isFinal { return }
            cursor = page.throughSeq
        }
    }

    /// Answers a BlindGet in messages that stay well under the frame limit.
    private func send(_ ids: [BlindID]) throws {
        let objects = try store.blindObjects(ids)
        var batch: [BlindObject] = []
        var bytes = 0
        for object in objects {
            let size = object.sealed.count + 128
            if !batch.isEmpty && bytes + size > ProtocolLimits.maxMessageBytes / 2 {
                try channel.send(.blindObjects(batch, isFinal: false))
                batch = []
                bytes = 0
            }
            batch.append(object)
            bytes += size
        }
        try channel.send(.blindObjects(batch, isFinal: true))
        counts.sent += objects.count
    }

    private func sendStream(_ id: BlindID, _ kind: SealedStreamKind) throws {
        guard let reader = SealedPhotoReader(store: store, id: id, kind: kind) else {
            try channel.send(.blindPhotoHeader(BlindPhotoHeader(id: id, size: 0, missing: true, kind: kind)))
            return
        }
        try channel.send(.blindPhotoHeader(BlindPhotoHeader(id: id, size: reader.size, kind: kind)))
        var buffer = [UInt8](repeating: 0, count: ProtocolLimits.chunkSize)
        var left = reader.size
        while left > 0 {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            // The file shrank under us (damage): the client sees a short photo and refuses it.
            guard count > 0 else { throw StoreError.io(path: store.sealedURL(id, kind).path, reason: "ended early") }
            let sending = Int(min(Int64(count), left))
            try buffer.withUnsafeBytes { try channel.sendImageChunk(UnsafeRawBufferPointer(rebasing: $0[..<sending])) }
            left -= Int64(sending)
        }
        counts.photosSent += 1
        counts.bytes += reader.size
    }

    private func receiveStream(_ header: BlindPhotoHeader) throws {
        guard !header.missing else {
            throw SyncError.protocolViolation(.violation("a client's BlindPhotoHeader must not set missing"))
        }
        let upload = try SealedPhotoUpload(store: store, id: header.id, size: header.size, kind: header.kind)
        if header.kind == .pack { uploadedPack = true }
        var left = header.size
        while left > 0 {
            switch try channel.receive(expecting: "IMAGE_CHUNK") {
            case .imageChunk(let bytes):
                guard Int64(bytes.count) <= left else {
                    throw SyncError.protocolViolation(
                        .violation("sealed \(header.kind.noun) \(header.id) sent more than its \(header.size) bytes"))
                }
                try bytes.withUnsafeBytes { try upload.write($0) }
                left -= Int64(bytes.count)
            case .message(let message):
                throw SyncError.protocolViolation(.unexpectedMessage(got: message.name, expected: "IMAGE_CHUNK"))
            }
        }
        try upload.finish()
        uploads.append(upload)
        counts.photosStored += 1
        counts.bytes += header.size
    }

    /// Makes the photos and packs uploaded so far durable under their IDs.
    private func commitUploads() throws {
        guard !uploads.isEmpty else { return }
        for upload in uploads { try upload.commit() }
        for kind in Set(uploads.map(\.kind)) { try store.syncSealedDirectory(kind) }
        uploads = []
    }

    /// A read-only peer may list and fetch, never store; the first write takes the store's
    /// writer lock for the rest of the session.
    private func mayWrite() throws {
        guard peer.permission == .readWrite else {
            let error = PeerErrorMessage(
                code: .readOnly,
                message:
                    "not authorized to write: peer '\(peer.name)' may only read this blind store; to allow it, run on the server: hp-sync peer set \(peer.name) --allow read-write"
            )
            try? channel.send(.error(error))
            throw ServerRefusal(error: error)
        }
        guard !holdsWriterLock else { return }
        guard Self.writers.lock(store.directory.path, waiting: writerWait) else {
            let error = PeerErrorMessage(
                code: .busy, message: "another node is writing to this blind store; sync again in a minute")
            try? channel.send(.error(error))
            throw ServerRefusal(error: error)
        }
        holdsWriterLock = true
    }

    /// One writer per blind store in this process.
    private static let writers = WriterLocks()

    final class WriterLocks: @unchecked Sendable {
        private let condition = NSCondition()
        private var held: Set<String> = []

        func lock(_ path: String, waiting: Duration) -> Bool {
            let (seconds, attoseconds) = waiting.components
            let deadline = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
            condition.lock()
            defer { condition.unlock() }
            while held.contains(path) {
                guard condition.wait(until: deadline) else { return false }
            }
            held.insert(path)
            return true
        }

        func unlock(_ path: String) {
            condition.lock()
            held.remove(path)
            condition.broadcast()
            condition.unlock()
        }
    }
}
