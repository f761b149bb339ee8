import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncStore

/// Options shared by `pull`, `push` and `sync`.
struct SyncCommandOptions: ParsableArguments {
    @Argument(
        help: "A peer name (see `hp-sync peer list`) or HOST[:PORT] (default port 7717).",
        completion: PeerCompletion.kind)
    var peer: String

    @Flag(name: [.customShort("n"), .long], help: "Show what would change and write nothing.")
    var dryRun = false

    @Flag(help: "Print the change set as JSON (counts, and up to 1,000 keys per category) instead of a summary.")
    var json = false

    @Flag(
        name: [.customShort("q"), .long],
        help: "Print only errors and warnings (for cron): no summary line, no progress. --json still prints.")
    var quiet = false

    @Option(
        help: ArgumentHelp("How long to wait for the connection and TLS handshake (10s, 1m).", valueName: "duration"))
    var connectTimeout = Age(argument: "10s")!

    @Option(
        help: ArgumentHelp(
            "How long the peer may stay silent before the connection is given up (60s, 5m).", valueName: "duration"))
    var idleTimeout = Age(argument: "60s")!

    @Option(
        help: """
            Retry a refused or dropped connection (peer down, cut, busy or restarting) up to N times, \
            waiting 1 s, 2 s, 4 s ... (at most 60 s) between tries; each retry resumes from the last \
            committed page. Authentication, protocol and guard errors are never retried.
            """)
    var retries: Int = 0

    @Option(
        help: ArgumentHelp(
            "The wait before the first retry (doubles each time; 1s, 500ms).", valueName: "duration",
            visibility: .hidden))
    var retryDelay = Age(argument: "1s")!

    @Flag(help: "Let a pull delete more than the mass-deletion guard allows (see --max-delete).")
    var allowMassDelete = false

    @Option(
        help: """
            Refuse a pull that would delete more than N items here. Without it, a pull is refused \
            when it would delete more than 10 items and more than half of the live items.
            """)
    var maxDelete: Int?

    @Option(
        help: ArgumentHelp(
            """
            Keep the versions a pull deletes or overwrites in the trash for this long (30d, 12h; 0 \
            keeps none); see `hp-sync trash`. Older trash is purged after each pull.
            """, valueName: "duration"))
    var keepDeleted = Age.OrZero(argument: "30d")!

    /// The trash retention in milliseconds; 0 keeps nothing.
    var keepDeletedMilliseconds: Int64 { keepDeleted.milliseconds }

    func validate() throws {
        try connectTimeout.requirePositive("--connect-timeout")
        try idleTimeout.requirePositive("--idle-timeout")
        guard retries >= 0, retries <= 100 else { throw ValidationError("--retries must be 0 to 100") }
        if let maxDelete, maxDelete < 0 { throw ValidationError("--max-delete must not be negative") }
        if allowMassDelete, maxDelete != nil {
            throw ValidationError("--allow-mass-delete turns the guard off; do not combine it with --max-delete")
        }
    }

    var timeouts: TLSTimeouts {
        var timeouts = TLSTimeouts()
        timeouts.connect = connectTimeout.duration
        timeouts.handshake = connectTimeout.duration
        timeouts.idle = idleTimeout.duration
        return timeouts
    }

    /// What this pull, push or sync is, for the engine: made here, once, and read below.
    func plan(progress: SyncProgressHandler?, imageScan: EarlyImageScan?) -> SyncPlan {
        var plan = SyncPlan()
        plan.dryRun = dryRun
        plan.massDeleteGuard = allowMassDelete ? nil : MassDeleteGuard(maxDelete: maxDelete)
        plan.retryPolicy = retryPolicy
        plan.keepDeletedMilliseconds = keepDeletedMilliseconds
        plan.progress = progress
        plan.imageScan = imageScan
        return plan
    }

    var retryPolicy: RetryPolicy {
        var policy = RetryPolicy(retries: retries, initialDelay: retryDelay.duration)
        // A server that sheds load turns many clients away at once; spread their returns.
        policy.jitter = 0.25
        return policy
    }
}
