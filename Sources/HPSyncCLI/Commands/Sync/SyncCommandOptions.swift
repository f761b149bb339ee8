import ArgumentParser
import HPSyncCrypto
import HPSyncEngine
import HPSyncStore

/// Options shared by `pull`, `push` and `sync`.
struct SyncCommandOptions: ParsableArguments {
    @Argument(help: "A peer name (see `hp-sync peer list`) or HOST[:PORT] (default port 7717).")
    var peer: String

    @Flag(help: "Show what would change and write nothing.")
    var dryRun = false

    @Flag(help: "Print the change set as JSON (keys per category) instead of a summary line.")
    var json = false

    @Option(help: "Seconds to wait for the connection and TLS handshake.")
    var connectTimeout: Int = 10

    @Option(help: "Seconds to wait for the peer before giving up on a silent connection.")
    var idleTimeout: Int = 60

    func validate() throws {
        guard connectTimeout > 0, idleTimeout > 0 else {
            throw ValidationError("--connect-timeout and --idle-timeout must be positive seconds")
        }
    }

    var timeouts: TLSTimeouts {
        var timeouts = TLSTimeouts()
        timeouts.connect = .seconds(connectTimeout)
        timeouts.handshake = .seconds(connectTimeout)
        timeouts.idle = .seconds(idleTimeout)
        return timeouts
    }

    var clientOptions: SyncClient.Options {
        var options = SyncClient.Options()
        options.dryRun = dryRun
        return options
    }
}

/// Runs one client session: resolve the peer, connect with pinning, pull or push.
struct SyncRunner {
    let store: Store
    let connector: Connector
    let client: SyncClient
    let target: Connector.Target

    init(storeOptions: StoreOptions, syncOptions: SyncCommandOptions) throws {
        let logger = storeOptions.makeLogger()
        store = try storeOptions.openStore()
        let identity = try storeOptions.loadIdentity()
        connector = Connector(store: store, identity: identity, timeouts: syncOptions.timeouts, logger: logger)
        client = SyncClient(store: store, logger: logger)
        target = try connector.resolve(syncOptions.peer)
    }

    func pull(_ options: SyncCommandOptions) throws -> SyncReport {
        let connection = try connector.connect(target)
        return try client.pull(
            over: FramedChannel(stream: connection), serverNodeID: target.nodeID, peerName: target.name,
            options: options.clientOptions)
    }

    func push(_ options: SyncCommandOptions) throws -> SyncReport {
        let connection = try connector.connect(target)
        return try client.push(
            over: FramedChannel(stream: connection), serverNodeID: target.nodeID, peerName: target.name,
            options: options.clientOptions)
    }
}
