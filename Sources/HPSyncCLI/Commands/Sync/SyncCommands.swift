import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore
import Logging

/// `hp-sync pull PEER`: receive the peer's changes.
struct PullCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull", abstract: "Receive a peer's changes (items, images, deletions) into this store.",
        discussion: """
            Only one pull, push or sync runs per store at a time; another exits at once with code 79. \
            A pull that would delete most of this store is refused with code 80 before anything is \
            applied. See `hp-sync exit-codes`.
            """)

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        try SyncRunner.run(storeOptions: options, syncOptions: sync, pulls: true) { runner in
            try runner.print([try runner.pull()])
        }
    }
}

/// `hp-sync push PEER`: send local changes to a peer that allows this node to write.
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Send this store's changes to a peer (needs read-write permission there).")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        try SyncRunner.run(storeOptions: options, syncOptions: sync, pulls: false) { runner in
            try runner.print([try runner.push()])
        }
    }
}

/// `hp-sync sync PEER`: pull, then push, so both stores end up with the same inventory.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Pull from a peer, then push to it: both stores converge.")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        try SyncRunner.run(storeOptions: options, syncOptions: sync, pulls: true) { runner in
            let pulled = try runner.pull()
            let pushed = try runner.push()
            try runner.print([pulled, pushed])
        }
    }
}

/// Sets up the client sessions of one `pull`, `push` or `sync` from the command line: holds the
/// store's lock for the whole run, resolves the peer, and hands the rest to the engine's
/// `SyncRun` (retries, the mass-deletion guard, the trash, the outcome for `status`).
struct SyncRunner {
    let run: SyncRun
    let options: SyncCommandOptions
    let progress: ProgressLine?
    /// The sessions with a blind peer this run opened (each attempt is one).
    let blindSessions: BlindSessions

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
            let sessions = BlindSessions()
            var connect: () throws -> any MessageChannel = { [connector] in
                try FramedChannel(stream: connector.connect(target))
            }
            if let peer = try store.peer(named: target.name), peer.blind {
                // A blind peer is reached through this inventory's key (Protocol.md 5.8).
                guard let key = try InventoryKeyFile.load(store) else { throw BlindError.noInventoryKey }
                connect = { [connector, logger] in
                    let channel = BlindPeerChannel(
                        remote: try FramedChannel(stream: connector.connect(target)), store: store, key: key,
                        peer: peer, logger: logger)
                    sessions.opened.append(channel)
                    return channel
                }
            }
            let run = SyncRun(
                store: store, peer: SyncRun.Peer(name: target.name, nodeID: target.nodeID), connect: connect,
                plan: plan, logger: logger)
            return try body(SyncRunner(run: run, options: syncOptions, progress: progress, blindSessions: sessions))
        }
    }

    /// A short random ID that ties together the log lines of one run (and the server's, by time).
    static func sessionID() -> String {
        String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: false).leftPadded(to: 8)
    }

    func pull() throws -> SyncReport { try interrupting { try run.pull() } }

    func push() throws -> SyncReport { try interrupting { try run.push() } }

    /// Prints the reports, then fails with exit 81 if a blind peer served anything whose seal
    /// was broken (the rest was applied and is in the reports).
    func print(_ reports: [SyncReport]) throws {
        do {
            try SyncReportPrinter.print(reports, options: options)
        } catch let warnings as CompletedWithWarnings {
            try blindSessions.check()
            throw warnings
        }
        try blindSessions.check()
    }

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

/// The blind sessions of one run, for what they found once the reports are printed.
final class BlindSessions {
    var opened: [BlindPeerChannel] = []

    func check() throws {
        var seen = Set<String>()
        let findings = opened.flatMap(\.findings).filter { seen.insert($0).inserted }
        if let peer = opened.first?.peerName, !findings.isEmpty {
            throw BlindError.tampered(peer: peer, details: findings)
        }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
