// libFuzzer target: the record and image apply path (Scripts/fuzz apply SECONDS).
//
// Decodes the input as frames and plays them against one long-lived store the way a sink does:
// Records are held until the page ends (PageDone, Done, the next Records or ManifestPage, or the
// end of the input) while ImageHeader and IMAGE_CHUNK frames stream into `Store.stageImage`;
// then each record is applied with its staged image (matched by digest and size), with a copy
// of an image the store already has, or, like the engine, not at all when its image never
// arrived. Manifest tombstones are applied too.
//
// Findings: a crash or sanitizer report; a store that does not verify clean; a staging that
// accepts bytes that are not the announced size and digest, or refuses ones that are; a
// temporary (`images/.tmp-*`) left behind once the input's staged images are discarded.
//
// A fuzzer cannot forge SHA-256, so an ImageHeader whose digest starts with a zero byte is
// rewritten to the digest of the chunk bytes that follow it (records naming the original digest
// follow the rewrite): mutated image bytes then still reach the successful apply path.
import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// In RAM where there is /dev/shm (fsync is free there); removed when libFuzzer exits normally.
let storeDirectory: URL = {
    let base =
        FileManager.default.fileExists(atPath: "/dev/shm")
        ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
    return base.appendingPathComponent("hp-sync-fuzz-\(getpid())")
}()

let store: Store = {
    atexit { try? FileManager.default.removeItem(at: storeDirectory) }
    var logger = Logger(label: "fuzz")
    logger.logLevel = .critical
    // A skew of a century: the fuzzer's stamps are anything. Images over 64 KiB are refused,
    // so that the too-large path is reachable from the seeds' small images.
    let configuration = StoreConfiguration(maxImageBytes: 1 << 16, maxClockSkewMilliseconds: UInt64.max >> 17)
    return try! Store.create(
        at: storeDirectory, nodeID: NodeID(certificateDER: Array("fuzz".utf8)), configuration: configuration,
        clock: SystemClock(), logger: logger)
}()

/// `HP_SYNC_FUZZ_TRACE=1 fuzz-apply INPUT` tells what an input did, to read a finding.
let tracing = ProcessInfo.processInfo.environment["HP_SYNC_FUZZ_TRACE"] == "1"

