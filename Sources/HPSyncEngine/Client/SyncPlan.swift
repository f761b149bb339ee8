import HPSyncStore

/// What one pull, push or sync is: made once by the caller (the CLI from its flags, a server from
/// a pushing client's Hello, a library user by hand) and read, never rewritten, by every layer
/// below it: `SyncRun`, `SyncClient`, `SinkSession` and `SinkStateMachine`.
///
/// What a session learns as it goes (the peer's version, whether the store began empty, whether
/// a guarded pull's first session only previews) is the session's state, not part of the plan.
public struct SyncPlan: Sendable {
    /// Show what would change and write nothing: no record, image, checkpoint or outcome.
    public var dryRun = false
    /// For a pull: the mass-deletion guard it applies under; nil lets it delete anything. The
    /// sink counts the deletions it really receives and stops before the page that would trip
    /// it; `SyncRun` also previews first when the source announces too many.
    public var massDeleteGuard: MassDeleteGuard?
    /// How `SyncRun` retries a refused or dropped connection.
    public var retryPolicy = RetryPolicy(retries: 0)
    /// For a pull: how long the live versions it deletes or overwrites stay in the trash; 0
    /// keeps none. `SyncRun` purges older trash after each pull.
    public var keepDeletedMilliseconds: Int64 = 0
    /// Whether `SyncRun` records the outcome for `status` (a dry run never does).
    public var recordsOutcome = true
    /// For a pull with a version-2 server: commit once the pages held list this many entries
    /// (and at the final page). An interrupted pull loses at most this much work.
    public var commitEvery = BatchPolicy.entries
    /// What the Hello says this client runs.
    public var software = "hp-sync \(HPSyncVersion.current)"
    /// Called after each page and image; nil for none.
    public var progress: SyncProgressHandler?
    /// For a pull: its image check, already started (the first pull takes it); nil starts one
    /// at the connect.
    public var imageScan: EarlyImageScan?

    public init() {}

    /// Whether the live versions a pull deletes or overwrites go to the trash.
    var keepsReplaced: Bool { keepDeletedMilliseconds > 0 && !dryRun }

    /// Whether the outcome is written for `status`.
    var recordsOutcomeInStore: Bool { recordsOutcome && !dryRun }
}
