/// A 32-byte identifier a blind store keeps and cannot invert: a record ID (a keyed hash of an
/// item key) or a photo ID (a keyed hash of a photo's SHA-256), made by trusted nodes.
public struct BlindID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    /// Nil unless `bytes` holds exactly 32 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    /// Lower-case hex, the name of a sealed photo's file (spelled as a SHA-256 digest is: both
    /// are 32 bytes).
    public var hex: String { SHA256Digest(bytes: bytes)!.hex }

    public var description: String { String(hex.prefix(16)) }

    public static func < (lhs: BlindID, rhs: BlindID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// The sealed photo a version of a blind record names.
public struct BlindPhotoRef: Hashable, Sendable {
    public var id: BlindID
    /// Bytes of the sealed photo (> 0).
    public var size: Int64

    public init(id: BlindID, size: Int64) {
        self.id = id
        self.size = size
    }
}

/// One entry of a blind store: the current version of one record ID.
public struct BlindEntry: Equatable, Sendable {
    public var id: BlindID
    /// The stamp and origin of the sealed version; the greater (stamp, origin) wins, as for items.
    public var version: Version
    /// The blind store's change sequence of this entry (0 in a BlindPut, where it is ignored).
    public var seq: Int64
    public var photo: BlindPhotoRef?

    public init(id: BlindID, version: Version, seq: Int64 = 0, photo: BlindPhotoRef? = nil) {
        self.id = id
        self.version = version
        self.seq = seq
        self.photo = photo
    }
}

/// An entry with its sealed record, as BlindGet answers and BlindPut sends.
public struct BlindObject: Equatable, Sendable {
    public var entry: BlindEntry
    public var sealed: [UInt8]

    public init(entry: BlindEntry, sealed: [UInt8]) {
        self.entry = entry
        self.sealed = sealed
    }
}

/// A page of a blind store's entries in ascending seq.
public struct BlindListPage: Equatable, Sendable {
    public var entries: [BlindEntry]
    public var throughSeq: Int64
    public var isFinal: Bool

    public init(entries: [BlindEntry], throughSeq: Int64, isFinal: Bool) {
        self.entries = entries
        self.throughSeq = throughSeq
        self.isFinal = isFinal
    }
}

/// The head a blind store keeps for trusted nodes: an epoch in the clear (for the store's
/// compare-and-set) and the sealed head only trusted nodes can open.
public struct BlindHeadMessage: Equatable, Sendable {
    /// 0 with nothing sealed: no head written yet.
    public var epoch: Int64
    public var sealed: [UInt8]

    public init(epoch: Int64, sealed: [UInt8]) {
        self.epoch = epoch
        self.sealed = sealed
    }
}

/// What precedes the IMAGE_CHUNK frames of a sealed photo, either way.
public struct BlindPhotoHeader: Equatable, Sendable {
    public var id: BlindID
    public var size: Int64
    /// Server only: the store has no such photo; no chunks follow.
    public var missing: Bool
    /// A photo, or (version 6) a pack of records.
    public var kind: SealedStreamKind

    public init(id: BlindID, size: Int64, missing: Bool = false, kind: SealedStreamKind = .photo) {
        self.id = id
        self.size = size
        self.missing = missing
        self.kind = kind
    }
}