func trace(_ line: @autoclosure () -> String) {
    if tracing { print("apply: \(line())") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzApply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var decoder = FrameDecoder()
    decoder.append(UnsafeBufferPointer(start: data, count: size))
    var frames: [Frame] = []
    while let frame = try? decoder.next() { frames.append(frame) }
    var sink = FuzzSink()
    for (index, frame) in frames.enumerated() {
        sink.receive(frame, following: frames[(index + 1)...])
    }
    sink.endOfPage()
    sink.discardAll()
    let temporaries = (try? FileManager.default.contentsOfDirectory(atPath: store.directory.path + "/images")) ?? []
    if let stray = temporaries.first(where: { $0.hasPrefix(".tmp-") }) {
        fatalError("temporary \(stray) left behind after every staged image was discarded")
    }
    return 0
}

/// The sink side of one input: pending records, the image being received, staged images.
struct FuzzSink {
    var pending: [Item] = []
    var receiving: (staging: ImageStaging, received: Int64)?
    var staged: [ImageRef: StagedImage] = [:]
    /// Header digests rewritten to the digest of the bytes that followed.
    var rewritten: [SHA256Digest: SHA256Digest] = [:]

    mutating func receive(_ frame: Frame, following: ArraySlice<Frame>) {
        if case .imageChunk(let bytes) = frame {
            chunk(bytes)
            return
        }
        abandonImage()
        guard case .message(let message) = frame else { return }
        switch message {
        case .imageHeader(let header): start(header, following: following)
        case .records(let items):
            endOfPage()
            pending = items
        case .manifestPage(let page):
            endOfPage()
            apply(
                page.entries.filter(\.deleted).map {
                    Self.joining(IncomingRecord(item: .tombstone(key: $0.key, version: $0.version)))
                })
        case .pageDone, .done: endOfPage()
        default: break
        }
    }

    mutating func start(_ header: ImageHeaderMessage, following: ArraySlice<Frame>) {
        guard !header.missing, header.size > 0 else { return }
        var digest = header.digest
        if digest.bytes[0] == 0 {
            var bytes: [UInt8] = []
            for case .imageChunk(let chunk) in following.prefix(while: {
                if case .imageChunk = $0 { true } else { false }
            }) {
                bytes += chunk
            }
            digest = SHA256.hash(bytes.prefix(Int(clamping: header.size)))
            rewritten[header.digest] = digest
            trace("header digest \(header.digest) rewritten to \(digest)")
        }
        let expected = ImageRef(digest: digest, size: header.size)
        do {
            receiving = (try store.stageImage(expected: expected), 0)
            trace("staging \(expected)")
        } catch StoreError.imageTooLarge {
            guard header.size > store.maxImageBytes else { fatalError("\(expected) refused as too large") }
        } catch {
            _ = "\(error)"
        }
    }

    mutating func chunk(_ bytes: [UInt8]) {
        guard case let (staging, received)? = receiving else { return }
        let total = received + Int64(bytes.count)
        do {
            try bytes.withUnsafeBytes { try staging.write($0) }
        } catch StoreError.stagingOverflow {
            guard total > staging.expected.size else {
                fatalError("\(total) of \(staging.expected.size) bytes: overflow")
            }
            trace("overflow at \(total) bytes of \(staging.expected)")
            receiving = nil
            return
        } catch {
            fatalError("writing a staged image: \(error)")
        }
        guard total <= staging.expected.size else { fatalError("\(total) bytes accepted for \(staging.expected)") }
        receiving = (staging, total)
        if total == staging.expected.size { finish(staging, received: total) }
    }

    /// A header or message before the announced size arrived: finishing now must fail.
    mutating func abandonImage() {
        guard case let (staging, received)? = receiving else { return }
        finish(staging, received: received)
    }

    mutating func finish(_ staging: ImageStaging, received: Int64) {
        receiving = nil
        do {
            let image = try staging.finish()
            guard image.ref == staging.expected, received == staging.expected.size else {
                fatalError("staging of \(staging.expected) finished as \(image.ref) after \(received) bytes")
            }
            trace("staged \(image.ref)")
            staged[image.ref]?.discard()
            staged[image.ref] = image
        } catch StoreError.digestMismatch(let expected, let actual) {
            guard expected != actual else { fatalError("digest mismatch between equal \(expected)") }
            trace("mismatch: expected \(expected), received \(actual)")
        } catch {
            fatalError("finishing a staged image: \(error)")
        }
    }

    /// Applies the pending records, each with its image when it can have one, like the engine.
    mutating func endOfPage() {
        abandonImage()
        guard !pending.isEmpty else { return }
        var incoming: [IncomingRecord] = []
        var used = Set<ImageRef>()
        for var item in pending {
            guard !item.deleted, var ref = item.image else {
                incoming.append(Self.joining(IncomingRecord(item: item)))
                continue
            }
            if let digest = rewritten[ref.digest] {
                ref.digest = digest
                item.image = ref
            }
            if let local = store.item(orNil: item.key), !local.deleted, local.image == ref {
                incoming.append(Self.joining(IncomingRecord(item: item)))
            } else if let image = staged[ref] {
                incoming.append(Self.joining(IncomingRecord(item: item, image: image)))
                // applyRemote consumes the staged temporaries it is given, applied or not.
                used.insert(ref)
            } else if let file = try? store.imageFile(withDigest: ref.digest),
                let copy = try? store.stageImage(copying: file, expected: ref)
            {
                incoming.append(Self.joining(IncomingRecord(item: item, image: copy)))
            }
        }
        pending = []
        apply(incoming)
        for ref in used { staged[ref] = nil }
    }

    /// A record as a version-5 session applies it (Protocol.md 5.9): field by field, with the
    /// merge state its fields bytes carry (none for a whole record).
    static func joining(_ record: IncomingRecord) -> IncomingRecord {
        var record = record
        record.joinsFields = true
        record.mergeState = record.item.mergeState
        return record
    }

    func apply(_ incoming: [IncomingRecord]) {
        guard !incoming.isEmpty else { return }
        do {
            let outcome = try store.applyRemote(incoming, checkpoint: nil)
            trace(
                "applied \(incoming.count) records, \(incoming.filter { $0.image != nil }.count) with images: \(outcome)"
            )
        } catch {
            trace("apply refused: \(error)")
        }
        let report = try! store.verify(repair: false)
        if !report.isClean { fatalError("store not clean after applying \(incoming.map(\.item)): \(report)") }
    }

    mutating func discardAll() {
        receiving?.staging.abort()
        receiving = nil
        for image in staged.values { image.discard() }
        staged = [:]
    }
}

extension Store {
    /// The store's row for `key`, nil when absent or unreadable.
    func item(orNil key: ItemKey) -> Item? { (try? item(key)) ?? nil }
}
