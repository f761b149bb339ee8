import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

// A dry run reports what the real session would move: the manifest names no images, so it
// fetches the records it would take, and counts the images whose bytes it would fetch. It
// fetches no image bytes and commits nothing.
extension SinkStateMachine {
    /// Fetches the records of the entries the preview would take, if any. Only for a dry run:
    /// a guarded pull's own preview (`SyncRun.guardedPull`) counts deletions, and stays a
    /// listing of the manifest.
    mutating func previewRecords(_ fetch: [ItemKey], _ work: inout PageWork) -> Action {
        guard configuration.plan.dryRun, !fetch.isEmpty else { return endPreview(&work) }
        work.fetching = true
        work.recordRequests = fetch.chunked(ProtocolLimits.recordBatchSize)
        return requestRecords(&work)
    }

    /// Looks up the images of the winning records that the real session would not find under
    /// the same key, nor fetch for an earlier page (as `planImages` decides).
    mutating func previewImages(_ work: inout PageWork) -> Action {
        var lookUp: [SHA256Digest] = []
        for item in work.records
        where !item.deleted && MergePlanner.wins(item, over: work.local[item.key], mergesFields: mergesFields) {
            guard let image = item.image, !previewedDigests.contains(image.digest) else { continue }
            if let mine = work.local[item.key], !mine.deleted, mine.image == image { continue }
            work.lookingUp.append(item)
            lookUp.append(image.digest)
        }
        guard !lookUp.isEmpty else { return endPreview(&work) }
        return .locateImages(lookUp)
    }

    /// Counts the images no local file holds, once per digest, as the real session's fetches.
    mutating func previewImagesLocated(_ files: [SHA256Digest: URL], _ work: inout PageWork) -> Action {
        for item in work.lookingUp {
            guard let image = item.image, files[image.digest] == nil else { continue }
            guard previewedDigests.insert(image.digest).inserted else { continue }
            report.imagesTransferred += 1
            report.imageBytes += image.size
        }
        work.lookingUp = []
        return endPreview(&work)
    }

    private mutating func endPreview(_ work: inout PageWork) -> Action {
        if let step = work.step {
            return .previewReconciliation(step, horizon: step.isFinal ? reconciling : nil)
        }
        return finishPage(&work)
    }
}
