import HPSyncModel

/// The sizes, nonces and keys of one sealed stream (a photo or a pack): what `StreamSealer` and
/// `StreamOpener` share.
///
/// The padded plaintext is P = max(4096, Padmé(plainSize + 1)) bytes: the plaintext, 0x80, zeros.
/// The + 1 makes room for the 0x80 that ends every stream; the floor of 4 KiB hides the sizes of
/// small ones, where Padmé's buckets are finest. P is cut into 64 KiB chunks, the last one shorter
/// and never empty; each is sealed with a 16-byte tag after a 17-byte header.
struct StreamLayout: Sendable {
    static let formatVersion: UInt8 = 1
    static let saltByteCount = 16
    static let headerByteCount = 1 + saltByteCount
    static let chunkByteCount = 65536
    static let minimumPaddedSize: Int64 = 4096
    let kind: SealedStreamKind
    let plainSize: Int64
    let paddedSize: Int64
    let chunkCount: Int64

    /// The layout of a stream of `plainSize` bytes; nil outside 0...kind.maximumPlainSize.
    init?(_ kind: SealedStreamKind, plainSize: Int64) {
        guard plainSize >= 0 && plainSize <= kind.maximumPlainSize else { return nil }
        self.kind = kind
        self.plainSize = plainSize
        paddedSize = max(Self.minimumPaddedSize, Padme.paddedLength(plainSize + 1))
        chunkCount = (paddedSize + Int64(Self.chunkByteCount) - 1) / Int64(Self.chunkByteCount)
    }

    /// Header, padded plaintext, and one tag per chunk.
    var sealedSize: Int64 {
        Int64(Self.headerByteCount) + paddedSize + Int64(ChaChaPoly.tagByteCount) * chunkCount
    }

    /// Where chunk `index` starts in the padded plaintext.
    func chunkStart(_ index: Int64) -> Int64 {
        index * Int64(Self.chunkByteCount)
    }

    /// The plaintext length of chunk `index`: 64 KiB but for the last, which has the rest.
    func chunkLength(_ index: Int64) -> Int {
        Int(min(Int64(Self.chunkByteCount), paddedSize - chunkStart(index)))
    }

    /// Chunk `index`'s nonce: the index as 11 bytes big-endian, then 1 for the last chunk, else 0.
    ///
    /// The index stops chunks from being reordered or repeated; the flag stops a stream from being
    /// cut after a whole chunk (STREAM, Hoang, Reyhanitabar, Rogaway and Vizár, CRYPTO 2015).
    func nonce(_ index: Int64) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: ChaChaPoly.nonceByteCount)
        for byte in 0..<8 {
            nonce[10 - byte] = UInt8(truncatingIfNeeded: index >> (8 * byte))
        }
        nonce[11] = index == chunkCount - 1 ? 1 : 0
        return nonce
    }

    /// The kind's label (`"hp-sync photo v1"`, `"hp-sync pack v1"`) ‖ id ‖ plainSize (8 bytes
    /// big-endian), bound to every chunk.
    func associatedData(id: [UInt8]) -> [UInt8] {
        var data = kind.associatedDataLabel + id
        for byte in (0..<8).reversed() {
            data.append(UInt8(truncatingIfNeeded: plainSize >> (8 * byte)))
        }
        return data
    }

    /// The stream's own key: HKDF-SHA256 of the kind's subkey with the header's salt and the info
    /// of the kind (`"hp-sync v4 photo chunk"`, `"hp-sync v6 pack chunk"`) ‖ id.
    ///
    /// A fresh salt per sealing gives each sealed copy its own key, so the counter nonces never
    /// repeat under one key even when the same plaintext is sealed twice.
    func chunkKey(subkey: [UInt8], salt: [UInt8], id: [UInt8]) -> [UInt8] {
        HKDFSHA256.deriveKey(
            inputKeyMaterial: subkey, salt: salt, info: kind.chunkKeyInfo + id, byteCount: ChaChaPoly.keyByteCount)
    }

    /// The padding byte at `offset` of the padded plaintext (an offset at or past the stream's end).
    func paddingByte(at offset: Int64) -> UInt8 {
        offset == plainSize ? 0x80 : 0
    }
}
