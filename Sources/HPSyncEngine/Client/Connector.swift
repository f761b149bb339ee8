import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Turns what a person typed (`pull nas`, `pull 192.0.2.7:7717`) into a pinned TLS connection.
///
/// A peer name is looked up first; otherwise the address is matched against the addresses of
/// known peers. An address no peer has is first contact: we connect only to learn the server's
/// node ID, hang up, and tell the person how to trust it. Nothing is trusted silently.
public struct Connector: Sendable {
    public struct Target: Sendable, Equatable {
        public var name: String
        public var address: PeerAddress
        public var nodeID: NodeID
    }

    private let store: Store
    private let identity: NodeIdentity
    private let timeouts: TLSTimeouts
    /// Settable, so that a caller can add the resolved peer's name to its metadata.
    public var logger: Logger

    public init(store: Store, identity: NodeIdentity, timeouts: TLSTimeouts = .init(), logger: Logger) {
        self.store = store
        self.identity = identity
        self.timeouts = timeouts
        self.logger = logger
    }

    /// Resolves `text` to a known peer and its address.
    public func resolve(_ text: String) throws -> Target {
        if let peer = try store.peer(named: text) {
            guard let addressText = peer.address else { throw ConnectError.peerWithoutAddress(peer.name) }
            guard let address = PeerAddress(parsing: addressText) else {
                throw ConnectError.badAddress(addressText)
            }
            return Target(name: peer.name, address: address, nodeID: peer.nodeID)
        }
        let peers = try store.peers()
        // A bare word ("primray") is far more often a mistyped peer name than a host on the
        // local network; dialing it would turn a typo into a network outage in cron mail.
        if !text.contains("."), !text.contains(":"), text != "localhost" {
            let names = peers.map(\.name)
            throw ConnectError.unknownPeerName(
                text, known: names, closest: NameSuggestion.closest(to: text, among: names))
        }
        guard let address = PeerAddress(parsing: text) else { throw ConnectError.badAddress(text) }
        for peer in peers {
            if let known = peer.address.flatMap({ PeerAddress(parsing: $0) }), known == address {
                return Target(name: peer.name, address: address, nodeID: peer.nodeID)
            }
        }
        let connection = try TLSConnection.connect(
            host: address.host, port: address.port, identity: identity, expected: .firstContact, timeouts: timeouts,
            logger: logger)
        let seen = connection.peerNodeID
        connection.close()
        if let peer = try store.peer(nodeID: seen) {
            throw ConnectError.knownNodeAtNewAddress(address: address, peer: peer.name, nodeID: seen)
        }
        throw ConnectError.unknownServer(address: address, nodeID: seen)
    }

    /// Dials the target and pins its node ID.
    public func connect(_ target: Target) throws -> TLSConnection {
        try TLSConnection.connect(
            host: target.address.host, port: target.address.port, identity: identity, expected: .node(target.nodeID),
            timeouts: timeouts, logger: logger)
    }
}

/// Why we did not connect; each says what to type next.
public enum ConnectError: Error, CustomStringConvertible, Equatable {
    case peerWithoutAddress(String)
    case badAddress(String)
    /// A bare word that names no peer (and is not HOST:PORT or a dotted host name).
    case unknownPeerName(String, known: [String], closest: String?)
    case unknownServer(address: PeerAddress, nodeID: NodeID)
    case knownNodeAtNewAddress(address: PeerAddress, peer: String, nodeID: NodeID)

    public var description: String {
        switch self {
        case .peerWithoutAddress(let name):
            return
                "peer '\(name)' has no address; give it one with: hp-sync peer set \(name) --address HOST[:PORT]"
        case .badAddress(let text):
            return "'\(text)' is neither a known peer name nor a HOST[:PORT] address; see `hp-sync peer list`"
        case .unknownPeerName(let name, let known, let closest):
            let suggestion = closest.map { " Did you mean '\($0)'?" } ?? ""
            let list =
                known.isEmpty
                ? "no peers are listed yet (`hp-sync peer add`)" : "peers: \(known.joined(separator: ", "))"
            return "'\(name)' is not a peer name (\(list)).\(suggestion) To reach a host that is not a peer, "
                + "give HOST:PORT or a dotted host name"
        case .unknownServer(let address, let nodeID):
            return """
                the server at \(address) is not a known peer; nothing was synced.
                Its node ID is \(nodeID)
                Compare it with `hp-sync id` on that machine; if they match, trust it with:
                  hp-sync peer add NAME \(nodeID) --address \(address)
                """
        case .knownNodeAtNewAddress(let address, let peer, let nodeID):
            return
                "the server at \(address) is peer '\(peer)' (\(nodeID)), which is listed with another address; use `hp-sync pull \(peer)` or update its address"
        }
    }
}

/// A `host[:port]` as people type it: `nas`, `nas:7717`, `192.0.2.1`, `[2001:db8::1]:7717`.
public struct PeerAddress: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16 = ProtocolLimits.defaultPort) {
        self.host = host
        self.port = port
    }

    /// Parses `host[:port]`; nil when it is not one (empty host, bad port, stray colons).
    /// Port 0 (the kernel picks one) is only accepted for listening.
    public init?(parsing text: String, defaultPort: UInt16 = ProtocolLimits.defaultPort, listening: Bool = false) {
        let lowestPort: UInt16 = listening ? 0 : 1
        guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0 == "/" }) else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty {
                port = defaultPort
            } else {
                guard rest.hasPrefix(":"), let parsed = UInt16(rest.dropFirst()), parsed >= lowestPort else {
                    return nil
                }
                port = parsed
            }
        } else if text.filter({ $0 == ":" }).count == 1 {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard let parsed = UInt16(parts[1]), parsed >= lowestPort else { return nil }
            host = String(parts[0])
            port = parsed
        } else if text.contains(":") {
            host = text  // a bare IPv6 literal
            port = defaultPort
        } else {
            host = text
            port = defaultPort
        }
        guard !host.isEmpty else { return nil }
    }

    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port == ProtocolLimits.defaultPort ? shownHost : "\(shownHost):\(port)"
    }
}
