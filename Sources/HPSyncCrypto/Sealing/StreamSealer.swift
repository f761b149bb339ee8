import HPSyncModel

/// Seals one photo or pack as it streams, holding at most one 64 KiB chunk beyond what it is
/// given.
///
/// Made by `BlindKeys.sealer(_:id:plainSize:)`.
/// The construction is STREAM (Hoang, Reyhanitabar, Rogaway and Vizár, CRYPTO 2015), as age and
/// Tink use it:
///
/// - header: format version (1 byte, 1) ‖ salt (16 random bytes);
/// - chunk key: HKDF-SHA256(IKM: the kind's subkey, salt: the salt, info: the kind's
///   (`"hp-sync v4 photo chunk"`, `"hp-sync v6 pack chunk"`) ‖ id);
/// - plaintext: the bytes ‖ 0x80 ‖ zeros, P = max(4096, Padmé(plainSize + 1)) bytes in all, cut
///   into 64 KiB chunks, the last shorter and never empty;
/// - chunk i: ChaCha20-Poly1305 under the chunk key, nonce = i (11 bytes big-endian) ‖ 1 for the
///   last chunk, else 0; associated data = the kind's label (`"hp-sync photo v1"`,
///   `"hp-sync pack v1"`) ‖ id ‖ plainSize (8 bytes big-endian); sealed as ciphertext ‖ 16-byte
///   tag.
///
/// So a sealed stream is `BlindKeys.sealedSize(of:plainSize:)` = 17 + P + 16 × ⌈P / 65536⌉ bytes,
/// and the host learns the size only to Padmé's bucket. The sealed bytes are the concatenation of
/// what `header()`, `update(_:)` and `finish()` return, in call order.
public struct StreamSealer: Sendable {
    private let layout: StreamLayout
    private let chunkKey: [UInt8]
    private let associatedData: [UInt8]
    private let headerBytes: [UInt8]
    private var headerEmitted = false
    /// Plaintext of the chunk being filled.
    private var pending: [UInt8] = []
    private var nextChunk: Int64 = 0
    /// Bytes given so far, and whether more than `plainSize` were offered.
    private var received: Int64 = 0
    private var overrun = false
    private var finished = false

    init(subkey: [UInt8], id: [UInt8], layout: StreamLayout, salt: [UInt8]) {
        precondition(salt.count == StreamLayout.saltByteCount, "a stream's salt is 16 bytes")
        self.layout = layout
        chunkKey = layout.chunkKey(subkey: subkey, salt: salt, id: id)
        associatedData = layout.associatedData(id: id)
        headerBytes = [StreamLayout.formatVersion] + salt
        pending.reserveCapacity(min(StreamLayout.chunkByteCount, Int(layout.paddedSize)))
    }

    /// The 17-byte header, for a caller that sends it before any other byte; empty once the header
    /// has been returned (by this, `update(_:)` or `finish()`, whichever came first).
    public mutating func header() -> [UInt8] {
        guard !headerEmitted else { return [] }
        headerEmitted = true
        return headerBytes
    }

    /// Takes the next bytes and returns the sealed bytes now ready: the header if not yet
    /// returned, then every chunk completed.
    ///
    /// Bytes past `plainSize` are not sealed; `finish()` then throws.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        precondition(!finished, "StreamSealer used after finish()")
        var output = header()
        let room = layout.plainSize - received
        if Int64(bytes.count) > room { overrun = true }
        let taken = Int(min(Int64(bytes.count), room))
        var offset = 0
        while offset < taken {
            let count = min(StreamLayout.chunkByteCount - pending.count, taken - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            offset += count
            // The plaintext alone never fills the last chunk (it holds at least the 0x80), so a full
            // chunk here is never the last.
            if pending.count == StreamLayout.chunkByteCount {
                output.append(contentsOf: sealPending())
            }
        }
        received += Int64(taken)
        return output
    }

    /// Takes the next bytes and returns the sealed bytes now ready.
    public mutating func update(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Pads and seals the rest and returns the last sealed bytes.
    ///
    /// Throws `malformed` unless exactly `plainSize` bytes were given: a photo that changed size
    /// while it was read must not be sent under the size its record announces, nor a pack under
    /// the size its head names.
    public mutating func finish() throws(SealingError) -> [UInt8] {
        precondition(!finished, "StreamSealer.finish() called twice")
        finished = true
        guard !overrun else {
            throw .malformed("the \(layout.kind.noun) has more than the \(layout.plainSize) bytes it was sealed for")
        }
        guard received == layout.plainSize else {
            throw .malformed(
                "the \(layout.kind.noun) ended after \(received) of the \(layout.plainSize) bytes it was sealed for")
        }
        var output = header()
        // The last plaintext bytes are pending, so the 0x80 goes first, then zeros chunk by chunk.
        pending.append(0x80)
        while nextChunk < layout.chunkCount {
            pending.append(contentsOf: [UInt8](repeating: 0, count: layout.chunkLength(nextChunk) - pending.count))
            output.append(contentsOf: sealPending())
        }
        return output
    }

    private mutating func sealPending() -> [UInt8] {
        let sealed = ChaChaPoly.seal(
            key: chunkKey, nonce: layout.nonce(nextChunk), plaintext: pending, aad: associatedData)
        pending.removeAll(keepingCapacity: true)
        nextChunk += 1
        return sealed
    }
}
