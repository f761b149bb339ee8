extension BlindKeys {
    /// The largest photo that can be sealed: far above any real one, it keeps sizes clear of
    /// overflow.
    public static let maximumPhotoSize = PhotoLayout.maximumPlainSize

    /// The exact size of a sealed photo of `plainSize` bytes (see `PhotoSealer` for the format);
    /// `plainSize` must be in 0...maximumPhotoSize.
    ///
    /// A blind host can check a sealed photo's length against its announced size without any key.
    public static func sealedPhotoSize(plainSize: Int64) -> Int64 {
        guard let layout = PhotoLayout(plainSize: plainSize) else {
            preconditionFailure("photo size \(plainSize) outside 0...\(maximumPhotoSize)")
        }
        return layout.sealedSize
    }

    /// A sealer for the photo `photoID` (from `photoID(for:)`) of exactly `plainSize` bytes, in
    /// 0...maximumPhotoSize, with a fresh random salt.
    public func photoSealer(photoID: [UInt8], plainSize: Int64) -> PhotoSealer {
        photoSealer(photoID: photoID, plainSize: plainSize, salt: SecureRandom.bytesOrTrap(PhotoLayout.saltByteCount))
    }

    /// A sealer with the salt given (known-answer tests fix it).
    func photoSealer(photoID: [UInt8], plainSize: Int64, salt: [UInt8]) -> PhotoSealer {
        guard let layout = PhotoLayout(plainSize: plainSize) else {
            preconditionFailure("photo size \(plainSize) outside 0...\(Self.maximumPhotoSize)")
        }
        return PhotoSealer(photoKey: photoKey, photoID: photoID, layout: layout, salt: salt)
    }

    /// An opener for the photo `photoID` of `plainSize` bytes, both as its record says.
    ///
    /// A size outside 0...maximumPhotoSize does not stop the process: the opener throws
    /// `malformed` at its first use, since the size may come from another node.
    public func photoOpener(photoID: [UInt8], plainSize: Int64) -> PhotoOpener {
        PhotoOpener(photoKey: photoKey, photoID: photoID, plainSize: plainSize)
    }
}
