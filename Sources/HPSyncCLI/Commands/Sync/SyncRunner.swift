import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore
import Logging

/// Runs the client sessions of one `pull`, `push` or `sync`: holds the store's lock for the
/// whole run, resolves the peer, retries what may pass, and records each outcome for `status`.
struct SyncRunner {
    let store: Store
    let connector: Connector
    let client: SyncClient
    let target: Connector.Target
    let options: SyncCommandOptions
    let logger: Logger
    let progress: ProgressLine?

    /// Opens the store, takes its lock (or fails at once with the holder's PID) and runs `body`.
    static func run<T>(
        storeOptions: StoreOptions, syncOptions: SyncCommandOptions, _ body: (SyncRunner) throws -> T
    ) throws -> T {
        var logger = storeOptions.makeLogger(default: syncOptions.quiet ? .error : .warning)
        let (lock, store) = try storeOptions.lockAndOpenStore(logger: logger)
        return try withExtendedLifetime(lock) {
            logger[metadataKey: "session"] = "\(Self.sessionID())"
            let identity = try storeOptions.loadIdentity()
            var connector = Connector(store: store, identity: identity, timeouts: syncOptions.timeouts, logger: logger)
            let target = try connector.resolve(syncOptions.peer)
            logger[metadataKey: "peer"] = "\(target.name)"
            connector.logger = logger
            let runner = SyncRunner(
                store: store, connector: connector, client: SyncClient(store: store, logger: logger), target: target,
                options: syncOptions, logger: logger,
                progress: syncOptions.quiet ? nil : ProgressLine.onTerminal(peer: target.name))
            return try body(runner)
        }
    }

    /// A short random ID that ties together the log lines of one run (and the server's, by time).
    static func sessionID() -> String {
        String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: false).leftPadded(to: 8)
    }

    func pull() throws -> SyncReport {
        let retention = options.keepDeletedMilliseconds
        let report = try recorded(.pull) {
            try options.retryPolicy.run(logger: logger) { attempt in
                try client.pull(
                    connecting: { try FramedChannel(stream: connector.connect(target)) }, serverNodeID: target.nodeID,
                    peerName: target.name, options: clientOptions, guard: options.massDeleteGuard)
            }
        }
        if retention > 0 && !options.dryRun {
            do {
                try store.purgeTrash(olderThanMilliseconds: retention)
            } catch {
                logger.warning("could not purge the trash", metadata: ["error": "\(error)"])
            }
        }
        return report
    }

    func push() throws -> SyncReport {
        try recorded(.push) {
            try options.retryPolicy.run(logger: logger) { attempt in
                try client.push(
                    over: FramedChannel(stream: connector.connect(target)), serverNodeID: target.nodeID,
                    peerName: target.name, options: clientOptions)
            }
        }
    }

    private var clientOptions: SyncClient.Options {
        var client = options.clientOptions
        if let progress { client.progress = { progress.update($0) } }
        return client
    }

    /// Runs one direction and writes its outcome to the store (not for dry runs).
    private func recorded(_ direction: SyncDirection, _ body: () throws -> SyncReport) throws -> SyncReport {
        defer { progress?.finish() }
        do {
            let report = try body()
            if !options.dryRun {
                logger.info(
                    "\(direction.rawValue) done",
                    metadata: [
                        "inserted": "\(report.inserted.count)", "updated": "\(report.updated.count)",
                        "deleted": "\(report.deleted.count)", "refused": "\(report.refused.count)",
                    ])
                try? store.recordSyncSuccess(peer: target.name, direction: direction)
            }
            return report
        } catch {
            if !options.dryRun {
                try? store.recordSyncFailure(peer: target.name, direction: direction, message: "\(error)")
            }
            if RetryPolicy.isRetryable(error) { throw InterruptedRun(underlying: error, retries: options.retries) }
            throw error
        }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
