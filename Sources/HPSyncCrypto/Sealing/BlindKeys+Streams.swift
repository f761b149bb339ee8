import HPSyncModel

extension BlindKeys {
    /// The largest photo that can be sealed: far above any real one, it keeps sizes clear of
    /// overflow.
    public static let maximumPhotoSize = SealedStreamKind.photo.maximumPlainSize
    /// The largest pack plaintext an opener accepts: sixteen times what a trusted node puts in one.
    public static let maximumPackSize = SealedStreamKind.pack.maximumPlainSize

    /// The exact size of a sealed stream of `plainSize` bytes (see `StreamSealer` for the
    /// format); `plainSize` must be in 0...the kind's maximum.
    ///
    /// A blind host can check a sealed photo's or pack's length against its announced size
    /// without any key.
    public static func sealedSize(of kind: SealedStreamKind, plainSize: Int64) -> Int64 {
        layout(kind, plainSize: plainSize).sealedSize
    }

    /// Whether `size` is the sealed size of some stream of `kind`: what a blind host can check
    /// of a stored file without any key (a header, a padded plaintext of a Padmé length of at
    /// least 4 KiB and within the kind's bound, one tag per 64 KiB chunk).
    public static func isSealedSize(_ size: Int64, of kind: SealedStreamKind) -> Bool {
        let tag = Int64(ChaChaPoly.tagByteCount)
        let body = size - Int64(StreamLayout.headerByteCount)
        guard body > tag else { return false }
        let chunks = (body + Int64(StreamLayout.chunkByteCount) + tag - 1) / (Int64(StreamLayout.chunkByteCount) + tag)
        let padded = body - tag * chunks
        guard padded >= StreamLayout.minimumPaddedSize,
            padded <= layout(kind, plainSize: kind.maximumPlainSize).paddedSize
        else { return false }
        return chunks == (padded + Int64(StreamLayout.chunkByteCount) - 1) / Int64(StreamLayout.chunkByteCount)
            && (padded == StreamLayout.minimumPaddedSize || Padme.paddedLength(padded) == padded)
    }

    /// The exact size of a sealed photo of `plainSize` bytes, in 0...maximumPhotoSize.
    public static func sealedPhotoSize(plainSize: Int64) -> Int64 {
        sealedSize(of: .photo, plainSize: plainSize)
    }

    /// A fresh pack ID: 32 random bytes. A pack is named by chance, not by its contents, so two
    /// packs never share an ID and the ID says nothing about what the pack holds.
    public static func newPackID() -> [UInt8] {
        SecureRandom.bytesOrTrap(32)
    }

    /// A sealer for the stream `id` of `kind` (a photo ID from `photoID(for:)`, a pack ID from
    /// `newPackID()`) of exactly `plainSize` bytes, within the kind's maximum, with a fresh
    /// random salt.
    public func sealer(_ kind: SealedStreamKind, id: [UInt8], plainSize: Int64) -> StreamSealer {
        sealer(kind, id: id, plainSize: plainSize, salt: SecureRandom.bytesOrTrap(StreamLayout.saltByteCount))
    }

    /// A sealer with the salt given (known-answer tests fix it).
    func sealer(_ kind: SealedStreamKind, id: [UInt8], plainSize: Int64, salt: [UInt8]) -> StreamSealer {
        StreamSealer(subkey: subkey(kind), id: id, layout: Self.layout(kind, plainSize: plainSize), salt: salt)
    }

    /// An opener for the stream `id` of `kind` and `plainSize` bytes, as a record (a photo) or
    /// the head (a pack) names them.
    ///
    /// A size outside the kind's bounds does not stop the process: the opener throws
    /// `malformed` at its first use, since the size may come from another node.
    public func opener(_ kind: SealedStreamKind, id: [UInt8], plainSize: Int64) -> StreamOpener {
        StreamOpener(kind, subkey: subkey(kind), id: id, plainSize: plainSize)
    }

    /// A sealer for the photo `photoID` of exactly `plainSize` bytes, with a fresh random salt.
    public func photoSealer(photoID: [UInt8], plainSize: Int64) -> StreamSealer {
        sealer(.photo, id: photoID, plainSize: plainSize)
    }

    /// An opener for the photo `photoID` of `plainSize` bytes, both as its record says.
    public func photoOpener(photoID: [UInt8], plainSize: Int64) -> StreamOpener {
        opener(.photo, id: photoID, plainSize: plainSize)
    }

    private func subkey(_ kind: SealedStreamKind) -> [UInt8] {
        switch kind {
        case .photo: photoKey
        case .pack: packKey
        }
    }

    private static func layout(_ kind: SealedStreamKind, plainSize: Int64) -> StreamLayout {
        guard let layout = StreamLayout(kind, plainSize: plainSize) else {
            preconditionFailure("\(kind.noun) size \(plainSize) outside 0...\(kind.maximumPlainSize)")
        }
        return layout
    }
}
