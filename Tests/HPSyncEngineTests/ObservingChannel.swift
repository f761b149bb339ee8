import Foundation
import HPSyncProtocol

@testable import HPSyncEngine

/// Forwards everything to `base` and shows each received frame to `observe` first, which may
/// act on it (change the other store mid-session) or throw to end the session there.
final class ObservingChannel: MessageChannel {
    private let base: any MessageChannel
    private let observe: (IncomingFrame) throws -> Void

    init(_ base: any MessageChannel, observe: @escaping (IncomingFrame) throws -> Void) {
        self.base = base
        self.observe = observe
    }

    /// Lets `count` frames that `matches` through, then hangs up as a cut connection would.
    static func cut(
        _ base: any MessageChannel, after count: Int, of matches: @escaping (IncomingFrame) -> Bool
    ) -> ObservingChannel {
        var left = count
        return ObservingChannel(base) { frame in
            guard matches(frame) else { return }
            if left == 0 {
                base.close()
                throw ProtocolError.prematureEOF(expected: "more")
            }
            left -= 1
        }
    }

    func send(_ message: Message) throws { try base.send(message) }
    func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws { try base.sendImageChunk(bytes) }
    func receive(expecting: String) throws -> IncomingFrame {
        let frame = try base.receive(expecting: expecting)
        try observe(frame)
        return frame
    }
    var bytesSent: Int64 { base.bytesSent }
    var bytesReceived: Int64 { base.bytesReceived }
    func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {
        base.limitNextFrame(maxBytes: maxBytes, deadline: deadline)
    }
    func close() { base.close() }
}
