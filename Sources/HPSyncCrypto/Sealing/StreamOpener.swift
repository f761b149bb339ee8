import HPSyncModel

/// Verifies and opens one sealed photo or pack as it streams (the format is `StreamSealer`'s).
///
/// Made by `BlindKeys.opener(_:id:plainSize:)` with the ID and size a record gives (a photo) or
/// the head names (a pack). `update(_:)` returns
/// bytes only from chunks whose tag verified, and never more than `plainSize` in all; the padding
/// is checked, not returned. `finish()` confirms the stream was whole. A caller keeps what
/// `update(_:)` returned aside until `finish()` succeeds: before that, chunks may be verified but
/// the stream not yet proven complete.
///
/// Any damage throws and the opener stays failed: `authenticationFailed` for a changed byte,
/// chunks reordered, repeated or taken from another stream, another ID, size or kind, or another
/// key; `malformed` for a stream longer or shorter than `sealedSize(of:plainSize:)`, or of an
/// unknown format version.
public struct StreamOpener: Sendable {
    private let kind: SealedStreamKind
    private let layout: StreamLayout?
    private let subkey: [UInt8]
    private let id: [UInt8]
    private let associatedData: [UInt8]
    private var chunkKey: [UInt8]?
    /// Sealed bytes received but not yet part of a whole chunk (or of the header).
    private var buffer: [UInt8] = []
    private var received: Int64 = 0
    private var nextChunk: Int64 = 0
    private var failure: SealingError?

    init(_ kind: SealedStreamKind, subkey: [UInt8], id: [UInt8], plainSize: Int64) {
        self.kind = kind
        self.subkey = subkey
        self.id = id
        layout = StreamLayout(kind, plainSize: plainSize)
        associatedData = layout?.associatedData(id: id) ?? []
        if layout == nil {
            failure = .malformed("a \(kind.noun) of \(plainSize) bytes is outside 0...\(kind.maximumPlainSize)")
        }
    }

    /// Takes the next sealed bytes and returns the plaintext of every chunk they completed.
    public mutating func update(_ sealed: UnsafeRawBufferPointer) throws(SealingError) -> [UInt8] {
        if let failure { throw failure }
        do {
            return try open(sealed)
        } catch {
            failure = error
            buffer = []
            throw error
        }
    }

    /// Takes the next sealed bytes and returns the plaintext of every chunk they completed.
    public mutating func update(_ sealed: [UInt8]) throws(SealingError) -> [UInt8] {
        // Array's withUnsafeBytes rethrows untyped errors: the result carries the typed one out.
        let result = sealed.withUnsafeBytes { raw in
            Result { () throws(SealingError) -> [UInt8] in try update(raw) }
        }
        return try result.get()
    }

    /// Checks that the whole sealed stream came: every chunk, the last one flagged as last, and
    /// exactly `sealedSize(of:plainSize:)` bytes.
    public mutating func finish() throws(SealingError) {
        if let failure { throw failure }
        guard let layout, chunkKey != nil, nextChunk == layout.chunkCount else {
            let expected = layout?.sealedSize ?? 0
            let error = SealingError.malformed(
                "the sealed \(kind.noun) ended after \(received) of its \(expected) bytes (truncated)")
            failure = error
            throw error
        }
    }

    private mutating func open(_ sealed: UnsafeRawBufferPointer) throws(SealingError) -> [UInt8] {
        guard let layout else { return [] }
        guard Int64(sealed.count) <= layout.sealedSize - received else {
            throw .malformed("the sealed \(kind.noun) is longer than its \(layout.sealedSize) bytes")
        }
        received += Int64(sealed.count)
        buffer.append(contentsOf: sealed)
        var start = 0
        if chunkKey == nil {
            guard buffer.count >= StreamLayout.headerByteCount else { return [] }
            guard buffer[0] == StreamLayout.formatVersion else {
                let known = StreamLayout.formatVersion
                throw .malformed(
                    "sealed \(kind.noun) format \(buffer[0]) is unknown (this hp-sync reads format \(known))")
            }
            let salt = Array(buffer[1..<StreamLayout.headerByteCount])
            chunkKey = layout.chunkKey(subkey: subkey, salt: salt, id: id)
            start = StreamLayout.headerByteCount
        }
        var output: [UInt8] = []
        while nextChunk < layout.chunkCount {
            let sealedLength = layout.chunkLength(nextChunk) + ChaChaPoly.tagByteCount
            guard buffer.count - start >= sealedLength else { break }
            let opened = buffer.withUnsafeBytes { raw in
                ChaChaPoly.open(
                    key: chunkKey!, nonce: layout.nonce(nextChunk),
                    sealed: UnsafeRawBufferPointer(rebasing: raw[start..<start + sealedLength]), aad: associatedData)
            }
            guard let chunk = opened else {
                throw .authenticationFailed(
                    what: "sealed \(kind.noun) (chunk \(nextChunk + 1) of \(layout.chunkCount))")
            }
            let chunkStart = layout.chunkStart(nextChunk)
            let plainBytes = Int(max(0, min(Int64(chunk.count), layout.plainSize - chunkStart)))
            // The padding was sealed with the plaintext, so only a holder of the key could have got
            // it wrong: not damage in transit, but data no hp-sync sealer made. Refused as unauthentic.
            for index in plainBytes..<chunk.count
            where chunk[index] != layout.paddingByte(at: chunkStart + Int64(index)) {
                throw .authenticationFailed(what: "sealed \(kind.noun) (its padding)")
            }
            output.append(contentsOf: chunk[..<plainBytes])
            start += sealedLength
            nextChunk += 1
        }
        buffer.removeFirst(start)
        return output
    }
}
