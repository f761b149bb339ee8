import HPSyncModel
import HPSyncStore

/// Two nodes' wall clocks, as one told the other in its Hello, when they differ by more than
/// the allowed skew: the session says which is ahead of which before any record is judged, so a
/// node whose own clock is wrong does not blame a healthy peer for its refusals.
public struct ClockSkew: Sendable, Equatable {
    /// How this side names the other ("primary", "peer backup").
    public var peer: String
    public var localMilliseconds: UInt64
    public var peerMilliseconds: UInt64
    public var skewMilliseconds: UInt64

    /// nil when the peer did not tell its clock (an older version) or the clocks agree.
    public init?(peer: String, localMilliseconds: UInt64, peerMilliseconds: UInt64?, skewMilliseconds: UInt64) {
        guard let peerMilliseconds else { return nil }
        let gap = max(localMilliseconds, peerMilliseconds) - min(localMilliseconds, peerMilliseconds)
        guard gap > skewMilliseconds else { return nil }
        self.peer = peer
        self.localMilliseconds = localMilliseconds
        self.peerMilliseconds = peerMilliseconds
        self.skewMilliseconds = skewMilliseconds
    }

    public var localIsBehind: Bool { peerMilliseconds > localMilliseconds }

    /// "this node's clock (T1) is 365 days behind primary's (T2)".
    public func comparison(me: String = "this node") -> String {
        let gap = max(localMilliseconds, peerMilliseconds) - min(localMilliseconds, peerMilliseconds)
        return "\(me)'s clock (\(Self.date(localMilliseconds))) is \(Self.duration(gap)) "
            + "\(localIsBehind ? "behind" : "ahead of") \(peer)'s (\(Self.date(peerMilliseconds)))"
    }

    /// The whole warning, with what to do, from the point of view of `me`.
    public func warning(me: String = "this node") -> String {
        let limit = "beyond the allowed skew of \(Self.duration(skewMilliseconds))"
        if localIsBehind {
            return "\(comparison(me: me)), \(limit): what \(peer) stamped by its clock is refused here until the "
                + "clocks agree. If \(me)'s clock is wrong, set it right (NTP); if \(peer)'s is, fix it there and run "
                + "`hp-sync clock reset --yes` there. Nothing is lost meanwhile: refused records are retried"
        }
        return "\(comparison(me: me)), \(limit): \(peer) refuses what \(me) stamps now until the clocks agree. "
            + "If \(me)'s clock is wrong, set it right (NTP), then run `hp-sync clock reset --yes` on \(me); if "
            + "\(peer)'s is, fix it there. Nothing is lost meanwhile: refused records are offered again"
    }

    static func date(_ milliseconds: UInt64) -> String {
        DateText.iso8601(milliseconds: Int64(clamping: milliseconds))
    }

    /// "365 days", "3 h 20 min", "12 min", "40 s", each rounded to the nearest unit shown (two
    /// clocks read a few milliseconds apart are still "365 days" apart).
    public static func duration(_ milliseconds: UInt64) -> String {
        let seconds = (milliseconds + 500) / 1000
        if seconds >= 2 * 86_400 { return "\((seconds + 43_200) / 86_400) days" }
        let minutes = (seconds + 30) / 60
        if seconds >= 3600 { return "\(minutes / 60) h \(minutes % 60) min" }
        if seconds >= 120 { return "\(minutes) min" }
        return "\(seconds) s"
    }
}
