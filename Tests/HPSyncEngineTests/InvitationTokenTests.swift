import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import Testing

@testable import HPSyncEngine

@Suite struct InvitationTokenTests {
    let node = NodeID(bytes: Array(0..<32))!
    let secret = InvitationSecret(bytes: Array(repeating: 0xFB, count: 32))!

    @Test func theTextFormIsSpecifiedAndRoundTrips() throws {
        let token = InvitationToken(address: PeerAddress(host: "nas.local", port: 7717), nodeID: node, secret: secret)
        // Protocol.md §5.6 shows this exact string.
        #expect(
            token.description
                == "hpsync://nas.local:7717/AAAQEAY-EAUDAOB-CAJBIFQ-YDIOB4B-IBCEQTC-QKRMFYX-YDENBWH-A5DYPQG"
                + "#-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_s")
        #expect(try InvitationToken(parsing: "  \(token)\n") == token)
        let v6 = InvitationToken(address: PeerAddress(host: "2001:db8::1", port: 9000), nodeID: node, secret: .random())
        #expect(v6.description.hasPrefix("hpsync://[2001:db8::1]:9000/"))
        #expect(try InvitationToken(parsing: v6.description) == v6)
        let v4 = InvitationToken(address: PeerAddress(host: "192.0.2.7", port: 1), nodeID: node, secret: .random())
        #expect(try InvitationToken(parsing: v4.description) == v4)
    }

    @Test(arguments: [
        ("nas:7717/X#Y", InvitationTokenError.notAnInvitation),
        ("https://nas:7717/ID#S", .notAnInvitation),
        ("hpsync://nas:7717#S", .malformed("expected hpsync://HOST:PORT/NODE-ID#SECRET")),
        ("hpsync://nas/ID#S", .badAddress("'nas' is not HOST:PORT with a port from 1 to 65535")),
        ("hpsync://nas:0/ID#S", .badAddress("'nas:0' is not HOST:PORT with a port from 1 to 65535")),
        ("hpsync://nas:+80/ID#S", .badAddress("'nas:+80' is not HOST:PORT with a port from 1 to 65535")),
        (
            "hpsync://2001:db8::1:7717/ID#S",
            .badAddress("'2001:db8::1' is not a host name or IPv4 address (IPv6 goes in brackets)")
        ),
        (
            "hpsync://us er@nas:7717/ID#S",
            .badAddress("'us er@nas' is not a host name or IPv4 address (IPv6 goes in brackets)")
        ),
        ("hpsync://[nas]:7717/ID#S", .badAddress("'[nas]' is not an IPv6 address")),
    ])
    func malformedTokensSayWhatIsWrong(_ text: String, _ expected: InvitationTokenError) {
        #expect(throws: expected) { try InvitationToken(parsing: text) }
    }

    @Test func nodeIDAndSecretAreCheckedInFull() {
        let good = InvitationToken(address: PeerAddress(host: "nas"), nodeID: node, secret: secret).description
        let (front, fragment) = (good.prefix { $0 != "#" }, good.drop { $0 != "#" })
        // A typo in the node ID fails its check character.
        let typo = front.replacingOccurrences(of: "AAAQEAY", with: "AAAQEAZ") + fragment
        #expect(throws: InvitationTokenError.self) { try InvitationToken(parsing: typo) }
        for secretText in [
            "", "short", String(fragment.dropFirst().dropLast()), fragment.dropFirst() + "A",
            fragment.dropFirst().dropLast() + "t",  // non-canonical: the last character's spare bits are set
            fragment.dropFirst().replacingOccurrences(of: "-", with: "+"),
        ] {
            #expect(throws: InvitationTokenError.badSecret, "\(secretText)") {
                try InvitationToken(parsing: front + "#" + secretText)
            }
        }
    }
}
