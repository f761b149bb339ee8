import Foundation

/// An in-memory `ByteStream` pair for tests and in-process sync: what one end writes, the
/// other reads. Reads block until data arrives or the writer closes.
public final class PipeStream: ByteStream, @unchecked Sendable {
    private final class Shared: @unchecked Sendable {
        let condition = NSCondition()
        var data: [UInt8] = []
        var closed = false
    }

    private let inbound: Shared
    private let outbound: Shared

    private init(inbound: Shared, outbound: Shared) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Two connected ends.
    public static func pair() -> (PipeStream, PipeStream) {
        let a = Shared()
        let b = Shared()
        return (PipeStream(inbound: a, outbound: b), PipeStream(inbound: b, outbound: a))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        inbound.condition.lock()
        defer { inbound.condition.unlock() }
        while inbound.data.isEmpty && !inbound.closed { inbound.condition.wait() }
        let n = min(buffer.count, inbound.data.count)
        if n == 0 { return 0 }
        inbound.data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        inbound.data.removeFirst(n)
        return n
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        outbound.condition.lock()
        defer { outbound.condition.unlock() }
        guard !outbound.closed else { throw PipeStreamError.closed }
        outbound.data.append(contentsOf: bytes)
        outbound.condition.broadcast()
    }

    public func close() {
        for side in [inbound, outbound] {
            side.condition.lock()
            side.closed = true
            side.condition.broadcast()
            side.condition.unlock()
        }
    }
}

/// The other end of a pipe is gone.
public enum PipeStreamError: Error, CustomStringConvertible {
    case closed
    public var description: String { "the in-memory pipe was closed" }
}
