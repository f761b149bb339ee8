import Foundation

/// How the slowloris attacks run: CI's short round by default, against a deadline of a second
/// or two and dripping a byte every quarter second; the long round (`HP_SYNC_SLOWLORIS=long`,
/// which `Scripts/torture --slowloris` sets) against `serve`'s default 10 s deadline at the
/// real attack's byte a second.
public enum SlowlorisRound {
    public static let isLong = ProcessInfo.processInfo.environment["HP_SYNC_SLOWLORIS"] == "long"

    /// The server's handshake and Hello deadline in seconds: `short` in CI, 10 in the long round.
    public static func handshakeTimeout(short: Int) -> Int { isLong ? 10 : short }

    /// The pause between the attacker's bytes, well inside every idle timeout.
    public static var drip: TimeInterval { isLong ? 1 : 0.25 }
}
