/// What a sealed stream on a blind store holds: a photo (Protocol.md 5.8.3) or a pack of records
/// (version 6, `Docs/blind-packs-design.md`).
///
/// Both kinds share one construction (`StreamSealer` in HPSyncCrypto); each has its own subkey,
/// chunk-key info and associated-data label there, so a stream sealed as one kind never opens as
/// the other, even under the same 32-byte ID and size. A blind store keeps each kind in its own
/// folder. The raw value is the wire's `kind` (BlindGetPhoto, BlindPhotoHeader).
public enum SealedStreamKind: UInt32, Sendable, Equatable, CaseIterable {
    case photo = 0
    case pack = 1

    /// The word errors use.
    public var noun: String {
        switch self {
        case .photo: "photo"
        case .pack: "pack"
        }
    }

    /// The largest plaintext: for a photo far above any real one (it keeps sizes clear of
    /// overflow); for a pack 64 MiB, sixteen times what a trusted node puts in one.
    public var maximumPlainSize: Int64 {
        switch self {
        case .photo: 1 << 40
        case .pack: 1 << 26
        }
    }
}
