import HPSyncModel

extension InvitationSecret {
    /// What the store keeps, and looks the invitation up by.
    public var digest: SHA256Digest { SHA256.hash(bytes) }
}
