import ArgumentParser
import Dispatch
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `hp-sync serve`: serves this store to the peers it lists until SIGINT or SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve this store to listed peers over TLS until SIGINT/SIGTERM.",
        discussion: """
            Listens on 0.0.0.0:7717 and [::]:7717 unless --listen is given. Only peers added with \
            `hp-sync peer add` may connect; read-write peers may also push. On SIGINT or SIGTERM it \
            stops accepting, lets sessions in flight finish their current page (for at most --grace; \
            0 waits for none) and exits 0.
            """)

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("listen"), help: "ADDR[:PORT] to listen on; repeat for several (e.g. [::]:7717).")
    var listen: [String] = []

    @Option(help: "Most authorized sessions served at once; more get a 'busy' refusal.")
    var maxConnections = 64

    @Option(
        help: ArgumentHelp(
            "Most of those sessions one peer (node ID) may hold at once; its next one is told 'busy'.",
            discussion: """
                A peer syncs one session at a time; the headroom is for a client retrying after cut \
                connections the server has not timed out yet. So one peer that opens sessions and \
                stalls cannot take the slots of the others.
                """))
    var maxSessionsPerPeer = ConnectionLimits.defaultSessionsPerPeer

    @Option(
        help: ArgumentHelp(
            "Most connections still in the TLS handshake or before their Hello, from all addresses.",
            discussion: "Beyond it new connections are closed at once; clients retry them as busy."))
    var maxPending = 64

    @Option(help: "Most connections before their Hello from one source address (a flood from one host).")
    var maxPendingPerAddress = 8

    @Option(
        help: ArgumentHelp(
            "How long a client has to complete the TLS handshake and send its Hello (10s, 1m).",
            valueName: "duration"))
    var handshakeTimeout = Age(argument: "10s")!

    @Option(
        help: ArgumentHelp("How long a session may stay silent before it is dropped (60s, 5m).", valueName: "duration"))
    var idleTimeout = Age(argument: "60s")!

    @Option(
        help: ArgumentHelp(
            "How long to wait for sessions in flight at shutdown (30s, 2m; 0 waits for none).", valueName: "duration"))
    var grace = Age(argument: "30s")!

    @Option(
        help: ArgumentHelp(
            """
            Keep the versions a received push deletes or overwrites in the trash for this long (30d, \
            12h; 0 keeps none); see `hp-sync trash`. Older trash is purged after each push.
            """, valueName: "duration"))
    var keepDeleted = Age.OrZero(argument: "30d")!

    func validate() throws {
        for text in listen where PeerAddress(parsing: text, listening: true) == nil {
            throw ValidationError("--listen '\(text)' is not ADDR[:PORT]")
        }
        guard maxConnections > 0, maxSessionsPerPeer > 0, maxPending > 0, maxPendingPerAddress > 0 else {
            throw ValidationError("--max-connections, --max-sessions-per-peer and --max-pending* must be positive")
        }
        try handshakeTimeout.requirePositive("--handshake-timeout")
        try idleTimeout.requirePositive("--idle-timeout")
    }

    func run() throws {
        let logger = options.makeLogger(default: .info)
        let store = try options.openStore(logger: logger, blindAllowed: true)
        let identity = try options.loadIdentity()
        var configuration = SyncServer.Configuration()
        configuration.limits = ConnectionLimits(
            sessions: maxConnections, sessionsPerPeer: maxSessionsPerPeer, pending: maxPending,
            pendingPerAddress: maxPendingPerAddress)
        configuration.timeouts.handshake = handshakeTimeout.duration
        configuration.timeouts.idle = idleTimeout.duration
        configuration.shutdownGrace = grace.duration
        configuration.keepDeletedMilliseconds = keepDeleted.milliseconds
        let explicit = listen.compactMap { PeerAddress(parsing: $0, listening: true) }.map { ($0.host, $0.port) }
        let server: SyncServer
        if !explicit.isEmpty {
            configuration.addresses = explicit
            server = try SyncServer(store: store, identity: identity, configuration: configuration, logger: logger)
        } else {
            configuration.addresses = [("0.0.0.0", ProtocolLimits.defaultPort), ("::", ProtocolLimits.defaultPort)]
            do {
                server = try SyncServer(store: store, identity: identity, configuration: configuration, logger: logger)
            } catch TLSError.bindFailed(let address, let reason) where address.contains("::") {
                logger.notice("IPv6 unavailable, serving IPv4 only", metadata: ["reason": "\(reason)"])
                configuration.addresses = [("0.0.0.0", ProtocolLimits.defaultPort)]
                server = try SyncServer(store: store, identity: identity, configuration: configuration, logger: logger)
            }
        }
        let signals = Self.onTermination { signal in
            logger.notice("stopping", metadata: ["signal": "\(signal)"])
            SystemdNotify.send("STOPPING=1")
            server.stop()
        }
        defer { signals.forEach { $0.cancel() } }
        let addresses = server.boundAddresses.map { PeerAddress(host: $0.host, port: $0.port).description }
        logger.info(
            "serving", metadata: ["listen": "\(addresses.joined(separator: " "))", "node": "\(identity.nodeID)"])
        SystemdNotify.send("READY=1\nSTATUS=serving \(addresses.joined(separator: " "))")
        let clean = try server.run()
        logger.notice(clean ? "stopped" : "stopped; some sessions did not finish within the grace period")
    }

    /// Routes SIGINT and SIGTERM to `handler` instead of killing the process.
    static func onTermination(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few lines of sd_notify(3) that `Type=notify` needs: a datagram to `$NOTIFY_SOCKET`.
///
/// systemd starts units that wait for it (`After=hp-sync.service`) only once `serve` says
/// READY=1, which it does after binding its ports, so a dependent never finds the port closed.
/// Without `$NOTIFY_SOCKET` (not under systemd) every call does nothing.
enum SystemdNotify {
    /// Sends `state` (e.g. "READY=1") and returns whether it was sent.
    @discardableResult
    static func send(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty,
            path.hasPrefix("/") || path.hasPrefix("@")
        else { return false }
        #if os(Linux)
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // A leading '@' names Linux's abstract namespace: a NUL byte in the address.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, message, message.count, 0, $0, length)
            }
        }
        return sent == message.count
    }
}
