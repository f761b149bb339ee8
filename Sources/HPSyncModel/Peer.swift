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
    /// A blind peer holds this inventory only sealed (Protocol.md 5.8): this node seals what it
    /// sends there and never tells it the inventory key.
    public var blind: Bool

    public init(
        name: String, nodeID: NodeID, address: String? = nil, permission: PeerPermission = .read, blind: Bool = false
    ) {
        self.name = name
        self.nodeID = nodeID
        self.address = address
        self.permission = permission
        self.blind = blind
    }

    /// Whether `name` is acceptable: `[A-Za-z0-9._-]{1,64}`, starting with a letter or digit.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), isAlphanumeric(bytes[0]) else { return false }
        return bytes.allSatisfy(isNameByte)
    }

    /// `text` made into a valid name: characters outside `[A-Za-z0-9._-]` become `-`, leading
    /// punctuation is dropped, the rest is cut to 64 bytes; "peer" when nothing is left. For
    /// names a remote node suggests (a joiner's host name) and the default names of `peer join`.
    public static func sanitizedName(_ text: String) -> String {
        let bytes = text.unicodeScalars.map { scalar in
            scalar.isASCII && isNameByte(UInt8(scalar.value)) ? UInt8(scalar.value) : UInt8(ascii: "-")
        }
        let name = String(decoding: bytes.drop { !isAlphanumeric($0) }.prefix(64), as: UTF8.self)
        return name.isEmpty ? "peer" : name
    }

    /// `base`, or `base-2`, `base-3`... (cut to stay within 64 bytes): the first that `isTaken`
    /// says is free. `base` must be a valid name.
    public static func uniqueName(_ base: String, isTaken: (String) throws -> Bool) rethrows -> String {
        if try !isTaken(base) { return base }
        var suffix = 2
        while true {
            let tail = "-\(suffix)"
            let candidate = String(decoding: base.utf8.prefix(64 - tail.utf8.count), as: UTF8.self) + tail
            if try !isTaken(candidate) { return candidate }
            suffix += 1
        }
    }

    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)
    }

    private static func isNameByte(_ c: UInt8) -> Bool {
        isAlphanumeric(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }
}
