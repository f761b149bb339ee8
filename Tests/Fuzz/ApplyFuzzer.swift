// libFuzzer target: the record apply path (Scripts/fuzz apply SECONDS).
//
// Decodes the input as frames; every Records or ManifestPage message that passes validation is
// applied to a real store (records as received versions, tombstones from manifest entries),
// which must then still verify clean. The store lives for the whole run, so state accumulates.
import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import Logging

nonisolated(unsafe) let store: Store = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-fuzz-\(getpid())")
    var logger = Logger(label: "fuzz")
    logger.logLevel = .critical
    // A skew of a century: the fuzzer's stamps are anything.
    let configuration = StoreConfiguration(maxClockSkewMilliseconds: UInt64.max >> 17)
    return try! Store.create(
        at: directory, nodeID: NodeID(certificateDER: Array("fuzz".utf8)), configuration: configuration,
        clock: SystemClock(), logger: logger)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzApply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var decoder = FrameDecoder()
    decoder.append(UnsafeBufferPointer(start: data, count: size))
    while let frame = try? decoder.next() {
        guard case .message(let message) = frame else { continue }
        var incoming: [IncomingRecord] = []
        switch message {
        case .records(let items):
            incoming = items.filter { $0.image == nil || $0.deleted }.map { IncomingRecord(item: $0) }
        case .manifestPage(let page):
            incoming = page.entries.filter(\.deleted).map {
                IncomingRecord(item: .tombstone(key: $0.key, version: $0.version))
            }
        default: continue
        }
        do {
            _ = try store.applyRemote(incoming, checkpoint: nil)
        } catch {
            _ = "\(error)"
        }
        let report = try! store.verify(repair: false)
        if !report.isClean { fatalError("store not clean after applying \(incoming): \(report)") }
    }
    return 0
}
