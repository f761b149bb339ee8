import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore

/// The one string `hp-sync invite` prints and `hp-sync peer join` redeems (Protocol.md §5.6):
/// `hpsync://HOST:PORT/NODE-ID#SECRET`, with the server's address, its node ID in the usual text
/// form (which carries check characters) and the 32-byte secret in unpadded base64url. The
/// secret sits in the fragment, the part of a URI that is never sent anywhere.
public struct InvitationToken: Equatable, Sendable, CustomStringConvertible {
    public static let scheme = "hpsync://"

    public var address: PeerAddress
    public var nodeID: NodeID
    public var secret: InvitationSecret

    public init(address: PeerAddress, nodeID: NodeID, secret: InvitationSecret) {
        self.address = address
        self.nodeID = nodeID
        self.secret = secret
    }

    /// Parses a token, strictly: surrounding white space is ignored, anything else out of
    /// place is an error that says which part is wrong.
    public init(parsing input: String) throws(InvitationTokenError) {
        let text = input.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.lowercased().hasPrefix(Self.scheme) else { throw .notAnInvitation }
        let rest = text.dropFirst(Self.scheme.count)
        guard let slash = rest.firstIndex(of: "/"), let hash = rest.firstIndex(of: "#"), slash < hash else {
            throw .malformed("expected hpsync://HOST:PORT/NODE-ID#SECRET")
        }
        address = try Self.address(String(rest[..<slash]))
        let node = rest[rest.index(after: slash)..<hash]
        guard !node.isEmpty, node.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw .badNodeID("'\(node)' is not a node ID")
        }
        do {
            nodeID = try NodeID(parsing: String(node))
        } catch {
            throw .badNodeID("\(error)")
        }
        guard let secret = Base64URL.decode(rest[rest.index(after: hash)...]).flatMap(InvitationSecret.init(bytes:))
        else {
            throw .badSecret
        }
        self.secret = secret
    }

    /// The token text; the port is always written.
    public var description: String {
        let host = address.host.contains(":") ? "[\(address.host)]" : address.host
        return "\(Self.scheme)\(host):\(address.port)/\(nodeID)#\(Base64URL.encode(secret.bytes))"
    }

    /// `HOST:PORT` with a DNS name or IPv4 address, or `[IPv6]:PORT`.
    private static func address(_ text: String) throws(InvitationTokenError) -> PeerAddress {
        let hostChars: (Character) -> Bool = { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
        let ipv6Chars: (Character) -> Bool = { $0.isHexDigit || $0 == ":" || $0 == "." }
        guard let colon = text.lastIndex(of: ":"), case let digits = text[text.index(after: colon)...],
            digits.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(digits), port > 0
        else {
            throw .badAddress("'\(text)' is not HOST:PORT with a port from 1 to 65535")
        }
        var host = text[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = host.dropFirst().dropLast()
            guard host.contains(":"), host.allSatisfy(ipv6Chars) else {
                throw .badAddress("'[\(host)]' is not an IPv6 address")
            }
        } else {
            guard !host.isEmpty, host.count <= 253, host.allSatisfy(hostChars) else {
                throw .badAddress("'\(host)' is not a host name or IPv4 address (IPv6 goes in brackets)")
            }
        }
        return PeerAddress(host: String(host), port: port)
    }
}

/// Why a string is not an invitation; each says which part to check.
public enum InvitationTokenError: Error, Equatable, CustomStringConvertible {
    case notAnInvitation
    case malformed(String)
    case badAddress(String)
    case badNodeID(String)
    case badSecret

    public var description: String {
        let lead = "invalid invitation: "
        switch self {
        case .notAnInvitation:
            return lead + "it must start with hpsync:// (copy the whole line `hp-sync invite` printed)"
        case .malformed(let detail): return lead + detail
        case .badAddress(let detail): return lead + "bad address: \(detail)"
        case .badNodeID(let detail): return lead + "bad node ID: \(detail); was the invitation copied completely?"
        case .badSecret:
            return lead + "the secret after # must be 43 base64url characters; was the invitation copied completely?"
        }
    }
}

/// RFC 4648 §5 base64url without padding, decoded strictly (only the canonical text of some bytes).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return nil
        }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        guard let data = Data(base64Encoded: standard), encode(Array(data)) == text else { return nil }
        return Array(data)
    }
}
