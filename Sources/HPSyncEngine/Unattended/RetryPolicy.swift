import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import Logging

/// Retries a session that failed for a reason that may pass (the peer is down, the connection
/// dropped, the server is busy or restarting), with exponential backoff.
///
/// A retry is a new session: it resumes from the checkpoint the last committed page left, so
/// nothing is transferred twice. Authentication, protocol, guard and local errors are never
/// retried: repeating them cannot help and could hide them.
public struct RetryPolicy: Sendable {
    /// Retries after the first attempt (0: try once).
    public var retries: Int
    /// The wait before the first retry; each later wait doubles, up to `maxDelay`.
    public var initialDelay: Duration
    public var maxDelay: Duration
    /// Each wait is spread at random over ±`jitter` of itself (0 ... 1), so that clients the
    /// same outage or busy server turned away do not all come back at the same instant.
    public var jitter = 0.0

    public init(retries: Int, initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(60)) {
        self.retries = retries
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
    }

    /// The wait before retry number `retry` (1-based): initial, 2x, 4x, ... capped.
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(retry, 1) {
            delay *= 2
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }

    /// True for failures a later attempt may not meet.
    public static func isRetryable(_ error: any Error) -> Bool {
        switch error {
        case let error as TLSError:
            switch error {
            case .resolveFailed, .connectFailed, .timedOut, .connectionReset, .unexpectedEOF, .io, .closed,
                .handshakeInterrupted:
                return true
            default:
                return false
            }
        case let error as ProtocolError:
            if case .prematureEOF = error { return true }
            return false
        case let error as SyncError:
            switch error {
            case .refusedByPeer(let peerError):
                return [.busy, .shuttingDown, .internalError].contains(peerError.code)
            case .protocolViolation(let inner):
                return isRetryable(inner)
            default:
                return false
            }
        case let error as StoreError:
            if case .busy = error { return true }
            return false
        default:
            return false
        }
    }

    /// Runs `body` (given the attempt number, from 1) until it succeeds, fails for good, or the
    /// retries are used up; rethrows the last error.
    public func run<T>(
        logger: Logger, sleep: (Duration) -> Void = { Thread.sleep(forTimeInterval: $0.seconds) },
        _ body: (Int) throws -> T
    ) throws -> T {
        var attempt = 1
        while true {
            do {
                return try body(attempt)
            } catch  where attempt <= retries && Self.isRetryable(error) {
                let delay = delay(beforeRetry: attempt) * (1 + jitter * Double.random(in: -1...1))
                logger.notice(
                    "attempt failed, retrying",
                    metadata: [
                        "attempt": "\(attempt)", "of": "\(retries + 1)", "wait": "\(delay.seconds) s",
                        "error": "\(error)",
                    ])
                sleep(delay)
                attempt += 1
            }
        }
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
