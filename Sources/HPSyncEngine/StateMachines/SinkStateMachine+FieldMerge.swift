import HPSyncModel
import HPSyncProtocol
import HPSyncStore

// Version 5: the sink joins item states field by field (Protocol.md 5.9).
extension SinkStateMachine {
    /// Whether this session merges fields: both ends speak version 5.
    var mergesFields: Bool { configuration.version >= ProtocolLimits.fieldMergeVersion }

    /// The record to apply for `item`: joined with the store's state in a version-5 session
    /// (a whole record joins as one whose fields are all at its version), else applied when
    /// newer, as before.
    func incomingRecord(_ item: Item, _ image: StagedImage?) -> IncomingRecord {
        var record = IncomingRecord(item: item, image: image)
        if mergesFields {
            record.joinsFields = true
            record.mergeState = item.mergeState
        }
        return record
    }
}
