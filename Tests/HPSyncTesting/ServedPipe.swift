import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore

/// The far end of an in-memory pipe served on its own thread: a `ServerSession` (one
/// connection to `hp-sync serve`, without TLS or sockets) or a scripted peer.
public final class ServedPipe: Sendable {
    /// The client's end of the pipe.
    public let clientEnd: PipeStream
    private let finished = Locked(false)

    /// Runs `serve` with the server's end of the pipe on a new thread.
    public init(_ serve: @escaping @Sendable (PipeStream) -> Void) {
        let (clientEnd, serverEnd) = PipeStream.pair()
        self.clientEnd = clientEnd
        let finished = finished
        Thread.detachNewThread {
            serve(serverEnd)
            finished.withLock { $0 = true }
        }
    }

    /// Serves `store` to the node `clientID` (as its certificate would name it). `session`
    /// makes the server's session (a stopping server, test hooks).
    public convenience init(
        _ store: Store, for clientID: NodeID,
        session: @escaping @Sendable (Store) -> ServerSession = { ServerSession(store: $0, logger: quietLogger) }
    ) {
        self.init { serverEnd in
            session(store).serve(FramedChannel(stream: serverEnd), certificateNodeID: clientID)
        }
    }

    /// The client's end of the pipe with the protocol's framing.
    public func channel() -> FramedChannel { FramedChannel(stream: clientEnd) }

    /// Waits for the server's side to end on its own.
    public func waitForServer() { finished.wait { $0 } }

    /// Closes the client's end and waits for the server's side to end.
    public func close() {
        clientEnd.close()
        waitForServer()
    }
}

/// Runs `body` with a session of `store` served to `clientID` over an in-memory pipe; closes
/// the pipe and waits for the server when `body` returns.
public func withServedPipe<Result>(
    _ store: Store, for clientID: NodeID,
    session: @escaping @Sendable (Store) -> ServerSession = { ServerSession(store: $0, logger: quietLogger) },
    _ body: (ServedPipe) throws -> Result
) rethrows -> Result {
    let served = ServedPipe(store, for: clientID, session: session)
    defer { served.close() }
    return try body(served)
}
