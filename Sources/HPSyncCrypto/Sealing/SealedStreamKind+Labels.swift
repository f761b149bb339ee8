import HPSyncModel

extension SealedStreamKind {
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
}
