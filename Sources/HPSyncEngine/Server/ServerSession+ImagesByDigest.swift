import Foundation
import HPSyncProtocol
import HPSyncStore
import Logging

extension ServerSession {
    /// Version 3 (Protocol.md §5.7): before its PullRequest a client may ask for images by
    /// digest, any number of times, and may then end the session with EndSession instead of
    /// pulling. Answers each request like FetchImages and returns the PullRequest that follows,
    /// or nil after an EndSession. In a version-1 or -2 session the first message passes through.
    func serveImagesByDigest(
        _ first: Message, channel: any MessageChannel, version: UInt32, report: inout SyncReport, logger: Logger
    ) throws -> Message? {
        guard version >= ProtocolLimits.imagesByDigestVersion else { return first }
        var message = first
        var sender: ImageSender?
        while true {
            switch message {
            case .fetchImagesByDigest(let wanted):
                if sender == nil { sender = ImageSender(channel: channel, store: store, logger: logger) }
                for image in wanted { try sender!.send(image, report: &report) }
                message = try channel.receiveMessage(expecting: "FetchImagesByDigest, PullRequest or EndSession")
            case .endSession:
                return nil
            default:
                return message
            }
        }
    }
}
