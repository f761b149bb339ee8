import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

/// Which TLS 1.3 cipher suite a connection uses: AES-128-GCM between hp-sync nodes (the least
/// CPU per byte on AES-NI), and whatever a stock client prefers when that is ChaCha20 or
/// AES-256-GCM only, so other implementations still connect.
extension TransportTests {
    @Test func hpSyncNodesAgreeOnAES128GCM() throws {
        let seen = Locked<String?>(nil)
        let server = try TestServer { connection in
            seen.withLock { $0 = connection.cipherSuite }
            try? connection.write([1])
        }
        defer { server.stop() }
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: try makeIdentity(), expected: .firstContact,
            logger: quietLogger)
        defer { connection.close() }
        #expect(try connection.readExactly(1) == [1])
        #expect(connection.cipherSuite == "TLS_AES_128_GCM_SHA256")
        #expect(seen.current == "TLS_AES_128_GCM_SHA256")
    }

    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func aStockClientGetsTheSuiteItPrefersWhenItLeadsWithChaCha20OrOffersOnlyAES256() throws {
        for (offered, expected) in [
            ("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"),
            ("TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"),
            ("TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"),
        ] {
            let client = try makeIdentity()
            let seen = Locked<String?>(nil)
            let server = try TestServer { connection in
                seen.withLock { $0 = connection.cipherSuite }
                try? connection.write(Array("ok\n".utf8))
            }
            defer { server.stop() }
            let output = try runTool(
                [
                    opensslPath, "s_client", "-tls1_3", "-quiet", "-ciphersuites", offered, "-cert",
                    client.certificateURL.path, "-key", client.keyURL.path, "-connect", "127.0.0.1:\(server.port)",
                ], input: "")
            #expect(output.stdout.contains("ok"), "offered \(offered); stderr: \(output.stderr)")
            #expect(seen.current == expected, "offered \(offered)")
        }
    }
}
