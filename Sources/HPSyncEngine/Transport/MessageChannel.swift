import HPSyncProtocol

/// One frame as received: a validated message, or the payload of an image chunk.
public enum IncomingFrame: Sendable {
    case message(Message)
    case imageChunk([UInt8])
}

/// Frames in, frames out: the only thing a sync session talks to.
public protocol MessageChannel: AnyObject {
    func send(_ message: Message) throws
    /// Sends one IMAGE_CHUNK frame holding `bytes` (1 ... 1 MiB).
    func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws
    /// Receives the next frame; throws `ProtocolError.prematureEOF` if the peer hung up.
    func receive(expecting: String) throws -> IncomingFrame
    /// Bytes sent and received so far, for the session's report.
    var bytesSent: Int64 { get }
    var bytesReceived: Int64 { get }
    /// Bounds the next frame only: at most `maxBytes` of payload, complete by `deadline` (nil: no
    /// deadline) however steadily its bytes trickle in. For frames read before authorization.
    func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?)
    func close()
    /// Reads and drops what the peer still sends until it closes or `duration` has passed, then
    /// closes ("lingering close"): after an Error, so that unread bytes do not make the kernel
    /// reset the connection before the peer has read it.
    func closeAfterDraining(for duration: Duration)
}

extension MessageChannel {
    public func closeAfterDraining(for duration: Duration) {
        close()
    }

    /// Receives a frame that must be a message.
    public func receiveMessage(expecting: String) throws -> Message {
        switch try receive(expecting: expecting) {
        case .message(let message): return message
        case .imageChunk: throw ProtocolError.unexpectedMessage(got: "IMAGE_CHUNK", expected: expecting)
        }
    }
}
