import HPSyncCrypto

/// The production transport: sessions run over a pinned, mutually authenticated TLS 1.3 connection.
extension TLSConnection: ByteStream {}
