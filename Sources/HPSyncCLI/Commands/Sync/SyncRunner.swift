import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore
import Logging

/// Sets up the client sessions of one `pull`, `push` or `sync` from the command line: holds the
/// store's lock for the whole run, resolves the peer, and hands the rest to the engine's
/// `SyncRun` (retries, the mass-deletion guard, the trash, the outcome for `status`).
struct SyncRunner {
    let run: SyncRun
    let options: SyncCommandOptions
    let progress: ProgressLine?

    /// Opens the store, takes its lock (or fails at once with the holder's PID) and runs `body`.
    /// When `body` pulls, `pulls` starts the pull's image check as soon as the store is open
    /// (`EarlyImageScan`).
    static func run<T>(
        storeOptions: StoreOptions, syncOptions: SyncCommandOptions, pulls: Bool,
        _ body: (SyncRunner) throws -> T
    ) throws -> T {
        var logger = storeOptions.makeLogger(default: syncOptions.quiet ? .error : .warning)
        // The identity (two PEM files, and OpenSSL's first use: ~2 ms) is read and its TLS
        // context made while the store opens; a store that cannot open still says so first.
        let storeURL = storeOptions.storeURL
        let identityLoad = BackgroundResult {
            let identity = try StoreOptions.loadIdentity(at: storeURL)
            identity.prepareClientContext()
            return identity
        }
        let (lock, store) = try storeOptions.lockAndOpenStore(logger: logger)
        let imageScan = pulls && !syncOptions.dryRun ? EarlyImageScan(store: store) : nil
        return try withExtendedLifetime(lock) {
            logger[metadataKey: "session"] = "\(Self.sessionID())"
            let identity = try identityLoad.wait()
            var connector = Connector(store: store, identity: identity, timeouts: syncOptions.timeouts, logger: logger)
            let target = try connector.resolve(syncOptions.peer)
            logger[metadataKey: "peer"] = "\(target.name)"
            connector.logger = logger
            let progress = syncOptions.quiet ? nil : ProgressLine.onTerminal(peer: target.name)
            var update: SyncProgressHandler?
            if let progress { update = { progress.update($0) } }
            let plan = syncOptions.plan(progress: update, imageScan: imageScan)
            let run = SyncRun(
                store: store, peer: SyncRun.Peer(name: target.name, nodeID: target.nodeID),
                connect: { [connector] in try FramedChannel(stream: connector.connect(target)) }, plan: plan,
                logger: logger)
            return try body(SyncRunner(run: run, options: syncOptions, progress: progress))
        }
    }

    /// A short random ID that ties together the log lines of one run (and the server's, by time).
    static func sessionID() -> String {
        String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: false).leftPadded(to: 8)
    }

    func pull() throws -> SyncReport { try interrupting { try run.pull() } }

    func push() throws -> SyncReport { try interrupting { try run.push() } }

    /// Ends the progress line, and says of a failure that may pass that the store is consistent.
    private func interrupting(_ body: () throws -> SyncReport) throws -> SyncReport {
        defer { progress?.finish() }
        do {
            return try body()
        } catch  where RetryPolicy.isRetryable(error) {
            throw InterruptedRun(underlying: error, retries: options.retries)
        }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
