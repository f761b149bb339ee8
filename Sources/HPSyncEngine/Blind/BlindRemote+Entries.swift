import HPSyncModel
import HPSyncProtocol
import HPSyncStore

extension BlindRemote {
    /// Fetches the entries of `rows` (at most 1024) and opens each under `seal`, with every
    /// check of Protocol.md 5.8.2: served at the listed version and photo, and sealed as listed.
    /// Each row's item, or what is wrong with it, in the rows' order.
    func openListed(
        _ rows: [Store.BlindMirrorRow], seal: BlindRecordSeal
    ) throws -> [(row: Store.BlindMirrorRow, item: Result<Item, BlindRecordSeal.Failure>)] {
        let objects = try get(rows.map(\.entry.id))
        return rows.map { row in
            guard let object = objects[row.entry.id], object.entry.version == row.entry.version,
                object.entry.photo == row.entry.photo
            else {
                return (
                    row,
                    .failure(.init("record \(row.entry.id) (seq \(row.entry.seq)) was listed but not served as listed"))
                )
            }
            do {
                return (row, .success(try seal.open(object)))
            } catch let failure as BlindRecordSeal.Failure {
                return (row, .failure(failure))
            } catch {
                return (row, .failure(.init("\(error)")))
            }
        }
    }
}
