import HPSyncProtocol

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
