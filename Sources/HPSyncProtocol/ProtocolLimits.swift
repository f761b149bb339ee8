import HPSyncModel

/// The protocol versions and hard limits; Protocol.md §Limits lists the same numbers.
///
/// A receiver checks every one of them and ends the session with `ERROR_LIMIT` when a peer
/// exceeds it, so no peer can make the other allocate without bound.
public enum ProtocolLimits {
    /// The protocol versions this build speaks. Version 2 adds full reconciliation after
    /// tombstone garbage collection (`ManifestPage.reconcile_horizon`); version 3 makes a sink
    /// say what it did not apply (`PageDone.first_held_seq`, `refusals`)
    /// and lets a pulling client ask for images by digest (`FetchImagesByDigest`, `EndSession`);
    /// version 4 adds blind stores (INTENT_BLIND) and the inventory key in Hello; version 5
    /// merges fields on their own (`ManifestEntry.merge_digest`, `Record.fields`); version 6
    /// lets a blind store keep sealed packs (`BlindGetPhoto.kind`, `BlindPhotoHeader.kind`).
    public static let minVersion: UInt32 = 1
    public static let maxVersion: UInt32 = 6
    /// The first version whose blind stores keep packs of records (Protocol.md 5.8).
    public static let blindPacksVersion: UInt32 = 6
    /// The first version whose sinks join field by field (Protocol.md 5.9).
    public static let fieldMergeVersion: UInt32 = 5
    /// The first version that defines INTENT_BLIND and Hello's inventory_key and blind.
    public static let blindVersion: UInt32 = 4
    /// The first version whose PageDone says what the sink refused or withheld.
    public static let heldEntriesVersion: UInt32 = 3
    /// The first version whose sources may send `reconcile_horizon`.
    public static let reconciliationVersion: UInt32 = 2
    /// The first version in which a pulling client may ask for images by digest.
    public static let imagesByDigestVersion: UInt32 = 3

    /// Most IDs in one BlindGet, and entries in one BlindPut.
    public static let maxBlindObjects = 1024
    /// Largest sealed record a blind store keeps (a record of the largest name and serial
    /// seals to under 2 KiB; the rest is room for later fields).
    public static let maxSealedRecordBytes = 64 << 10
    /// Largest sealed head: 1 MiB, room for a head of packs (version 6) naming about 26,000; a
    /// head of entries (version 4) is 71 bytes.
    public static let maxSealedHeadBytes = 1 << 20
    /// Largest sealed photo a blind store accepts (1 TiB: the disk is the real limit).
    public static let maxSealedPhotoBytes: Int64 = 1 << 40
    /// Largest sealed pack a blind store accepts: the sealed size of a 64 MiB plaintext
    /// (`BlindKeys.sealedSize(of: .pack, plainSize: BlindKeys.maximumPackSize)`), sixteen times
    /// what a trusted node puts in one.
    public static let maxSealedPackBytes: Int64 = 69_222_929

    /// Largest sealed stream of `kind` a blind store accepts.
    public static func maxSealedBytes(_ kind: SealedStreamKind) -> Int64 {
        switch kind {
        case .photo: maxSealedPhotoBytes
        case .pack: maxSealedPackBytes
        }
    }

    /// Largest payload of a MESSAGE frame (one protobuf `Envelope`).
    public static let maxMessageBytes = 4 << 20
    /// Largest payload of each frame a client sends before it is authorized: its Hello (at most
    /// ~330 bytes) and, in a join, its JoinRequest (at most ~110 bytes).
    public static let maxHelloBytes = 4096
    /// Largest payload of an IMAGE_CHUNK frame.
    public static let maxChunkBytes = 1 << 20
    /// Most entries in one ManifestPage.
    public static let maxManifestEntries = 4096
    /// Most keys in one FetchRecords and records in one Records.
    public static let maxRecordsPerBatch = 1024
    /// Most open conflicts in one Record (version 5).
    public static let maxConflicts = 64
    /// Longest fields bytes of one Record (version 5): full tables, a tombstone's longest
    /// values and many agreeing candidates stay far below it.
    public static let maxFieldsBytes = 16_384
    /// Most images in one FetchImages.
    public static let maxImagesPerRequest = 256
    /// Longest `software` text in Hello and `message` text in Error, in UTF-8 bytes.
    public static let maxSoftwareBytes = 256
    public static let maxErrorMessageBytes = 1024
    /// Longest `name` in JoinRequest and JoinAccepted, in UTF-8 bytes (a peer name's limit).
    public static let maxJoinNameBytes = 64

    /// What this implementation sends (below the hard limits above).
    public static let manifestPageSize = 1000
    public static let recordBatchSize = 1000
    public static let imagesPerRequest = 64
    public static let chunkSize = 1 << 20

    /// The default TCP port of `hp-sync serve`.
    public static let defaultPort: UInt16 = 7717
}
