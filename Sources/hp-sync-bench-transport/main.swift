// Moves N bytes (default 1 GiB) over loopback through TLSListener/TLSConnection with 1 MiB
// buffers and prints the throughput. Used by Scripts/bench-transport.
import Foundation
import HPSyncCrypto
import Logging

let arguments = CommandLine.arguments.dropFirst()
let totalBytes = arguments.first.flatMap(Int.init) ?? 1 << 30
let bufferSize = 1 << 20
let logger = Logger(label: "hp-sync.bench") { _ in SwiftLogNoOpLogHandler() }

let root = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: root) }
let serverIdentity = try NodeIdentity.create(in: root.appendingPathComponent("server"))
let clientIdentity = try NodeIdentity.create(in: root.appendingPathComponent("client"))

let listener = try TLSListener(identity: serverIdentity, bind: [(host: "127.0.0.1", port: 0)], logger: logger)
let received = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64)
nonisolated(unsafe) let receiveBuffer = received
let serverThread = Thread {
    try? listener.run(
        handler: { connection in
            var remaining = totalBytes
            do {
                while remaining > 0 {
                    let count = try connection.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: receiveBuffer[..<min(bufferSize, remaining)]))
                    if count == 0 { break }
                    remaining -= count
                }
                try connection.write([remaining == 0 ? 1 : 0])
            } catch {
                FileHandle.standardError.write(Data("server: \(error)\n".utf8))
            }
        })
}
serverThread.start()

let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64)
for index in 0..<bufferSize { payload[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }

let connection = try TLSConnection.connect(
    host: "127.0.0.1", port: listener.boundAddresses[0].port, identity: clientIdentity,
    expected: .node(serverIdentity.nodeID), logger: logger)
let clock = ContinuousClock()
let start = clock.now
var sent = 0
while sent < totalBytes {
    let count = min(bufferSize, totalBytes - sent)
    try connection.write(UnsafeRawBufferPointer(rebasing: payload[..<count]))
    sent += count
}
let ack = try connection.readExactly(1)
let elapsed = clock.now - start
connection.close()
listener.stop()
_ = listener.waitForHandlers(timeout: .seconds(5))

guard ack == [1] else {
    FileHandle.standardError.write(Data("receiver did not get every byte\n".utf8))
    exit(1)
}
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print(
    String(
        format: "hp-sync TLS: %d bytes in %.3f s = %.3f GB/s", totalBytes, seconds, Double(totalBytes) / seconds / 1e9))
