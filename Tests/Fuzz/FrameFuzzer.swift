// libFuzzer target: the frame decoder and message validation (Scripts/fuzz frame SECONDS).
//
// Feeds arbitrary bytes, split at an input-chosen point, through `FrameDecoder`; every message
// that validates must re-encode and decode to itself. Crashes, hangs and sanitizer reports are
// findings; a thrown `ProtocolError` is the expected answer to bad input.
import HPSyncProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrame(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let split = min(bytes.count, Int(first) * 3)
    var decoder = FrameDecoder()
    decoder.append(bytes[1..<max(1, split)])
    var frames: [Frame] = []
    do {
        while let frame = try decoder.next() { frames.append(frame) }
        if split < bytes.count { decoder.append(bytes[split...]) }
        while let frame = try decoder.next() { frames.append(frame) }
    } catch {
        _ = "\(error)"
    }
    for case .message(let message) in frames {
        let encoded = FrameEncoder.encode(message)
        var again = FrameDecoder()
        again.append(encoded)
        guard case .message(let decoded)?? = try? again.next(), decoded == message else {
            fatalError("message did not survive a round trip: \(message)")
        }
    }
    return 0
}
