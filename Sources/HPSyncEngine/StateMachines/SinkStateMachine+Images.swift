import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

// Where each winning record's image comes from, and the images fetched from the source.
extension SinkStateMachine {
    mutating func imagesLocated(_ files: [SHA256Digest: URL]) -> Action {
        continuing { machine, work in
            machine.isPreview ? machine.previewImagesLocated(files, &work) : machine.imagesLocated(files, &work)
        }
    }

    /// An image requested arrived and was verified; nil when the source says it is missing.
    mutating func imageArrived(_ image: StagedImage?) -> Action {
        continuing { machine, work in
            if let image, let header = work.header {
                work.pending.staged.append(image)
                work.fetched[header.digest] = image
                work.pending.images[header.digest] = image
                machine.report.imagesTransferred += 1
                machine.report.imageBytes += header.size
            }
            work.header = nil
            guard machine.frames.isIdleWithPage else { return .receive }
            return machine.requestImages(&work)
        }
    }

    mutating func copiesStaged(_ copies: [ItemKey: StagedImage]) -> Action {
        continuing { $0.assemble(&$1, copies: copies) }
    }

    /// Records that FetchImages went out for these images, in this order.
    mutating func requestedImages(_ images: [ImageWanted]) { frames.requestedImages(images) }

    /// Decides where each winning record's image comes from: nothing when this key already has
    /// that image, bytes an earlier page of the batch fetched, a local copy when another item
    /// has the same bytes (no bytes move), else bytes fetched from the source once per digest.
    mutating func planImages(_ work: inout PageWork) -> Action {
        var lookUp: [SHA256Digest] = []
        for item in work.winners {
            guard let image = work.photo(of: item) else { continue }
            guard image.size <= configuration.maxImageBytes else {
                return .fail(
                    SyncError.imageTooLarge(
                        key: item.key.rawValue, size: image.size, limit: configuration.maxImageBytes))
            }
            if let mine = work.local[item.key], !mine.deleted, mine.image == image {
                work.images[item.key] = .alreadyHere
            } else if let held = work.pending.images[image.digest] {
                work.images[item.key] = .staged(held)
            } else {
                work.lookingUp.append(item)
                lookUp.append(image.digest)
            }
        }
        guard !lookUp.isEmpty else { return imagesLocated([:], &work) }
        return .locateImages(lookUp)
    }

    private mutating func imagesLocated(_ files: [SHA256Digest: URL], _ work: inout PageWork) -> Action {
        var wanted: [ImageWanted] = []
        var fetchedDigests = Set<SHA256Digest>()
        for item in work.lookingUp {
            guard let digest = work.photo(of: item)?.digest else { continue }
            if let file = files[digest] {
                work.images[item.key] = .localCopy(file)
            } else {
                work.images[item.key] = .fetched
                if fetchedDigests.insert(digest).inserted { wanted.append(ImageWanted(key: item.key, digest: digest)) }
            }
        }
        work.imageRequests = wanted.chunked(ProtocolLimits.imagesPerRequest)
        if let commit = commitAheadOfImages(&work) { return commit }
        return requestImages(&work)
    }

    /// Commits the page's records that need no image bytes while the images are fetched: the
    /// apply of an incremental page (most of its records name no new image) then overlaps the
    /// transfer and fsyncs of the few that do, instead of waiting for them. Only for a page
    /// that starts a batch, outside a bulk pull and a reconciliation, with at least
    /// `BatchPolicy.aheadOfImages` such records, and without local copies (which read files a commit
    /// may unlink). The batch carries no checkpoint: the page's own commit, with its images,
    /// saves it, so a crash between the two re-fetches the page and finds these versions applied.
    private mutating func commitAheadOfImages(_ work: inout PageWork) -> Action? {
        guard configuration.version >= 2, !batches.isBulk, work.step == nil, work.pending.lastPage == nil,
            !work.imageRequests.isEmpty
        else { return nil }
        var ahead = work.incoming
        var fetching: [Item] = []
        for item in work.winners {
            switch work.images[item.key] {
            case .fetched: fetching.append(item)
            case .localCopy, .staged: return nil
            case .alreadyHere, nil: ahead.append(incomingRecord(item, nil))
            }
        }
        guard ahead.count >= BatchPolicy.aheadOfImages else { return nil }
        var batch = PendingBatch()
        receivedItems += batch.add(ahead, local: work.local)
        // The durable point stays where it is until the page's own commit.
        guard let sealed = batch.sealed(throughSeq: durableSeq) else { return nil }
        work.incoming = []
        work.winners = fetching
        committing.append(InFlight(keys: sealed.keys, mayRemoveImages: sealed.mayRemoveImages))
        work.next = .requestImages
        return .commit(.submit(sealed, wait: false))
    }

    mutating func requestImages(_ work: inout PageWork) -> Action {
        guard work.imageRequests.isEmpty else {
            let group = Array(work.imageRequests.removeFirst())
            frames.requestedImages(group)
            return .fetchImages(group)
        }
        var copies: [LocalCopy] = []
        for item in work.winners {
            guard case .localCopy(let file) = work.images[item.key], let image = work.photo(of: item) else { continue }
            copies.append(LocalCopy(key: item.key, file: file, image: image))
        }
        guard !copies.isEmpty else { return assemble(&work, copies: [:]) }
        return .stageCopies(copies)
    }

    /// Gives each winning record the image it names.
    private mutating func assemble(_ work: inout PageWork, copies: [ItemKey: StagedImage]) -> Action {
        for item in work.winners {
            guard let image = work.photo(of: item), let source = work.images[item.key] else {
                work.incoming.append(incomingRecord(item, nil))
                continue
            }
            switch source {
            case .alreadyHere:
                work.incoming.append(incomingRecord(item, nil))
            case .staged(let held):
                work.incoming.append(incomingRecord(item, held))
            case .localCopy:
                guard let copy = copies[item.key] else { preconditionFailure("a local copy was not staged") }
                work.pending.staged.append(copy)
                work.incoming.append(incomingRecord(item, copy))
            case .fetched:
                if let staged = work.fetched[image.digest] {
                    work.incoming.append(incomingRecord(item, staged))
                } else if item.deleted {
                    // A tombstone's photo the source does not have: the join applies without it
                    // (a revival with the image missing, healed by digest; Protocol.md 5.9).
                    work.incoming.append(incomingRecord(item, nil))
                } else {
                    // The source no longer has these bytes (changed meanwhile, or lost). The
                    // record is not applied without its image, and the checkpoint stays before
                    // it so that a later pull tries again.
                    report.skipped += 1
                    work.withheld.append(item.key)
                    report.withheld.append(
                        SyncReport.Refusal(
                            key: item.key.rawValue,
                            reason: "its image (SHA-256 \(image.digest)) is missing on the source; it is applied "
                                + "once the source has the file again (`hp-sync verify --repair` there)"))
                }
            }
        }
        return holdPage(&work)
    }
}
