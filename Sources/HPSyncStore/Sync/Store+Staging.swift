import Foundation
import HPSyncModel

/// Receiving image bytes before the records that name them are applied.
extension Store {
    /// Starts receiving the bytes of `expected` into a temporary in `images/`.
    package func stageImage(expected: ImageRef) throws -> ImageStaging {
        guard expected.size >= 0, expected.size <= configuration.maxImageBytes else {
            throw StoreError.imageTooLarge(
                path: "incoming image \(expected.digest)", size: expected.size, limit: configuration.maxImageBytes)
        }
        return try ImageStaging(expected: expected, temporaries: temporaries)
    }

    /// Says that `count` more images are on their way (a sink that has just asked for them): a
    /// bulk apply makes their temporaries ahead, and none beyond.
    package func expectImages(_ count: Int) {
        temporaries.expect(count)
    }

    /// Copies a local file (typically `imageFile(withDigest:)`) into a temporary, verifying that
    /// its size and SHA-256 are `expected`.
    package func stageImage(copying file: URL, expected: ImageRef) throws -> StagedImage {
        let copy = try images.writeTemp(copying: file, maxBytes: configuration.maxImageBytes, validate: false)
        guard copy.ref == expected else {
            FileIO.unlinkIfPresent(images.tempPath(copy.name))
            // A local image that rotted: the next pull from a version-3 peer fetches it again.
            if file.deletingLastPathComponent().standardizedFileURL == images.url.standardizedFileURL,
                let key = try? ItemKey(file.lastPathComponent)
            {
                try? rememberImagesToHeal([key])
            }
            throw StoreError.digestMismatch(expected: expected, actual: copy.ref)
        }
        return StagedImage(
            ref: copy.ref, tempName: copy.name, directory: images,
            durability: .durable(path: images.tempPath(copy.name)))
    }
}
