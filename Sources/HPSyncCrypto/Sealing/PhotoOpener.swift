/// Verifies and opens one sealed photo as it streams (the format is `PhotoSealer`'s).
///
/// Made by `BlindKeys.photoOpener(photoID:plainSize:)` with the photo ID and size its record gives.
/// `update(_:)` returns photo bytes only from chunks whose tag verified, and never more than
/// `plainSize` in all; the padding is checked, not returned. `finish()` confirms the stream was
/// whole. A caller keeps what `update(_:)` returned aside (a temporary file) until `finish()`
/// succeeds: before that, chunks may be verified but the photo not yet proven complete.
///
/// Any damage throws and the opener stays failed: `authenticationFailed` for a changed byte,
/// chunks reordered, repeated or taken from another photo, another photo ID or size, or another
/// key; `malformed` for a stream longer or shorter than `sealedPhotoSize(plainSize:)`, or of an
/// unknown format version.
public struct PhotoOpener: Sendable {
    private let layout: PhotoLayout?
    private let photoKey: [UInt8]
    private let photoID: [UInt8]
    private let associatedData: [UInt8]
    private var chunkKey: [UInt8]?
    /// Sealed bytes received but not yet part of a whole chunk (or of the header).
    private var buffer: [UInt8] = []
    private var received: Int64 = 0
    private var nextChunk: Int64 = 0
    private var failure: SealingError?

    init(photoKey: [UInt8], photoID: [UInt8], plainSize: Int64) {
        self.photoKey = photoKey
        self.photoID = photoID
        layout = PhotoLayout(plainSize: plainSize)
        associatedData = layout?.associatedData(photoID: photoID) ?? []
        if layout == nil {
            failure = .malformed("a photo of \(plainSize) bytes is outside 0...\(PhotoLayout.maximumPlainSize)")
        }
    }

    /// Takes the next sealed bytes and returns the photo bytes of every chunk they completed.
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

    /// Takes the next sealed bytes and returns the photo bytes of every chunk they completed.
    public mutating func update(_ sealed: [UInt8]) throws(SealingError) -> [UInt8] {
        // Array's withUnsafeBytes rethrows untyped errors: the result carries the typed one out.
        let result = sealed.withUnsafeBytes { raw in
            Result { () throws(SealingError) -> [UInt8] in try update(raw) }
        }
        return try result.get()
    }

    /// Checks that the whole sealed photo came: every chunk, the last one flagged as last, and
    /// exactly `sealedPhotoSize(plainSize:)` bytes.
    public mutating func finish() throws(SealingError) {
        if let failure { throw failure }
        guard let layout, chunkKey != nil, nextChunk == layout.chunkCount else {
            let expected = layout?.sealedSize ?? 0
            let error = SealingError.malformed(
                "the sealed photo ended after \(received) of its \(expected) bytes (truncated)")
            failure = error
            throw error
        }
    }

    private mutating func open(_ sealed: UnsafeRawBufferPointer) throws(SealingError) -> [UInt8] {
        guard let layout else { return [] }
        guard Int64(sealed.count) <= layout.sealedSize - received else {
            throw .malformed("the sealed photo is longer than its \(layout.sealedSize) bytes")
        }
        received += Int64(sealed.count)
        buffer.append(contentsOf: sealed)
        var start = 0
        if chunkKey == nil {
            guard buffer.count >= PhotoLayout.headerByteCount else { return [] }
            guard buffer[0] == PhotoLayout.formatVersion else {
                let known = PhotoLayout.formatVersion
                throw .malformed("sealed photo format \(buffer[0]) is unknown (this hp-sync reads format \(known))")
            }
            let salt = Array(buffer[1..<PhotoLayout.headerByteCount])
            chunkKey = PhotoLayout.chunkKey(photoKey: photoKey, salt: salt, photoID: photoID)
            start = PhotoLayout.headerByteCount
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
                throw .authenticationFailed(what: "sealed photo (chunk \(nextChunk + 1) of \(layout.chunkCount))")
            }
            let chunkStart = layout.chunkStart(nextChunk)
            let photoBytes = Int(max(0, min(Int64(chunk.count), layout.plainSize - chunkStart)))
            // The padding was sealed with the photo, so only a holder of the key could have got it
            // wrong: not damage in transit, but data no hp-sync sealer made. Refused as unauthentic.
            for index in photoBytes..<chunk.count
            where chunk[index] != layout.paddingByte(at: chunkStart + Int64(index)) {
                throw .authenticationFailed(what: "sealed photo (its padding)")
            }
            output.append(contentsOf: chunk[..<photoBytes])
            start += sealedLength
            nextChunk += 1
        }
        buffer.removeFirst(start)
        return output
    }
}
