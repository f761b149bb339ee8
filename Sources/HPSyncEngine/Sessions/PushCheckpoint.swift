import HPSyncProtocol

/// How far a pushing client may move its checkpoint of the server's progress: to what the
/// server made durable, but never past the first entry it did not apply, so the next push
/// offers that entry again (Protocol.md 4.8, 5.3).
struct PushCheckpoint {
    let version: UInt32
    /// Set once an older server (version 1 or 2, which cannot say which entries it did not
    /// apply) reports a refusal, or this node could not send an image: the checkpoint stays
    /// where it is for the rest of the session. Offering entries again is harmless: the server
    /// skips what it has.
    private(set) var frozen = false

    init(version: UInt32) {
        self.version = version
    }

    /// The checkpoint to record after this PageDone, or nil to leave it.
    mutating func advance(_ acknowledgement: SourceSession.Acknowledgement) -> Int64? {
        guard let durable = acknowledgement.durableSeq else { return nil }
        if version >= ProtocolLimits.heldEntriesVersion {
            guard let held = acknowledgement.firstHeldSeq else { return durable }
            return min(durable, held - 1)
        }
        if acknowledgement.counts.refused > 0 || acknowledgement.withheldHere { frozen = true }
        return frozen ? nil : durable
    }
}
