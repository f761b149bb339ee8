import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// What a blind store checks of itself without any key (Protocol.md 5.8): every entry's sealed
/// record has a possible size, every sealed photo an entry names is there at its size, a head
/// exists once entries do; sealed photos no entry names are noted (an interrupted push leaves
/// one, and the next push that names it uses it). A store in packs names its packs and photos
/// only inside sealed data: each file's name and size must be those of a sealed pack or photo.
/// Whether the bytes are intact only a trusted node can tell: it opens them.
extension Store {
    func verifyBlind(into report: inout VerifyReport) throws {
        let (entries, head) = try read { db in
            (
                try Row.fetchAll(db, sql: "SELECT id, seq, length(sealed) AS size, photoID, photoSize FROM blindEntry"),
                try Int64.fetchOne(db, sql: "SELECT epoch FROM blindHead WHERE one = 1")
            )
        }
        report.blindEntriesChecked = entries.count
        var named: Set<String> = []
        for row in entries {
            let id = BlindID(bytes: row["id"] as Data)
            let size: Int64 = row["size"]
            // A sealed record is at least a nonce, one padded block and a tag; at most what a
            // BlindPut may carry (64 KiB, Protocol.md 7).
            if id == nil || size < BlindKeys.sealedRecordSize(plainSize: 0) || size > 64 << 10 {
                report.blindProblems.append(
                    "blind entry at seq \(row["seq"] as Int64) is malformed (\(size) sealed bytes); a push from a trusted node stores it again"
                )
            }
            guard let photoData = row["photoID"] as Data?, let photo = BlindID(bytes: photoData) else { continue }
            named.insert(photo.hex)
            let expected: Int64 = row["photoSize"]
            let actual = try? FileManager.default.attributesOfItem(atPath: sealedPhotoURL(photo).path)[.size] as? Int64
            if actual != expected {
                report.blindProblems.append(
                    "sealed photo \(photo) is \(actual.map { "\($0) bytes, not \(expected)" } ?? "missing"); a push from a trusted node that holds it stores it again"
                )
            }
        }
        if !entries.isEmpty && head == nil {
            report.blindProblems.append("the store holds entries but no head; a push from a trusted node writes one")
        }
        if entries.isEmpty {
            report.blindPhotosChecked = verifyStreams(.photo, into: &report)
        } else {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: sealedPhotoDirectory.path)) ?? []
            report.blindPhotosChecked = named.count
            for name in files.sorted() where !named.contains(name) && !name.hasPrefix(".tmp-") {
                report.blindNotes.append(
                    "leftover file sealed/\(name), named by no entry (an interrupted push leaves one); the next push that names it uses it"
                )
            }
        }
        report.blindPacksChecked = verifyStreams(.pack, into: &report)
    }

    /// Packs and the photos of a store in packs are named only inside sealed data, so the store
    /// checks each file's name and that its size is one a sealed stream of its kind can have;
    /// returns how many files it checked.
    private func verifyStreams(_ kind: SealedStreamKind, into report: inout VerifyReport) -> Int {
        let folder = sealedDirectory(kind)
        let where_ = folder.lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var checked = 0
        for name in names.sorted() {
            let size =
                (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path))?[
                    .size] as? Int64
            if name.hasPrefix(".tmp-") {
                report.blindNotes.append("leftover upload \(where_)/\(name) (an interrupted push leaves one)")
                continue
            }
            checked += 1
            if SHA256Digest(hex: name)?.hex != name || !BlindKeys.isSealedSize(size ?? 0, of: kind) {
                report.blindProblems.append(
                    "\(where_)/\(name) is not a sealed \(kind.noun) (\(size.map { "\($0) bytes" } ?? "unreadable")); a push from a trusted node stores it again"
                )
            }
        }
        return checked
    }
}
