import Foundation
import HPSyncCrypto
import HPSyncTesting

/// A TLS server with a real identity that answers any session with bytes that are not the
/// hp-sync protocol: a peer that passes authentication and then breaks the protocol.
final class RogueServer {
    let listener: TLSListener
    let identity: NodeIdentity
    let directory: URL

    init(reply: [UInt8]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-rogue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        identity = try NodeIdentity.create(in: directory)
        let listener = try TLSListener(
            identity: identity, bind: [(host: "127.0.0.1", port: 0)], logger: quietLogger)
        self.listener = listener
        Thread.detachNewThread {
            try? listener.run(
                handler: { connection in
                    var buffer = [UInt8](repeating: 0, count: 512)
                    _ = try? buffer.withUnsafeMutableBytes { try connection.read(into: $0) }
                    try? connection.write(reply)
                })
        }
    }

    var address: String { "127.0.0.1:\(listener.boundAddresses[0].port)" }

    func stop() {
        listener.stop()
        _ = listener.waitForHandlers(timeout: .seconds(5))
        try? FileManager.default.removeItem(at: directory)
    }
}
