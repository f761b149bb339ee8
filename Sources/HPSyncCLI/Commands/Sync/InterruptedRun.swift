import HPSyncEngine

/// A run that ended for a reason that may pass (peer down, connection cut, server busy), after
/// its retries: says that the store is consistent and what the next run will do.
struct InterruptedRun: Error, CustomStringConvertible {
    var underlying: any Error
    var retries: Int

    var description: String {
        let advice =
            retries == 0
            ? "add --retries N to ride out short outages"
            : "gave up after \(retries) retr\(retries == 1 ? "y" : "ies")"
        let text = "\(underlying)"
        let stop = text.last.map { ".?!".contains($0) } ?? true ? " " : ". "
        return text + stop + "The store is consistent; the next run resumes from the last committed page (\(advice))."
    }
}
