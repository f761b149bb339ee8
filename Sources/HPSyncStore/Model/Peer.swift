import HPSyncCrypto

/// What a peer may do with this store.
public enum PeerPermission: String, Sendable, Hashable, Codable, CaseIterable {
    case read
    case readWrite = "read-write"
}

/// Another node this store trusts: its name here, its pinned node ID and where to reach it.
public struct Peer: Sendable, Hashable, Codable {
    public var name: String
    public var nodeID: NodeID
    public var address: String?
    public var permission: PeerPermission

    public init(name: String, nodeID: NodeID, address: String? = nil, permission: PeerPermission = .read) {
        self.name = name
        self.nodeID = nodeID
        self.address = address
        self.permission = permission
    }

    /// Whether `name` is acceptable: `[A-Za-z0-9._-]{1,64}`, starting with a letter or digit.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        for (index, c) in bytes.enumerated() {
            let alphanumeric =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)
            if alphanumeric { continue }
            if index > 0 && (c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")) { continue }
            return false
        }
        return true
    }
}
