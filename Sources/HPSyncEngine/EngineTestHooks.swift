import HPSyncProtocol

/// How tests make a session behave as a faulty or older peer; production code never sets one.
/// Passed to a session's `init` and fixed for its life, as the store's test hooks are, so no
/// production type carries a settable test-only property.
struct EngineTestHooks: Sendable {
    /// Replaces the tombstone count a source's first page announces (a faulty source).
    var announcing: (@Sendable (Int64) -> Int64)?
    /// Entries per manifest page a source lists (small pages make many).
    var pageSize = ProtocolLimits.manifestPageSize
    /// The highest protocol version a client offers (an older client).
    var maxVersion = ProtocolLimits.maxVersion
    /// How long a blind store's second writer waits for the first before ERROR_BUSY.
    var blindWriterWait = BlindServerSession.writerWait
    /// How many packs a push to a blind store uploads between two heads.
    var blindPacksPerHead = BlindPackSink.packsPerHead
}
