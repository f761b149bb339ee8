import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import Logging
import Synchronization

/// `hp-sync serve`: accepts TLS connections and runs one `ServerSession` per connection on its
/// own thread, refuses authorized clients past the session limit (or past their node's share of
/// it) with ERROR_BUSY, and shuts
/// down gracefully. Connections that have not said an authorized Hello yet live in the
/// listener's separate pending budget (`ConnectionLimits`).
public final class SyncServer: Sendable {
    public struct Configuration: Sendable {
        public var addresses: [(host: String, port: UInt16)] = [("0.0.0.0", ProtocolLimits.defaultPort)]
        /// Sessions and, separately, connections that have not said an authorized Hello yet.
        public var limits = ConnectionLimits()
        public var timeouts = TLSTimeouts()
        /// How long a shutdown waits for sessions in flight to finish their page.
        public var shutdownGrace: Duration = .seconds(30)
        /// How long the versions a received push deletes or overwrites stay in the trash
        /// (milliseconds; 0 keeps none).
        public var keepDeletedMilliseconds: Int64 = 0
        public init() {}
    }

    private let store: Store
    private let listener: TLSListener
    private let logger: Logger
    private let configuration: Configuration
    private let stopping = Atomic<Bool>(false)

    /// Binds the listening sockets (so errors such as "address in use" surface here).
    public init(store: Store, identity: NodeIdentity, configuration: Configuration, logger: Logger) throws {
        self.store = store
        self.logger = logger
        self.configuration = configuration
        self.listener = try TLSListener(
            identity: identity, bind: configuration.addresses, limits: configuration.limits,
            timeouts: configuration.timeouts, logger: logger)
    }

    /// The addresses actually bound (with the kernel's port when 0 was asked for).
    public var boundAddresses: [(host: String, port: UInt16)] { listener.boundAddresses }

    /// Serves until `stop()`; then waits up to the grace period for sessions in flight.
    /// Returns true when every session finished in time.
    public func run() throws -> Bool {
        let store = self.store
        let logger = self.logger
        let handshakeTimeout = configuration.timeouts.handshake
        let keepDeleted = configuration.keepDeletedMilliseconds
        let isStopping: @Sendable () -> Bool = { [weak self] in self?.stopping.load(ordering: .relaxed) ?? true }
        try listener.run { connection, admission in
            var log = logger
            log[metadataKey: "remote"] = "\(connection.remoteAddress)"
            // What arrives before authorization gets the handshake's time limit: no slot is
            // held by a silent or trickling client.
            ServerSession(
                store: store, logger: log, preAuthorizationDeadline: .now + handshakeTimeout,
                admit: { node in
                    do throws(Admission.Refusal) {
                        try admission.authorize(peer: node.description)
                        return nil
                    } catch { return error }
                }, shouldStop: isStopping, keepDeletedMilliseconds: keepDeleted
            )
            .serve(FramedChannel(stream: connection), certificateNodeID: connection.peerNodeID)
        }
        return listener.waitForHandlers(timeout: configuration.shutdownGrace)
    }

    /// Stops accepting; sessions in flight stop after their current page. Safe from any thread.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        listener.stop()
    }
}
