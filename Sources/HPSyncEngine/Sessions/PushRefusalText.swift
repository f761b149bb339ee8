import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// A push's refusals in the pusher's words. A server words each reason from its own point of
/// view ("the server's clock … is behind the client's: if the server's clock is wrong…", "that
/// node's clock is or was ahead: fix it there"), which blames the wrong node when read on the
/// pushing side. The pusher knows who stamped each record and which clock the Hellos showed
/// ahead, so it says which node should do what.
struct PushRefusalText {
    /// How the pusher names the server ("primary").
    var peer: String
    var localNode: NodeID
    /// The clocks as the Hellos told them, when they differ by more than the skew.
    var clockSkew: ClockSkew?
    /// The server's clock as its Hello told it, else this machine's.
    var serverMilliseconds: UInt64
    var maxSkewMilliseconds: UInt64

    /// The reasons of `refusals`, reworded for the records this store holds (the first
    /// `limit`, those a report keeps); others keep the server's words.
    func reword(_ refusals: [PageRefusal], store: Store, limit: Int = CappedList<PageRefusal>.defaultLimit) throws
        -> [PageRefusal]
    {
        let named = Array(refusals.prefix(limit))
        let versions = try store.currentVersions(named.map(\.key))
        return refusals.enumerated().map { index, refusal in
            guard index < limit, let version = versions[refusal.key]?.version,
                let reason = reason(for: version)
            else { return refusal }
            return PageRefusal(key: refusal.key, reason: reason)
        }
    }

    /// The reason for a record stamped `version`, or nil when its stamp does not explain the
    /// refusal (the server's words then stand).
    func reason(for version: Version) -> String? {
        let stamped = version.stamp.milliseconds
        guard stamped > serverMilliseconds &+ maxSkewMilliseconds else { return nil }
        let ahead = "stamped in the future, \(ClockSkew.duration(stamped - serverMilliseconds)) after \(peer)'s clock,"
        let again = "this node offers it again on the next push"
        if let clockSkew, !clockSkew.localIsBehind {
            return "\(ahead) and \(clockSkew.comparison()): if this node's clock is wrong, set it right (NTP), then "
                + "run `hp-sync clock reset --yes` here; if \(peer)'s is, fix it there. Nothing is lost: \(again)"
        }
        if version.origin == localNode {
            return "\(ahead) by this node, whose clock high-water mark is ahead (this clock is or was ahead): if "
                + "this machine's clock is right now, run `hp-sync clock reset --yes` here (see `hp-sync clock`). "
                + "Nothing is lost: \(again)"
        }
        return "\(ahead) by node \(version.origin.short), whose clock is or was ahead: fix it there; once it is "
            + "right, `hp-sync clock reset --yes` there restamps its future edits. Nothing is lost: \(again)"
    }
}
