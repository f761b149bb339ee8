/// The hard limits of protocol version 1; Protocol.md §Limits lists the same numbers.
///
/// A receiver checks every one of them and ends the session with `ERROR_LIMIT` when a peer
/// exceeds it, so no peer can make the other allocate without bound.
public enum ProtocolLimits {
    /// The protocol versions this build speaks.
    public static let minVersion: UInt32 = 1
    public static let maxVersion: UInt32 = 2

    /// Largest payload of a MESSAGE frame (one protobuf `Envelope`).
    public static let maxMessageBytes = 4 << 20
    /// Largest payload of the client's first frame (its Hello, at most ~330 bytes), checked
    /// before the peer is authorized.
    public static let maxHelloBytes = 4096
    /// Largest payload of an IMAGE_CHUNK frame.
    public static let maxChunkBytes = 1 << 20
    /// Most entries in one ManifestPage.
    public static let maxManifestEntries = 4096
    /// Most keys in one FetchRecords and records in one Records.
    public static let maxRecordsPerBatch = 1024
    /// Most images in one FetchImages.
    public static let maxImagesPerRequest = 256
    /// Longest `software` text in Hello and `message` text in Error, in UTF-8 bytes.
    public static let maxSoftwareBytes = 256
    public static let maxErrorMessageBytes = 1024

    /// What this implementation sends (below the hard limits above).
    public static let manifestPageSize = 1000
    public static let recordBatchSize = 1000
    public static let imagesPerRequest = 64
    public static let chunkSize = 1 << 20

    /// The default TCP port of `hp-sync serve`.
    public static let defaultPort: UInt16 = 7717
}
