import HPSyncModel

/// What `Store.verify` found and, with repair, what it fixed.
public struct VerifyReport: Sendable, Hashable {
    /// Lines from SQLite's `integrity_check` other than "ok".
    public var integrityErrors: [String] = []
    /// Items whose image file is missing.
    public var missingImages: [ItemKey] = []
    /// Items whose image file's size or SHA-256 differs from the row.
    public var mismatchedImages: [ItemKey] = []
    /// Trash images (`trash/<hex>`) a trash entry names but that are missing.
    package var missingTrashImages: [String] = []
    /// Trash images whose size or SHA-256 differs from what their entries name.
    package var mismatchedTrashImages: [String] = []
    /// Kept photos that lost a clash (`trash/<hex>`) whose size or SHA-256 differs.
    package var mismatchedConflictPhotos: [String] = []
    /// Kept photos of deleted items (Protocol.md 5.9 "A tombstone's photo") that are damaged.
    package var mismatchedTombstonePhotos: [String] = []
    /// Files in `images/` that no row accounts for (not removed): what a crash or power cut
    /// between a delete's commit and its unlink leaves by design. A note, not a problem: nothing
    /// names them, and the daily sweep (or `verify --repair`) removes them.
    public var orphans: [String] = []
    /// Journaled image writes not yet finished (not rolled forward).
    package var pending: [ItemKey] = []
    /// Unaccounted files younger than the sweep age: probably another process's write in flight.
    package var inFlight: [String] = []
    /// What is wrong with this node's identity (its node ID is not its certificate's, the key
    /// and certificate do not match, the key is readable by others).
    package var identityProblems: [String] = []
    /// A blind store's findings: what it can check without any key (Protocol.md 5.8).
    package var blindProblems: [String] = []
    package var blindNotes: [String] = []
    package var blindEntriesChecked = 0
    package var blindPacksChecked = 0
    package var blindPhotosChecked = 0
    /// Store paths group or others can read (a warning: the store is not clean of secrets, but
    /// nothing is damaged), each with its mode.
    package var exposedPaths: [String] = []
    /// For each of `exposedPaths`, the shell command that makes it private.
    package var privacyCommands: [String] = []
    /// What repair did, one line each.
    public var repaired: [String] = []
    public var itemsChecked = 0
    public var imagesChecked = 0

    package init() {}

    /// No problem remains (in-flight files and repaired problems do not count).
    public var isClean: Bool {
        integrityErrors.isEmpty && missingImages.isEmpty && mismatchedImages.isEmpty && pending.isEmpty
            && identityProblems.isEmpty && missingTrashImages.isEmpty && mismatchedTrashImages.isEmpty
            && mismatchedConflictPhotos.isEmpty && mismatchedTombstonePhotos.isEmpty
            && blindProblems.isEmpty
    }

    /// One line per remaining problem, each saying what to do.
    public var problems: [String] {
        integrityErrors.map { "database integrity: \($0); restore the store from a peer" }
            + missingImages.map { "image file of \($0) is missing; \(Self.healing)" }
            + mismatchedImages.map { "image file of \($0) does not match its digest; \(Self.healing)" }
            + missingTrashImages.map { "trash image \($0) is missing; \(Self.trashHealing)" }
            + mismatchedTrashImages.map { "trash image \($0) does not match its digest; \(Self.trashHealing)" }
            + mismatchedConflictPhotos.map {
                "\($0), a photo that lost a clash, does not match its digest; `hp-sync verify --repair` copies it "
                    + "from a live photo with the same digest, and any edit of the clashing field resolves the clash"
            }
            + mismatchedTombstonePhotos.map {
                "\($0), the photo a deleted item keeps for a revival, does not match its digest; `hp-sync verify "
                    + "--repair` copies it from a live photo with the same digest, and a revival fetches it from a peer"
            }
            + pending.map { "unfinished image write for \($0); `hp-sync verify --repair` finishes it" }
            + identityProblems + blindProblems
    }

    /// One line per leftover that loses nothing and needs no action (the exit code stays 0).
    public var notes: [String] {
        blindNotes
            + orphans.map {
                "leftover file images/\($0), named by no item (an interrupted delete or write leaves one); "
                    + "the daily sweep or `hp-sync verify --repair` removes it"
            }
    }

    /// How to get an image back: from a peer by digest, or from the person's own copy.
    package static let healing =
        "`hp-sync verify --repair --from PEER` fetches it again (so does the next pull from a version-3 peer), "
        + "or set it with `hp-sync image set`"

    /// How to get a trash image back: from a live photo with its digest, or from a peer.
    package static let trashHealing =
        "`hp-sync verify --repair` copies it from a live photo with the same digest, "
        + "`hp-sync verify --repair --from PEER` fetches it by digest, or `hp-sync trash purge` drops the entries"

    /// Whether a peer could heal something (`verify --repair --from`).
    package var hasImagesToHeal: Bool {
        !(missingImages.isEmpty && mismatchedImages.isEmpty && missingTrashImages.isEmpty
            && mismatchedTrashImages.isEmpty)
    }

    /// One line per warning: what is not damaged but should be fixed.
    public var warnings: [String] {
        // Opening a store tightens it only when its folder is exposed, so the advice is a command
        // that always works for this path (or the repair, which walks every file).
        zip(exposedPaths, privacyCommands).map {
            "\($0) can be read by group or others; make it private with `\($1)` as the store's owner "
                + "(or run `hp-sync verify --repair`)"
        }
    }
}
