/// What a sealed stream holds: a photo (Protocol.md 5.8.3) or a pack of records (5.10).
///
/// Both kinds share one construction (`StreamSealer`); each has its own subkey, its own chunk-key
/// info and its own associated-data label, so a stream sealed as one kind never opens as the
/// other, even under the same 32-byte ID and size.
public enum SealedStreamKind: Sendable, Equatable {
    case photo
    case pack

    /// The word errors use.
    var noun: String {
        switch self {
        case .photo: "photo"
        case .pack: "pack"
        }
    }

    /// Bound to every chunk, before the ID and the plaintext size.
    var associatedDataLabel: [UInt8] {
        switch self {
        case .photo: Array("hp-sync photo v1".utf8)
        case .pack: Array("hp-sync pack v1".utf8)
        }
    }

    /// The HKDF info of the stream's own key, before the ID.
    var chunkKeyInfo: [UInt8] {
        switch self {
        case .photo: Array("hp-sync v4 photo chunk".utf8)
        case .pack: Array("hp-sync v6 pack chunk".utf8)
        }
    }

    /// The largest plaintext: for a photo far above any real one (it keeps sizes clear of
    /// overflow); for a pack 64 MiB, sixteen times what a trusted node puts in one.
    var maximumPlainSize: Int64 {
        switch self {
        case .photo: 1 << 40
        case .pack: 1 << 26
        }
    }
}
