/// Where `hp-sync web` listens: a loopback host and a port.
///
/// Only loopback is served. The web app has no TLS of its own (Hummingbird's TLS would bring a
/// second TLS stack, BoringSSL through swift-nio-ssl, into the binary), and the access token
/// must never cross a network in clear text. From another machine, tunnel:
/// `ssh -L 8080:127.0.0.1:8080 HOST`.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public static let `default` = ListenAddress(host: "127.0.0.1", port: 8080)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[V6]:PORT` or `:PORT`, and refuses a host that is not loopback.
    public init(parsing text: String) throws(WebError) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else {
                throw .invalidListen("--listen '\(text)' is not HOST:PORT; write an IPv6 host as [::1]:8080")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw .invalidListen("--listen '\(text)' is not HOST:PORT, e.g. 127.0.0.1:8080")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty { host = "127.0.0.1" }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw .invalidListen("--listen '\(text)': the port must be a number from 0 to 65535")
        }
        guard Self.isLoopback(String(host)) else {
            throw .invalidListen(
                "--listen '\(text)': hp-sync web serves loopback only (127.0.0.1, ::1, localhost); it has no "
                    + "TLS, and the access token must not cross a network in clear text. From another machine, "
                    + "tunnel: ssh -L 8080:127.0.0.1:8080 THIS-HOST")
        }
        self.host = String(host)
        self.port = port
    }

    /// 127.0.0.0/8, ::1 and localhost.
    public static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        if lower == "localhost" || lower == "::1" || lower == "0:0:0:0:0:0:0:1" { return true }
        let octets = lower.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { UInt8($0) != nil }
    }

    /// The host as it goes in a URL.
    var urlHost: String { host.contains(":") ? "[\(host)]" : host }

    public var description: String { "\(urlHost):\(port)" }
}
