import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The blind store at the other end of a TLS connection, as typed calls: one INTENT_BLIND
/// session (Protocol.md 5.8), each call one request and its answer.
final class BlindRemote {
    let channel: any MessageChannel
    let peerName: String

    init(channel: any MessageChannel, peerName: String) {
        self.channel = channel
        self.peerName = peerName
    }

    /// Says Hello with INTENT_BLIND and checks the answer.
    func handshake(
        store: Store, serverNodeID: NodeID, software: String, maxVersion: UInt32 = ProtocolLimits.maxVersion
    ) throws -> HelloMessage {
        let mine = ClientHandshake.hello(
            intent: .blind, dryRun: false, nodeID: store.nodeID, storeID: store.storeID, software: software,
            clockMilliseconds: store.nowMilliseconds(), minVersion: ProtocolLimits.blindVersion, maxVersion: maxVersion)
        try channel.send(.hello(mine))
        let reply = try channel.receiveMessage(expecting: "Hello")
        switch ClientHandshake.decide(reply: reply, to: mine, serverNodeID: serverNodeID) {
        case .accept(let server): return server
        case .refuse(let error): throw error
        }
    }

    func head() throws -> BlindHeadMessage {
        try channel.send(.blindHeadRequest)
        let reply = try receive("BlindHead")
        guard case .blindHead(let head) = reply else { throw unexpected(reply, "BlindHead") }
        return head
    }

    /// Lists the entries after `since`, a page at a time.
    func list(after since: Int64, _ page: (BlindListPage) throws -> Void) throws {
        try channel.send(.blindList(sinceSeq: since))
        var previous = since
        while true {
            let reply = try receive("BlindListPage")
            guard case .blindListPage(let listed) = reply else { throw unexpected(reply, "BlindListPage") }
            guard listed.entries.first.map({ $0.seq > previous }) ?? true else {
                throw SyncError.protocolViolation(.violation("BlindListPage lists seq \(previous) or below again"))
            }
            previous = max(previous, listed.throughSeq)
            try page(listed)
            if listed.isFinal { return }
        }
    }

    /// The stored objects of `ids` (at most 1024), by ID.
    func get(_ ids: [BlindID]) throws -> [BlindID: BlindObject] {
        try channel.send(.blindGet(ids))
        var objects: [BlindID: BlindObject] = [:]
        let asked = Set(ids)
        while true {
            let reply = try receive("BlindObjects")
            guard case .blindObjects(let batch, let isFinal) = reply else { throw unexpected(reply, "BlindObjects") }
            for object in batch {
                guard asked.contains(object.entry.id), objects[object.entry.id] == nil else {
                    throw SyncError.protocolViolation(.violation("BlindObjects holds an ID not asked for, or twice"))
                }
                objects[object.entry.id] = object
            }
            if isFinal { return objects }
        }
    }

    /// Asks for the sealed photo (or pack) `id` without waiting: `photo(_:expectedSize:_:)`
    /// reads the answer, in the order asked, before any other request's answer (Protocol.md 5.8.5).
    func askPhoto(_ id: BlindID, kind: SealedStreamKind = .photo) throws {
        try channel.send(.blindGetPhoto(id, kind: kind))
    }

    /// Streams the sealed photo (or pack) `id` (the oldest asked and unanswered) to `chunk`;
    /// false when the store says it has none.
    func photo(
        _ id: BlindID, kind: SealedStreamKind = .photo, expectedSize: Int64, _ chunk: ([UInt8]) throws -> Void
    ) throws -> Bool {
        let reply = try receive("BlindPhotoHeader")
        guard case .blindPhotoHeader(let header) = reply, header.id == id, header.kind == kind else {
            throw unexpected(reply, "BlindPhotoHeader of the \(kind.noun) asked for")
        }
        if header.missing { return false }
        // A photo of another size is read and dropped; a chunk `chunk` refuses stops the
        // opening, not the reading, so the session stays in step for the next request.
        var failure: (any Error)?
        var left = header.size
        while left > 0 {
            switch try channel.receive(expecting: "IMAGE_CHUNK") {
            case .imageChunk(let bytes):
                guard Int64(bytes.count) <= left else {
                    throw SyncError.protocolViolation(
                        .violation("a sealed \(kind.noun) ran past its announced size"))
                }
                left -= Int64(bytes.count)
                guard failure == nil, header.size == expectedSize else { continue }
                do { try chunk(bytes) } catch { failure = error }
            case .message(let message): throw unexpected(message, "IMAGE_CHUNK")
            }
        }
        if let failure { throw failure }
        return header.size == expectedSize
    }

    /// Uploads the sealed photo (or pack) `sealed` under `id`, in chunks; the blind store makes it
    /// durable before it answers the next BlindPut or BlindSetHead (Protocol.md 5.8.4).
    func upload(_ id: BlindID, kind: SealedStreamKind, sealed: [UInt8]) throws {
        try channel.send(.blindPhotoHeader(BlindPhotoHeader(id: id, size: Int64(sealed.count), kind: kind)))
        try sendSealed(sealed)
    }

    /// Sends sealed bytes of the upload under way as IMAGE_CHUNK frames.
    func sendSealed(_ sealed: [UInt8]) throws {
        var start = 0
        while start < sealed.count {
            let end = min(sealed.count, start + ProtocolLimits.chunkSize)
            try sealed.withUnsafeBytes { try channel.sendImageChunk(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            start = end
        }
    }

    /// Sends a BlindPut of `objects` without waiting for its answer: `putDone()` reads it, in
    /// the order the puts were sent, before any other request's answer (Protocol.md 5.8.5).
    func startPut(_ objects: [BlindObject]) throws {
        try channel.send(.blindPut(objects))
    }

    /// Replaces the head if its epoch is still `expected`; false when another writer moved it.
    func setHead(expected: Int64, _ head: BlindHeadMessage) throws -> Bool {
        try channel.send(.blindSetHead(expected: expected, head: head))
        let reply = try receive("BlindPutDone or BlindHead")
        switch reply {
        case .blindPutDone: return true
        case .blindHead: return false
        default: throw unexpected(reply, "BlindPutDone or BlindHead")
        }
    }

    /// Ends the session politely.
    func end() {
        try? channel.send(.endSession)
        _ = try? channel.receiveMessage(expecting: "Done")
        channel.close()
    }

    /// The answer to the oldest BlindPut not yet answered: what the store did.
    func putDone() throws -> (applied: Int64, stale: Int64, throughSeq: Int64) {
        let reply = try receive("BlindPutDone")
        guard case .blindPutDone(let applied, let stale, let through) = reply else {
            throw unexpected(reply, "BlindPutDone")
        }
        return (applied, stale, through)
    }

    private func receive(_ expecting: String) throws -> Message {
        let message = try channel.receiveMessage(expecting: expecting)
        if case .error(let error) = message { throw SyncError.refusedByPeer(error) }
        return message
    }

    private func unexpected(_ message: Message, _ expected: String) -> SyncError {
        .protocolViolation(.unexpectedMessage(got: message.name, expected: expected))
    }
}
