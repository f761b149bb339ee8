/// What the sync engine needs to see of a store's configuration and clock.
extension Store {
    /// The clock guard: how far ahead of this store's clock a received stamp may be.
    public var maxClockSkewMilliseconds: UInt64 { configuration.maxClockSkewMilliseconds }

    /// The largest image this store accepts.
    public var maxImageBytes: Int64 { configuration.maxImageBytes }

    /// This store's wall clock (injected in tests), in milliseconds since 1970.
    public func nowMilliseconds() -> UInt64 { clock.nowMilliseconds() }

    /// Records how far a peer store has been synced, in one transaction of its own.
    public func setCheckpoint(_ update: CheckpointUpdate) throws {
        _ = try applyRemote([], checkpoint: update)
    }
}
