import HPSyncModel

extension NodeID {
    /// The node ID of a certificate, given its DER bytes.
    public init(certificateDER: some Sequence<UInt8>) {
        self.init(validatedBytes: SHA256.hash(certificateDER).bytes)
    }
}
