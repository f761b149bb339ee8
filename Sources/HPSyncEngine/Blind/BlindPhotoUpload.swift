import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// One photo of a push to a blind peer, sealed and sent on as the local source's IMAGE_CHUNKs
/// arrive (`BlindSink`, `BlindPackSink`): nothing of it waits in memory or on disk. The blind
/// store makes it durable before it answers the next BlindPut or BlindSetHead (Protocol.md 5.8.4).
struct BlindPhotoUpload {
    let id: BlindID
    /// The photo's plaintext size.
    let size: Int64
    /// Plaintext bytes still to come.
    private(set) var left: Int64
    private var sealer: StreamSealer

    /// Announces the sealed photo `photo` of `image` and sends its header.
    init(_ photo: BlindPhotoRef, of image: ImageRef, keys: BlindKeys, remote: BlindRemote) throws {
        id = photo.id
        size = image.size
        left = image.size
        sealer = keys.photoSealer(photoID: photo.id.bytes, plainSize: image.size)
        try remote.channel.send(.blindPhotoHeader(BlindPhotoHeader(id: photo.id, size: photo.size)))
        try remote.sendSealed(sealer.header())
    }

    /// Whether the photo has had all its bytes (then `finish` sends the rest).
    var isComplete: Bool { left == 0 }

    /// Seals and sends the next bytes of the photo; throws for bytes past its size.
    mutating func add(_ bytes: UnsafeRawBufferPointer, remote: BlindRemote) throws {
        guard Int64(bytes.count) <= left else {
            throw SyncError.protocolViolation(.violation("an image chunk the push did not ask for"))
        }
        try remote.sendSealed(sealer.update(bytes))
        left -= Int64(bytes.count)
    }

    /// Seals and sends the padding and the last chunk.
    mutating func finish(remote: BlindRemote) throws {
        try remote.sendSealed(sealer.finish())
    }
}
